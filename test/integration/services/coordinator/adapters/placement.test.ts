// Placement through the real CoordinatorServer (docs/placement.md): concurrent reservations spread over
// idle Workers because every claim counts against free capacity before its RequestTaskSlot returns; each
// claim is settled once, whatever the outcome; and a BlockX client that runs out of attempts against a
// filtered fleet says why, with the Coordinator's numbers.
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { BlockxClient } from '../../../../../src/client/client.js';
import { BlockxClientError } from '../../../../../src/client/errors.js';
import { coordinatorServiceDefinition } from '../../../../../src/grpc/proto.js';
import { bindServer } from '../../../../../src/grpc/status.js';
import { CoordinatorServer } from '../../../../../src/services/coordinator/adapters/coordinator-server.js';
import type {
  SlotReply,
  SlotRequest,
  SlotRequestOptions,
} from '../../../../../src/services/coordinator/adapters/slot-reserver.js';
import { FakeReserver, NOW, hb, readyCore } from '../../../../unit/services/coordinator/adapters/fakes.js';
import type { Step } from '../../../../unit/services/coordinator/adapters/fakes.js';

/** A FakeReserver whose answers take `delayMs` (a real RPC's latency, so requests overlap). */
class SlowReserver extends FakeReserver {
  constructor(
    private readonly delayMs: number,
    script: Record<string, Step[]> = {},
  ) {
    super(script);
  }
  override async requestTaskSlot(a: string, r: SlotRequest, o: SlotRequestOptions): Promise<SlotReply> {
    await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    return super.requestTaskSlot(a, r, o);
  }
}

const tally = (addrs: readonly string[]) =>
  Object.fromEntries([...new Set(addrs)].sort().map((a) => [a, addrs.filter((x) => x === a).length]));

describe('CoordinatorServer placement', () => {
  it('64 concurrent reservations over 2 idle Workers land 32 / 32 (capacity)', async () => {
    const core = readyCore([hb('w1', 64), hb('w2', 64)]);
    const server = new CoordinatorServer({ core, reserver: new SlowReserver(5), clock: () => NOW });
    const results = await Promise.all(
      Array.from({ length: 64 }, (_, i) => server.reserveWorkerSlot(`burst-${i}`)),
    );
    const addrs = results.map((r) => (r.ok ? r.workerAddr : r.error.code));
    expect(tally(addrs)).toEqual({ w1: 32, w2: 32 });
    // Every claim settled: nothing pending, 32 local reservations each until a heartbeat shows them.
    for (const w of ['w1', 'w2']) {
      expect(core.getWorker(w)).toMatchObject({ pendingClaims: 0 });
      expect(core.getWorker(w)?.localReservedAtMs).toHaveLength(32);
    }
  });

  it.each<{ name: string; steps: Step[]; pending: number; local: number }>([
    { name: 'a slot', steps: ['ok'], pending: 0, local: 1 },
    { name: 'a full pool, then the next Worker', steps: ['noSlot'], pending: 0, local: 0 },
    { name: 'a transport failure', steps: ['transport'], pending: 0, local: 0 },
    { name: 'a retained result (no new slot)', steps: ['retained'], pending: 0, local: 0 },
    { name: 'still uncertain after the retry', steps: ['uncertain', 'uncertain'], pending: 0, local: 1 },
  ])('settles the claim on w1 exactly once: $name', async ({ steps, pending, local }) => {
    const core = readyCore([hb('w1', 8), hb('w2', 4)]);
    const server = new CoordinatorServer({
      core,
      reserver: new FakeReserver({ w1: steps }),
      clock: () => NOW,
    });
    await server.reserveWorkerSlot('t1');
    expect(core.getWorker('w1')?.pendingClaims).toBe(pending);
    expect(core.getWorker('w1')?.localReservedAtMs).toHaveLength(local);
    expect(core.getWorker('w2')?.pendingClaims).toBe(0);
  });

  it('settles the claim when the reserver throws', async () => {
    const core = readyCore([hb('w1', 8)]);
    const reserver = {
      requestTaskSlot: (): Promise<SlotReply> => Promise.reject(new Error('boom')),
    };
    const server = new CoordinatorServer({ core, reserver, clock: () => NOW });
    await expect(server.reserveWorkerSlot('t1')).rejects.toThrow('boom');
    expect(core.getWorker('w1')).toMatchObject({ pendingClaims: 0, localReservedAtMs: [NOW] });
  });

  it('affinity: the second request of a task id goes to the Worker of the first', async () => {
    const core = readyCore([hb('w1', 64), hb('w2', 64), hb('w3', 64)], { placement: 'affinity' });
    const server = new CoordinatorServer({ core, reserver: new SlowReserver(1), clock: () => NOW });
    for (let i = 0; i < 30; i++) {
      const first = await server.reserveWorkerSlot(`dup-${i}`);
      const second = await server.reserveWorkerSlot(`dup-${i}`);
      expect(first.ok && second.ok && first.workerAddr === second.workerAddr).toBe(true);
    }
  });
});

describe('a BlockX client against a filtered fleet', () => {
  const stops: (() => void)[] = [];
  afterEach(() => {
    for (const s of stops.splice(0)) s();
  });

  it('gives up with NO_CAPACITY and a message naming each reason with its numbers', async () => {
    const core = readyCore([
      hb('w1', 4, { errorRate: 0.62 }),
      hb('w2', 4, { errorRate: 0.55, cpuPercent: 0.95 }),
      hb('w3', 4, { runningTasks: 4 }),
    ]);
    const coordinator = new CoordinatorServer({ core, reserver: new FakeReserver(), clock: () => NOW });
    const grpcServer = new grpc.Server();
    grpcServer.addService(coordinatorServiceDefinition, coordinator.handlers());
    const port = await bindServer(grpcServer, '127.0.0.1:0');
    stops.push(() => grpcServer.forceShutdown());
    const client = new BlockxClient({
      coordinator: `127.0.0.1:${port}`,
      maxReserveAttempts: 2,
      sleep: async () => {},
      random: () => 0,
    });
    stops.push(() => client.close());

    const err = await client
      .run({
        taskId: 'filtered-1',
        functionCallConfig: { type: 'CallListCallConfig', config: { function: 'hello_world', callList: [] } },
        resultHandler: { type: 'ReturnValueResultHandler', config: {} },
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BlockxClientError);
    expect(err).toMatchObject({ code: 'NO_CAPACITY', businessCode: 'NoExecutableSlot', attempts: 2 });
    expect((err as Error).message).toBe(
      `ReserveWorkerSlot to 127.0.0.1:${port}: no executable slot: 3 workers — cpu 0.95 > 0.90 on 1 worker; ` +
        'error rate 0.62 > 0.50 on 2 workers; no free slots on 1 worker',
    );
  });
});
