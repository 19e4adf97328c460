// docs/security.md § Input bounds over real gRPC: hostile sizes are refused promptly with
// INVALID_ARGUMENT, and the connection stays usable. Before the bounds, a task id of ~80 KB+ was echoed
// in the status message; grpc-js then sent no trailers and that call, and every later call on the same
// connection, hung to its deadline.
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unaryCall } from '../../../../../../src/grpc/clients.js';
import type { WorkerServiceClient } from '../../../../../../src/grpc/proto.js';
import type {
  GetTaskResultResponseWireOut,
  RequestTaskSlotResponseWireOut,
  SubmitTaskResponseWireOut,
} from '../../../../../../src/grpc/wire-types.js';
import { MAX_STATUS_MESSAGE_BYTES } from '../../../../../../src/kernel/input-bounds.js';
import { MAX_WATCH_TASK_IDS } from '../../../../../../src/services/worker/core/index.js';
import { hello, rejection, startFixture, stopFixture, watchAll, type Fixture } from './grpc-fixture.js';

const MiB = 1024 * 1024;
/** Far below the deadline a wedged call would reach; a prompt refusal takes milliseconds. */
const PROMPT_MS = 5_000;
const timeout = { timeoutMs: PROMPT_MS };

const reserve = (c: WorkerServiceClient, taskId: string, ttlMs = 5_000) =>
  unaryCall<RequestTaskSlotResponseWireOut>(
    (md, o, cb) => c.requestTaskSlot({ taskId, ttlMs }, md, o, cb),
    timeout,
  );
const getResult = (c: WorkerServiceClient, taskId: string) =>
  unaryCall<GetTaskResultResponseWireOut>((md, o, cb) => c.getTaskResult({ taskId }, md, o, cb), timeout);
const submit = (c: WorkerServiceClient, taskId: string, slotId = '') =>
  unaryCall<SubmitTaskResponseWireOut>(
    (md, o, cb) => c.submitTask({ task: hello(taskId), slotId }, md, o, cb),
    timeout,
  );

async function expectInvalidArgument(p: Promise<unknown>, mentions: string): Promise<void> {
  const startedAt = Date.now();
  const r = await rejection(p);
  expect(r.code).toBe(grpc.status.INVALID_ARGUMENT);
  expect(r.business).toBe('InvalidArgument');
  expect(r.message).toContain(mentions);
  expect(Buffer.byteLength(r.message)).toBeLessThan(MAX_STATUS_MESSAGE_BYTES + 100);
  expect(Date.now() - startedAt).toBeLessThan(PROMPT_MS);
}

describe('input bounds over real gRPC (docs/security.md)', () => {
  let f: Fixture | undefined;
  beforeAll(async () => {
    f = await startFixture();
  });
  afterAll(() => stopFixture(f));

  it('a 1 MiB task_id to RequestTaskSlot is INVALID_ARGUMENT, and the connection still works', async () => {
    const c = f!.client;
    await expectInvalidArgument(reserve(c, 'x'.repeat(MiB)), 'taskId must be at most 256 bytes');
    const ok = await reserve(c, 'normal-after-huge-reserve');
    expect(ok.slotId).not.toBe('');
  });

  it('a 1 MiB task_id or slot_id is refused by SubmitTask and GetTaskResult too', async () => {
    const c = f!.client;
    await expectInvalidArgument(submit(c, 'x'.repeat(MiB)), 'taskId must be at most 256 bytes');
    await expectInvalidArgument(submit(c, 'ok-id', 's'.repeat(MiB)), 'slotId must be at most 256 bytes');
    await expectInvalidArgument(getResult(c, 'x'.repeat(MiB)), 'taskId must be at most 256 bytes');
    expect((await getResult(c, 'normal-after-huge-reserve')).taskId).toBe('normal-after-huge-reserve');
  });

  it('a ttl_ms of 2^53-1 is INVALID_ARGUMENT naming maxSlotTtlMs', async () => {
    await expectInvalidArgument(
      reserve(f!.client, 'forever', Number.MAX_SAFE_INTEGER),
      'ttlMs must be <= maxSlotTtlMs (60000)',
    );
  });

  it('a WatchTasks of 200,000 ids is INVALID_ARGUMENT naming the limit; the connection still works', async () => {
    const c = f!.client;
    const ids = Array.from({ length: 200_000 }, (_, i) => `w${i}`);
    const startedAt = Date.now();
    const err = await watchAll(c, ids).then(
      () => {
        throw new Error('expected the watch to fail');
      },
      (e: unknown) => e as grpc.ServiceError,
    );
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toContain(`at most ${MAX_WATCH_TASK_IDS} distinct ids, got 200000`);
    expect(Date.now() - startedAt).toBeLessThan(PROMPT_MS);

    // Duplicates collapse: the cap counts distinct ids, and each id gets one snapshot.
    const updates = await watchAll(c, ['unknown-a', 'unknown-a', 'unknown-b']);
    expect(updates.map((u) => [u.taskId, u.error])).toEqual([
      ['unknown-a', 'not_found'],
      ['unknown-b', 'not_found'],
    ]);
    expect((await reserve(c, 'normal-after-huge-watch')).slotId).not.toBe('');
  });
});
