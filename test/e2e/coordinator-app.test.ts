// The Coordinator app wiring: `blockx up`'s in-process registry (no etcd), the bundle deployment serving
// BundleCoordinatorService only, health following readiness, config errors, and the CLI entry
// (`coordinatorCommand`) running against a real etcd until told to stop.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coordinatorCommand } from '../../src/app/coordinator-command.js';
import { runCoordinator } from '../../src/services/coordinator/app/run-coordinator.js';
import type { RunningCoordinator } from '../../src/services/coordinator/app/run-coordinator.js';
import { InProcessRegistry } from '../../src/services/registry/in-process-registry.js';
import { resolveConfig } from '../../src/kernel/config.js';
import { parseConfigText } from '../../src/kernel/config-source.js';
import { ConfigError } from '../../src/kernel/errors.js';
import { createBundleCoordinatorClient, createCoordinatorClient, unaryCall } from '../../src/grpc/clients.js';
import { HealthClient, checkHealth } from '../../src/grpc/health.js';
import { SERVICE_NAMES } from '../../src/grpc/proto.js';
import { businessCodeOf } from '../../src/grpc/status.js';
import type { ReserveWorkerSlotResponseWireOut } from '../../src/grpc/wire-types.js';
import type { WorkerHeartbeat } from '../../src/contracts/heartbeat.js';
import { startEtcd } from '../support/etcd.js';
import { eventually } from '../support/eventually.js';

// No plugin dirs: \`blockx coordinator\` boots the kernel, plugins included, and this temp dir has none.
const YAML = `version: 1
plugins:
  dirs: []
deployments:
  block:
    kind: block
  bundle:
    kind: bundle
`;

function config(env: NodeJS.ProcessEnv = {}, deployment = 'block', yaml = YAML) {
  return resolveConfig(parseConfigText(yaml, '/tmp/blockx-app/blockx.config.yaml'), {
    deployments: [deployment],
    env: { COORDINATOR_LISTEN: '127.0.0.1:0', BLOCKX_LOG_LEVEL: 'silent', ...env },
  });
}

function hb(workerAddr: string): WorkerHeartbeat {
  return {
    workerAddr,
    taskSlots: 4,
    reservedSlots: 0,
    runningTasks: 0,
    cpuPercent: 0,
    memoryPercent: 0,
    memoryAvailableBytes: 1,
    memoryTotalBytes: 2,
    processRssBytes: 1,
    errorRate: 0,
    lastHeartbeatMs: Date.now(), // fresh for heartbeatTimeoutMs (10 s); a future stamp would be beyond the skew
  };
}

const waitFor = async (what: string, cond: () => Promise<boolean> | boolean, timeoutMs = 5_000) => {
  await eventually(cond, { timeoutMs, intervalMs: 20, message: `waiting for ${what}` });
};

type Reserve = (
  md: grpc.Metadata,
  o: grpc.CallOptions,
  cb: grpc.requestCallback<ReserveWorkerSlotResponseWireOut>,
) => grpc.ClientUnaryCall;

async function call(invoke: Reserve): Promise<{ code: number; business?: string; workerAddr?: string }> {
  try {
    const r = await unaryCall<ReserveWorkerSlotResponseWireOut>(invoke, { timeoutMs: 5_000 });
    return { code: 0, workerAddr: r.workerAddr };
  } catch (err) {
    return { code: (err as grpc.ServiceError).code, business: businessCodeOf(err) };
  }
}

