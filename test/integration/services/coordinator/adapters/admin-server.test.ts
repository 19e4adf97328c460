// CoordinatorAdminService.GetClusterStatus over a real grpc-js server: the core's view on the wire, read
// under the CoordinatorServer's read lock, with each Worker's registry prefix when it can be told.
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import {
  adminServiceHandlers,
  type AdminServiceOptions,
} from '../../../../../src/services/coordinator/adapters/admin-server.js';
import { CoordinatorServer } from '../../../../../src/services/coordinator/adapters/coordinator-server.js';
import {
  coordinatorAdminServiceDefinition,
  SERVICE_NAMES,
  CoordinatorAdminServiceClient,
} from '../../../../../src/grpc/proto.js';
import { bindServer } from '../../../../../src/grpc/status.js';
import { unaryCall } from '../../../../../src/grpc/clients.js';
import type { GetClusterStatusResponse__Output } from '../../../../../src/generated/proto/blockx/coordinator/v1/GetClusterStatusResponse.js';
import { CoordinatorCore } from '../../../../../src/services/coordinator/core/coordinator-core.js';
import { FakeReserver, NOW, hb, readyCore } from '../../../../unit/services/coordinator/adapters/fakes.js';

const LEGACY = { prefix: '/blockx/workers/', format: 'legacy' } as const;
const V2 = { prefix: '/blockx/prod/lanes/default/workers/', format: 'v2' } as const;

const stops: (() => void)[] = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

async function start(server: CoordinatorServer, opts: AdminServiceOptions = {}) {
  const grpcServer = new grpc.Server();
  grpcServer.addService(
    coordinatorAdminServiceDefinition,
    adminServiceHandlers(server, { clock: () => NOW, ...opts }),
  );
  const port = await bindServer(grpcServer, '127.0.0.1:0');
  const client = new CoordinatorAdminServiceClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  stops.push(() => {
    client.close();
    grpcServer.forceShutdown();
  });
  return () =>
    unaryCall<GetClusterStatusResponse__Output>((md, o, cb) => client.getClusterStatus({}, md, o, cb), {
      timeoutMs: 5_000,
    });
}

function coordinator(
  workers = [
    hb('10.0.0.2:9090', 8, { reservedSlots: 2, runningTasks: 1 }),
    hb('10.0.0.1:9090', 4, { cpuPercent: 0.97 }),
  ],
) {
  return new CoordinatorServer({ core: readyCore(workers), reserver: new FakeReserver(), clock: () => NOW });
}

describe('CoordinatorAdminService.GetClusterStatus', () => {
  it('is served under its fixed method paths', () => {
    // The functions RPCs (docs/functions-deploy.md § blockx up without etcd) are additions.
    expect(Object.values(coordinatorAdminServiceDefinition).map((m) => m.path)).toEqual([
      `/${SERVICE_NAMES.coordinatorAdmin}/GetClusterStatus`,
      `/${SERVICE_NAMES.coordinatorAdmin}/DeployFunctions`,
      `/${SERVICE_NAMES.coordinatorAdmin}/UseFunctions`,
      `/${SERVICE_NAMES.coordinatorAdmin}/ListFunctions`,
    ]);
    expect(SERVICE_NAMES.coordinatorAdmin).toBe('blockx.coordinator.v1.CoordinatorAdminService');
  });

  it('answers with readiness, limits and one row per Worker (one prefix labels every Worker)', async () => {
    const call = await start(coordinator(), { prefixes: [LEGACY] });
    const res = await call();
    expect(res).toMatchObject({
      ready: true,
      unavailableReason: '',
      nowMs: NOW,
      initialized: true,
      watchDisconnectedAtMs: 0,
      registryPrefixes: ['/blockx/workers/'],
      limits: { heartbeatTimeoutMs: 10_000, slotTtlMs: 5_000, circuitBreakerThreshold: 3, cpuRedLine: 0.9 },
    });
    expect(res.workers).toHaveLength(2);
    expect(res.workers[0]).toMatchObject({
      workerAddr: '10.0.0.1:9090',
      registryPrefix: '/blockx/workers/',
      registryFormat: 'legacy',
      routable: false,
      notRoutableCode: 'OVERLOADED',
      notRoutableReason: 'above red line: cpu 0.97 > 0.90',
    });
    expect(res.workers[1]).toMatchObject({
      workerAddr: '10.0.0.2:9090',
      taskSlots: 8,
      reservedSlots: 2,
      runningTasks: 1,
      freeSlots: 5,
      cpuPercent: 0.1,
      memoryTotalBytes: 16_000_000_000,
      lastHeartbeatMs: NOW,
      heartbeatAgeMs: 0,
      breakerState: 'closed',
      breakerOpenUntilMs: 0,
      consecutiveFailures: 0,
      routable: true,
      notRoutableCode: '',
    });
  });

  it('reports an open breaker with its deadline', async () => {
    const server = coordinator([hb('w:1', 4)]);
    for (let i = 0; i < 3; i++) server.core.recordSlotRejection('w:1', NOW);
    const res = await (await start(server))();
    expect(res.workers[0]).toMatchObject({
      breakerState: 'open',
      breakerOpenUntilMs: NOW + 10_000,
      consecutiveFailures: 3,
      routable: false,
      notRoutableCode: 'BREAKER_OPEN',
    });
  });

  it('with several prefixes, labels Workers only through registryEntryOf', async () => {
    const plain = await (await start(coordinator(), { prefixes: [LEGACY, V2] }))();
    expect(plain.registryPrefixes).toEqual([LEGACY.prefix, V2.prefix]);
    expect(plain.workers.map((w) => w.registryPrefix)).toEqual(['', '']);

    const labelled = await (
      await start(coordinator(), {
        prefixes: [LEGACY, V2],
        registryEntryOf: (addr) => (addr === '10.0.0.1:9090' ? V2 : LEGACY),
      })
    )();
    expect(labelled.workers.map((w) => `${w.workerAddr} ${w.registryFormat}`)).toEqual([
      '10.0.0.1:9090 v2',
      '10.0.0.2:9090 legacy',
    ]);
  });

  it('a core without a view answers not ready with the reason', async () => {
    const fresh = new CoordinatorServer({ core: new CoordinatorCore(), reserver: new FakeReserver() });
    const res = await (await start(fresh))();
    expect(res).toMatchObject({
      ready: false,
      initialized: false,
      unavailableReason: 'worker view not initialized',
      workers: [],
    });
  });

  it('reads the core under the read lock: a writer holding the lock delays the answer', async () => {
    const server = coordinator();
    const call = await start(server);
    let release!: () => void;
    const held = server.lock.write(() => new Promise<void>((r) => (release = r)));
    let answered = false;
    const pending = call().then((r) => {
      answered = true;
      return r;
    });
    // The handler's read is queued behind the writer (no fixed sleep: poll the lock's queue).
    await expect.poll(() => server.lock.state.waiting).toBe(1);
    expect(answered).toBe(false);
    release();
    await held;
    expect((await pending).workers).toHaveLength(2);
  });
});
