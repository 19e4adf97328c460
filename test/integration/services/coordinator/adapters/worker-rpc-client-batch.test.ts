// WorkerRpcClient.requestTaskSlots against real grpc-js WorkerServices on loopback: per-id replies
// classified like RequestTaskSlot's (a TaskError carries the status and business code the unary call would
// have returned), whole-call failures applied to every id, malformed answers treated as uncertain, and the
// fallback to one RequestTaskSlot per id for a Worker that answers UNIMPLEMENTED.
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workerServiceDefinition } from '../../../../../src/grpc/proto.js';
import type { WorkerServiceHandlers } from '../../../../../src/grpc/proto.js';
import { bindServer, grpcStatusError } from '../../../../../src/grpc/status.js';
import type { SlotGrantWire, SlotGrantWireOut } from '../../../../../src/grpc/wire-types.js';
import { requestSlotsOneByOne } from '../../../../../src/services/coordinator/adapters/slot-reserver.js';
import type { SlotReply } from '../../../../../src/services/coordinator/adapters/slot-reserver.js';
import {
  WorkerRpcClient,
  capacityOfWire,
  repliesOfGrants,
} from '../../../../../src/services/coordinator/adapters/worker-rpc-client.js';
import { freePort } from '../../../../support/ports.js';
import { BatchFakeWorker } from './batch-fakes.js';

const S = grpc.status;
const notUsed = (_call: unknown, cb?: unknown): void => {
  if (typeof cb === 'function') (cb as grpc.sendUnaryData<never>)(grpcStatusError(S.UNIMPLEMENTED, 'n/a'));
};

/** What each id's grant looks like, by the id's prefix. */
function grantFor(taskId: string): SlotGrantWire {
  const refuse = (code: string, status: number, message: string): SlotGrantWire => ({
    taskId,
    error: { code, status, message },
  });
  if (taskId.startsWith('full')) return refuse('NoSlot', S.RESOURCE_EXHAUSTED, 'no free slot');
  if (taskId.startsWith('drain')) return refuse('Unavailable', S.UNAVAILABLE, 'draining');
  if (taskId.startsWith('bad')) return refuse('InvalidArgument', S.INVALID_ARGUMENT, 'taskId too long');
  if (taskId.startsWith('odd')) return refuse('', S.ABORTED, 'aborted');
  if (taskId.startsWith('other'))
    return { taskId: 'someone-else', slotId: 's', state: 'TASK_STATE_ALLOCATED' };
  return { taskId, slotId: `slot-${taskId}`, state: 'TASK_STATE_ALLOCATED' };
}

/** The slot counts the fake Worker sends with a batch starting 'counted'. */
const COUNTS = { taskSlots: 8, reservedSlots: 2, runningTasks: 3, reclaimableSlots: 0, takenAtMs: 1234 };

const shape = (r: SlotReply) =>
  r.ok ? ['ok', r.grant.slotId] : [r.error.code, r.error.kind, r.error.grpcCode ?? null];