describe('runCoordinator with the in-process registry', () => {
  let running: RunningCoordinator | undefined;
  afterAll(async () => {
    await running?.close();
  });

  it('serves CoordinatorService for a block deployment; health follows readiness', async () => {
    const registry = new InProcessRegistry();
    registry.simulateDisconnect(); // the registry is "down" at start
    running = await runCoordinator({
      config: config({ COORDINATOR_WATCH_GRACE_PERIOD_MS: '0' }),
      deployment: 'block',
      registry,
      reserver: {
        requestTaskSlot: async (addr, req) => ({
          ok: true,
          grant: { taskId: req.taskId, slotId: `s@${addr}`, state: '' },
        }),
      },
    });
    expect(running.service).toBe(SERVICE_NAMES.coordinator);
    expect(running.address).toMatch(/^127\.0\.0\.1:\d+$/);
    const health = new HealthClient(running.address, grpc.credentials.createInsecure());
    const client = createCoordinatorClient(running.address);
    try {
      expect(await checkHealth(health, SERVICE_NAMES.coordinator, 2_000)).toBe('NOT_SERVING');
      expect(await call((md, o, cb) => client.reserveWorkerSlot({ taskId: 't' }, md, o, cb))).toMatchObject({
        code: grpc.status.UNAVAILABLE,
      });
      await registry.writer().publish('/blockx/workers/', hb('10.9.0.1:9090'));
      registry.simulateReconnect();
      await waitFor('SERVING', async () => (await checkHealth(health, '', 2_000)) === 'SERVING');
      expect(await call((md, o, cb) => client.reserveWorkerSlot({ taskId: 't' }, md, o, cb))).toEqual({
        code: 0,
        workerAddr: '10.9.0.1:9090',
      });
      registry.simulateDisconnect(); // grace 0: unready from the next millisecond
      await waitFor(
        'NOT_SERVING',
        async () => (await checkHealth(health, SERVICE_NAMES.coordinator, 2_000)) === 'NOT_SERVING',
      );
    } finally {
      client.close();
      health.close();
      await running.close();
      running = undefined;
    }
  });

  it('serves only BundleCoordinatorService for a bundle deployment', async () => {
    const registry = new InProcessRegistry();
    await registry.writer().publish('/blockx/prod/lanes/default/bundle-workers/', hb('10.9.0.2:9090'));
    running = await runCoordinator({
      config: config({}, 'bundle'),
      deployment: 'bundle',
      registry,
      reserver: {
        requestTaskSlot: async (_addr, req) => ({
          ok: true,
          grant: { taskId: req.taskId, slotId: 'b', state: '' },
        }),
      },
    });
    expect(running.service).toBe(SERVICE_NAMES.bundleCoordinator);
    const bundle = createBundleCoordinatorClient(running.address);
    const block = createCoordinatorClient(running.address);
    try {
      await waitFor('ready', () => running?.isReady() === true);
      expect(await call((md, o, cb) => bundle.reserveWorkerSlot({ taskId: 't' }, md, o, cb))).toEqual({
        code: 0,
        workerAddr: '10.9.0.2:9090',
      });
      expect((await call((md, o, cb) => block.reserveWorkerSlot({ taskId: 't' }, md, o, cb))).code).toBe(
        grpc.status.UNIMPLEMENTED,
      );
    } finally {
      bundle.close();
      block.close();
      await running.close();
      running = undefined;
    }
  });

  it('refuses to start without any registry, naming the setting', async () => {
    const err = await runCoordinator({ config: config(), deployment: 'block' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).issues.map((i) => i.path)).toEqual(['registry.etcd.endpoints']);
  });

  it('refuses an unknown deployment', async () => {
    const err = await runCoordinator({
      config: config(),
      deployment: 'nope',
      registry: new InProcessRegistry(),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
  });
});

describe('coordinatorCommand (the `blockx coordinator` entry) on a real etcd', () => {
  let etcd: Awaited<ReturnType<typeof startEtcd>>;
  let dir: string;

  beforeAll(async () => {
    etcd = await startEtcd();
    dir = await mkdtemp(join(tmpdir(), 'blockx-coord-cli-'));
    await writeFile(join(dir, 'blockx.config.yaml'), YAML);
  });

  afterAll(async () => {
    await etcd?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('runs the bundle coordinator with env overrides until stopped, then exits 0', async () => {
    let stop!: (reason: string) => void;
    const until = new Promise<string>((r) => (stop = r));
    const port = await (await import('../support/ports.js')).freePort();
    const env = {
      ETCD_ENDPOINTS: etcd.endpoint,
      COORDINATOR_LISTEN: `127.0.0.1:${port}`,
      COORDINATOR_REGISTRY_PREFIXES: '/blockx/test/lanes/default/bundle-workers/',
      BLOCKX_LOG_LEVEL: 'silent',
    };
    const io = { stdout: () => undefined, stderr: () => undefined, env, cwd: () => dir };
    const exit = coordinatorCommand({ deployment: 'bundle' }, io, until);
    const health = new HealthClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    try {
      await waitFor(
        'SERVING',
        async () =>
          (await checkHealth(health, SERVICE_NAMES.bundleCoordinator, 1_000).catch(() => 'DOWN')) ===
          'SERVING',
        10_000,
      );
    } finally {
      health.close();
      stop('test');
    }
    expect(await exit).toBe(0);
  });

  it('rejects a registry prefix of the wrong kind with a config error', async () => {
    const io = {
      stdout: () => undefined,
      stderr: () => undefined,
      env: { ETCD_ENDPOINTS: etcd.endpoint, COORDINATOR_REGISTRY_PREFIXES: '/blockx/workers/' },
      cwd: () => dir,
    };
    await expect(coordinatorCommand({ deployment: 'bundle' }, io, Promise.resolve())).rejects.toBeInstanceOf(
      ConfigError,
    );
  });
});
