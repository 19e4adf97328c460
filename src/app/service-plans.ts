// The service plans of `blockx worker` and `blockx coordinator` (`blockx up`'s is planUp in
// kernel/service-plan.ts): what the serviceAssembled hook receives. Derived from the config alone.
import type { BlockxConfig, DeploymentConfig } from '../kernel/config-types.js';
import { COORDINATOR_SERVICE_NAME, type PlannedService, type ServicePlan } from '../kernel/service-plan.js';

/** One Worker with its Executor and storage; the etcd registry when endpoints are set, else standalone. */
export function planWorker(config: BlockxConfig, deployment: string): ServicePlan {
  const dep = config.deployments[deployment] as DeploymentConfig;
  const etcd = config.registry.etcd.endpoints;
  const services: PlannedService[] = [
    ...(etcd.length > 0 ? [{ kind: 'registry', implementation: 'etcd', endpoints: etcd } as const] : []),
    { kind: 'storage', url: config.storage.url },
    {
      kind: 'worker',
      deployment,
      index: 0,
      listen: dep.worker.listen,
      registryPrefix: dep.worker.registryPrefix,
      taskSlots: dep.worker.taskSlots,
    },
    { kind: 'executor', deployment, workerIndex: 0, threads: dep.executor.threads },
  ];
  return { mode: 'worker', deployment, services };
}

/** One Coordinator watching the etcd registry. */
export function planCoordinator(config: BlockxConfig, deployment: string): ServicePlan {
  const dep = config.deployments[deployment] as DeploymentConfig;
  const etcd = config.registry.etcd.endpoints;
  return {
    mode: 'coordinator',
    deployment,
    services: [
      { kind: 'registry', implementation: 'etcd', endpoints: etcd },
      {
        kind: 'coordinator',
        deployment,
        service: COORDINATOR_SERVICE_NAME[dep.kind],
        listen: dep.coordinator.listen,
        registryPrefixes: dep.coordinator.registryPrefixes,
      },
    ],
  };
}
