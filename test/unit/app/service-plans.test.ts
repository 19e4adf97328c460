import { describe, expect, it } from 'vitest';
import { planCoordinator, planWorker } from '../../../src/app/service-plans.js';
import { resolveConfig } from '../../../src/kernel/config.js';
import { parseConfigText } from '../../../src/kernel/config-source.js';

const YAML = `version: 1
deployments:
  block:
    kind: block
  bundle:
    kind: bundle
`;

const config = (env: NodeJS.ProcessEnv = {}, deployment = 'block') =>
  resolveConfig(parseConfigText(YAML, '/tmp/blockx-plans/blockx.config.yaml'), {
    deployments: [deployment],
    env,
  });

describe('service plans', () => {
  it('a standalone worker: storage, worker, executor; no registry', () => {
    const plan = planWorker(config(), 'block');
    expect(plan.mode).toBe('worker');
    expect(plan.services.map((s) => s.kind)).toEqual(['storage', 'worker', 'executor']);
  });

  it('a worker on etcd plans the registry first', () => {
    const plan = planWorker(config({ ETCD_ENDPOINTS: 'http://127.0.0.1:2379' }), 'block');
    expect(plan.services[0]).toEqual({
      kind: 'registry',
      implementation: 'etcd',
      endpoints: ['http://127.0.0.1:2379'],
    });
  });

  it('a bundle coordinator serves BundleCoordinatorService', () => {
    const plan = planCoordinator(config({ ETCD_ENDPOINTS: 'http://127.0.0.1:2379' }, 'bundle'), 'bundle');
    expect(plan).toMatchObject({ mode: 'coordinator', deployment: 'bundle' });
    expect(plan.services[1]).toMatchObject({
      kind: 'coordinator',
      service: 'blockx.bundlecoordinator.v1.BundleCoordinatorService',
    });
  });
});
