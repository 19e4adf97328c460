// The plan of services a command will run, derived from the config alone (no IO). `blockx up` prints it;
// the service assembly walks it; the `serviceAssembled` hook receives it.
import type { BlockxConfig, DeploymentConfig } from './config-types.js';
import { redactText } from './redact.js';

export type PlannedService =
  | { kind: 'registry'; implementation: 'etcd' | 'in-process'; endpoints: readonly string[] }
  | {
      kind: 'coordinator';
      deployment: string;
      service: string;
      listen: string;
      registryPrefixes: readonly string[];
    }
  | {
      kind: 'worker';
      deployment: string;
      index: number;
      listen: string;
      registryPrefix: string;
      taskSlots: number;
    }
  | { kind: 'executor'; deployment: string; workerIndex: number; threads: number }
  | { kind: 'storage'; url: string };

export interface ServicePlan {
  readonly mode: 'up' | 'coordinator' | 'worker';
  readonly deployment: string;
  readonly services: readonly PlannedService[];
}

export const COORDINATOR_SERVICE_NAME = {
  block: 'blockx.coordinator.v1.CoordinatorService',
  bundle: 'blockx.bundlecoordinator.v1.BundleCoordinatorService',
} as const;

/** The one-machine cluster of `blockx up`: registry, storage, one coordinator, N workers each with an executor. */
export function planUp(config: BlockxConfig): ServicePlan {
  const name = config.up.deployment;
  const dep = config.deployments[name] as DeploymentConfig;
  const etcd = config.registry.etcd.endpoints;
  const services: PlannedService[] = [
    { kind: 'registry', implementation: etcd.length ? 'etcd' : 'in-process', endpoints: etcd },
    { kind: 'storage', url: config.storage.url },
    {
      kind: 'coordinator',
      deployment: name,
      service: COORDINATOR_SERVICE_NAME[dep.kind],
      listen: config.up.coordinatorListen,
      registryPrefixes: dep.coordinator.registryPrefixes,
    },
  ];
  for (let i = 0; i < config.up.workers; i++) {
    const port = config.up.workerBasePort === 0 ? 0 : config.up.workerBasePort + i;
    services.push({
      kind: 'worker',
      deployment: name,
      index: i,
      listen: `127.0.0.1:${port}`,
      registryPrefix: dep.worker.registryPrefix,
      taskSlots: dep.worker.taskSlots,
    });
    services.push({ kind: 'executor', deployment: name, workerIndex: i, threads: dep.executor.threads });
  }
  return { mode: 'up', deployment: name, services };
}

export function describePlannedService(s: PlannedService): string {
  switch (s.kind) {
    case 'registry':
      return s.implementation === 'etcd'
        ? `registry    etcd at ${s.endpoints.join(', ')}`
        : 'registry    in-process';
    case 'storage':
      return `storage     ${redactText(s.url)}`; // never print a database password
    case 'coordinator':
      return `coordinator ${s.service} on ${s.listen} watching ${s.registryPrefixes.join(', ')}`;
    case 'worker':
      return `worker #${s.index}   on ${s.listen.endsWith(':0') ? 'a free port' : s.listen}, ${s.taskSlots} task slots, registers under ${s.registryPrefix}`;
    case 'executor':
      return `executor    for worker #${s.workerIndex}, ${s.threads} threads`;
    default: {
      const _exhaustive: never = s;
      return String(_exhaustive);
    }
  }
}