describe('WorkerRpcClient.requestTaskSlots', () => {
  const server = new grpc.Server();
  let addr: string;
  const seen: { taskIds: string[]; ttlMs: number }[] = [];
  const client = new WorkerRpcClient();

  beforeAll(async () => {
    const handlers: WorkerServiceHandlers = {
      RequestTaskSlots: (call, cb) => {
        const { taskIds, ttlMs } = call.request;
        seen.push({ taskIds: [...taskIds], ttlMs });
        if (taskIds[0] === 'hang') return;
        if (taskIds[0] === 'short') return cb(null, { grants: [grantFor('short')] });
        if (taskIds[0] === 'counted') {
          return cb(null, { grants: taskIds.map(grantFor), capacity: COUNTS });
        }
        if (taskIds[0] === 'whole-full') {
          return cb(grpcStatusError(S.RESOURCE_EXHAUSTED, 'no free slot', 'NoSlot'));
        }
        cb(null, { grants: taskIds.map(grantFor) });
      },
      RequestTaskSlot: notUsed,
      SubmitTask: notUsed,
      GetTaskResult: notUsed,
      WatchTasks: (call) => call.end(),
      RunTasks: (call) => call.end(),
    };
    server.addService(workerServiceDefinition, handlers);
    addr = `127.0.0.1:${await bindServer(server, '127.0.0.1:0')}`;
  });

  afterAll(() => {
    client.close();
    server.forceShutdown();
  });

  it('one reply per id in request order, each classified as RequestTaskSlot would be', async () => {
    const taskIds = ['a', 'full-1', 'drain-1', 'bad-1', 'odd-1', 'other-1', 'b'];
    const replies = await client.requestTaskSlots(addr, { taskIds, ttlMs: 5_000 }, { timeoutMs: 2_000 });
    expect(seen.at(-1)).toEqual({ taskIds, ttlMs: 5_000 });
    expect(replies.map(shape)).toEqual([
      ['ok', 'slot-a'],
      ['NoSlot', 'rejected', S.RESOURCE_EXHAUSTED],
      ['Unavailable', 'rejected', S.UNAVAILABLE],
      ['InvalidArgument', 'rejected', S.INVALID_ARGUMENT],
      ['SlotUncertain', 'uncertain', S.ABORTED],
      ['SlotUncertain', 'uncertain', null],
      ['ok', 'slot-b'],
    ]);
    expect(replies[0]).toEqual({
      ok: true,
      grant: { taskId: 'a', slotId: 'slot-a', state: 'TASK_STATE_ALLOCATED' },
    });
  });

  it("the Worker's slot counts come with every reply of the call; none from a Worker without them", async () => {
    const taskIds = ['counted', 'full-1'];
    const replies = await client.requestTaskSlots(addr, { taskIds, ttlMs: 5_000 }, { timeoutMs: 2_000 });
    expect(replies.map((r) => [shape(r)[0], r.capacity])).toEqual([
      ['ok', COUNTS],
      ['NoSlot', COUNTS],
    ]);
    const plain = await client.requestTaskSlots(addr, { taskIds: ['a'], ttlMs: 5_000 }, { timeoutMs: 2_000 });
    expect(plain[0]?.capacity).toBeUndefined();
  });

  it.each([
    ['absent', null, undefined],
    [
      'reclaimable capped at reserved',
      { taskSlots: 4, reservedSlots: 1, runningTasks: 0, reclaimableSlots: 3, takenAtMs: 9 },
      { taskSlots: 4, reservedSlots: 1, runningTasks: 0, reclaimableSlots: 1, takenAtMs: 9 },
    ],
    [
      'a negative count',
      { taskSlots: 4, reservedSlots: -1, runningTasks: 0, reclaimableSlots: 0, takenAtMs: 9 },
      undefined,
    ],
    [
      'no stamp',
      { taskSlots: 4, reservedSlots: 0, runningTasks: 0, reclaimableSlots: 0, takenAtMs: 0 },
      undefined,
    ],
    [
      'absurd slots',
      { taskSlots: 1e9, reservedSlots: 0, runningTasks: 0, reclaimableSlots: 0, takenAtMs: 9 },
      undefined,
    ],
  ])('capacityOfWire: %s', (_name, wire, want) => {
    expect(capacityOfWire(wire)).toEqual(want);
  });

  it('ids the Worker did not answer are uncertain (it may hold their slots)', async () => {
    const replies = await client.requestTaskSlots(
      addr,
      { taskIds: ['short', 'x', 'y'], ttlMs: 1 },
      { timeoutMs: 2_000 },
    );
    expect(replies.map(shape)).toEqual([
      ['ok', 'slot-short'],
      ['SlotUncertain', 'uncertain', null],
      ['SlotUncertain', 'uncertain', null],
    ]);
  });

  it('a whole-call refusal is that refusal for every id', async () => {
    const replies = await client.requestTaskSlots(
      addr,
      { taskIds: ['whole-full', 'z'], ttlMs: 1 },
      { timeoutMs: 2_000 },
    );
    expect(replies.map(shape)).toEqual([
      ['NoSlot', 'rejected', S.RESOURCE_EXHAUSTED],
      ['NoSlot', 'rejected', S.RESOURCE_EXHAUSTED],
    ]);
  });

  it('a hang past the deadline is uncertain for every id', async () => {
    const replies = await client.requestTaskSlots(
      addr,
      { taskIds: ['hang', 'q'], ttlMs: 1 },
      { timeoutMs: 150 },
    );
    expect(replies.map(shape)).toEqual([
      ['SlotUncertain', 'uncertain', S.DEADLINE_EXCEEDED],
      ['SlotUncertain', 'uncertain', S.DEADLINE_EXCEEDED],
    ]);
  });

  it('connection refused is a transport failure for every id (nothing reserved)', async () => {
    const closed = `127.0.0.1:${await freePort()}`;
    const replies = await client.requestTaskSlots(
      closed,
      { taskIds: ['a', 'b'], ttlMs: 1 },
      { timeoutMs: 2_000 },
    );
    expect(replies.map((r) => !r.ok && [r.error.code, r.error.kind])).toEqual([
      ['Unavailable', 'transport'],
      ['Unavailable', 'transport'],
    ]);
    client.forget(closed);
  });

  it('UNIMPLEMENTED: one RequestTaskSlot per id, and the next batch goes unary without asking again', async () => {
    const legacy = await new BatchFakeWorker('old', 'legacy').start();
    const own = new WorkerRpcClient();
    try {
      const first = await own.requestTaskSlots(
        legacy.addr,
        { taskIds: ['a', 'b', 'c'], ttlMs: 1 },
        { timeoutMs: 2_000 },
      );
      expect(first.map(shape)).toEqual([
        ['ok', 'old-a'],
        ['ok', 'old-b'],
        ['ok', 'old-c'],
      ]);
      const second = await own.requestTaskSlots(
        legacy.addr,
        { taskIds: ['d'], ttlMs: 1 },
        { timeoutMs: 2_000 },
      );
      expect(second.map(shape)).toEqual([['ok', 'old-d']]);
      expect(legacy.batchCalls).toHaveLength(1);
      expect(legacy.unaryCalls.sort()).toEqual(['a', 'b', 'c', 'd']);
    } finally {
      own.close();
      legacy.stop();
    }
  });
});

