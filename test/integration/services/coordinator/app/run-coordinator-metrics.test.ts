// runCoordinator's metrics over real HTTP: the in-process registry, a fake SlotReserver, one
// ReserveWorkerSlot through gRPC, then a scrape of `prometheusListen`.
import { afterEach, describe, expect, it } from 'vitest';
import { createCoordinatorClient, unaryCall } from '../../../../../src/grpc/clients.js';
import type { ReserveWorkerSlotResponseWireOut } from '../../../../../src/grpc/wire-types.js';
import { resolveConfig } from '../../../../../src/kernel/config.js';
import { parseConfigText } from '../../../../../src/kernel/config-source.js';
import {
  runCoordinator,
  type RunningCoordinator,
} from '../../../../../src/services/coordinator/app/run-coordinator.js';
import { InProcessRegistry } from '../../../../../src/services/registry/in-process-registry.js';
import { hb } from '../../../../unit/services/coordinator/adapters/fakes.js';
import { exposedSample } from '../../../../unit/kernel/observability/metric-values.js';
import { canListen, freePort } from '../../../../support/ports.js';

const config = resolveConfig(
  parseConfigText('version: 1\ndeployments:\n  block:\n    kind: block\n', '/tmp/bx/blockx.config.yaml'),
  { deployments: ['block'], env: { COORDINATOR_LISTEN: '127.0.0.1:0', BLOCKX_LOG_LEVEL: 'silent' } },
);

let running: RunningCoordinator | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise<void>((r) => setImmediate(r));
  if (!cond()) throw new Error(`never became true: ${what}`);
}

describe('runCoordinator metrics', () => {
  it('serves reservations and the fleet on prometheusListen, labelled with the Coordinator address', async () => {
    const registry = new InProcessRegistry();
    await registry
      .writer()
      .publish('/blockx/workers/', hb('10.9.0.1:9090', 4, { lastHeartbeatMs: Date.now() }));
    registry.putRaw('/blockx/workers/garbage:1', '{not json'); // skipped, and counted
    running = await runCoordinator({
      config,
      deployment: 'block',
      registry,
      reserver: {
        requestTaskSlot: async (addr, req) => ({
          ok: true,
          grant: { taskId: req.taskId, slotId: `s@${addr}`, state: '' },
        }),
      },
      prometheusListen: '127.0.0.1:0',
    });
    const c = running;
    await until(() => c.isReady(), 'coordinator ready');
    const client = createCoordinatorClient(c.address);
    try {
      const r = await unaryCall<ReserveWorkerSlotResponseWireOut>((md, o, cb) =>
        client.reserveWorkerSlot({ taskId: 'task-1' }, md, o, cb),
      );
      expect(r.workerAddr).toBe('10.9.0.1:9090');
    } finally {
      client.close();
    }
    const server = c.metricsServer;
    expect(server?.address).toMatch(/^127\.0\.0\.1:\d+$/);
    const res = await fetch(`http://${server!.address}/metrics`);
    expect(res.status).toBe(200);
    const body = await res.text();
    const labels = { service: 'coordinator', deployment: 'block', instance: c.address };
    expect(exposedSample(body, 'blockx_coordinator_reserve_total', { ...labels, outcome: 'ok' })).toBe(1);
    expect(
      exposedSample(body, 'blockx_coordinator_reserve_total', { ...labels, outcome: 'unavailable' }),
    ).toBe(0);
    expect(exposedSample(body, 'blockx_coordinator_reserve_duration_seconds_count', labels)).toBe(1);
    expect(exposedSample(body, 'blockx_coordinator_candidates_tried_total', labels)).toBe(1);
    expect(exposedSample(body, 'blockx_coordinator_workers', { ...labels, state: 'routable' })).toBe(1);
    expect(exposedSample(body, 'blockx_coordinator_registry_workers', { ...labels, format: 'legacy' })).toBe(
      1,
    );
    expect(exposedSample(body, 'blockx_coordinator_registry_workers', { ...labels, format: 'v2' })).toBe(0);
    expect(
      exposedSample(body, 'blockx_coordinator_registry_skipped_total', { ...labels, reason: 'unparseable' }),
    ).toBe(1);
    expect(
      exposedSample(body, 'blockx_coordinator_registry_skipped_total', { ...labels, reason: 'no_lease' }),
    ).toBe(0);
    expect(exposedSample(body, 'blockx_coordinator_ready', labels)).toBe(1);
    expect(exposedSample(body, 'blockx_coordinator_breaker_open', labels)).toBe(0);
    await c.close();
    running = undefined;
    await expect(fetch(`http://${server!.address}/metrics`)).rejects.toThrow();
  });

  it('an invalid prometheusListen fails the start and leaves nothing running', async () => {
    const port = await freePort();
    const onPort = resolveConfig(
      parseConfigText('version: 1\ndeployments:\n  block:\n    kind: block\n', '/tmp/bx/blockx.config.yaml'),
      {
        deployments: ['block'],
        env: { COORDINATOR_LISTEN: `127.0.0.1:${port}`, BLOCKX_LOG_LEVEL: 'silent' },
      },
    );
    await expect(
      runCoordinator({
        config: onPort,
        deployment: 'block',
        registry: new InProcessRegistry(),
        prometheusListen: 'nope',
      }),
    ).rejects.toMatchObject({ code: 'METRICS_ADDRESS_INVALID' });
    // The gRPC server had bound its port: the failed start closed it.
    expect(await canListen(port)).toBe(true);
  });
});