describe('repliesOfGrants', () => {
  const g = (over: Partial<SlotGrantWireOut>): SlotGrantWireOut => ({
    taskId: 't',
    slotId: 's',
    state: 'TASK_STATE_ALLOCATED',
    error: null,
    ...over,
  });

  it('accepts a refusal whose task id is empty (the proto leaves the other fields empty)', () => {
    const [r] = repliesOfGrants(
      ['t'],
      [
        g({
          taskId: '',
          slotId: '',
          error: { code: 'NoSlot', status: S.RESOURCE_EXHAUSTED, message: 'full' },
        }),
      ],
    );
    expect(!r!.ok && [r!.error.code, r!.error.kind, r!.error.message]).toEqual([
      'NoSlot',
      'rejected',
      'full',
    ]);
  });

  it('passes an empty slot id through (the machine treats it as uncertain unless the state is terminal)', () => {
    const [r] = repliesOfGrants(['t'], [g({ slotId: '', state: 'TASK_STATE_SUCCEEDED' })]);
    expect(r).toEqual({ ok: true, grant: { taskId: 't', slotId: '', state: 'TASK_STATE_SUCCEEDED' } });
  });

  it('ignores extra grants', () => {
    expect(repliesOfGrants(['t'], [g({}), g({ taskId: 'u' })])).toHaveLength(1);
  });
});

describe('requestSlotsOneByOne', () => {
  it("drops each unary call's counts: each misses the grants of the batch's other calls", async () => {
    const capacity = { taskSlots: 4, reservedSlots: 1, runningTasks: 0, reclaimableSlots: 0, takenAtMs: 5 };
    const replies = await requestSlotsOneByOne(
      {
        requestTaskSlot: (_addr, req) =>
          Promise.resolve({ ok: true, grant: { taskId: req.taskId, slotId: 's', state: 'x' }, capacity }),
      },
      'w',
      { taskIds: ['a', 'b'], ttlMs: 1 },
      { timeoutMs: 1 },
    );
    expect(replies.map((r) => [r.ok, r.capacity])).toEqual([
      [true, undefined],
      [true, undefined],
    ]);
  });
});
