// runMany: bounded concurrency, per-task outcomes, cancellation of what has not started.
import { describe, expect, it } from 'vitest';
import { BlockxClientError } from '../../../src/client/errors.js';
import { runMany } from '../../../src/client/run-many.js';
import type { ClientTaskInput, TaskRunResult } from '../../../src/client/types.js';

const task = (taskId: string) => ({ taskId, functionCallConfig: { type: 'X', config: {} } });

/** A fake client whose runs finish when the test says so. */
function fakeClient() {
  const waiting = new Map<string, { resolve: (r: TaskRunResult) => void; reject: (e: unknown) => void }>();
  let inFlight = 0;
  let maxInFlight = 0;
  return {
    waiting,
    get maxInFlight() {
      return maxInFlight;
    },
    run(t: ClientTaskInput): Promise<TaskRunResult> {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      return new Promise<TaskRunResult>((resolve, reject) => {
        waiting.set(t.taskId as string, {
          resolve: (r) => (inFlight--, resolve(r)),
          reject: (e) => (inFlight--, reject(e)),
        });
      });
    },
  };
}

const ok = (taskId: string) => ({ taskId, success: true, state: 'SUCCEEDED' }) as unknown as TaskRunResult;
const flush = () => new Promise<void>((r) => setImmediate(r));

describe('runMany', () => {
  it('keeps at most `concurrency` tasks in flight and reports each outcome; an error stops only its task', async () => {
    const client = fakeClient();
    const settled: string[] = [];
    const all = runMany(client, ['a', 'b', 'c', 'd', 'e'].map(task), {
      concurrency: 2,
      onSettled: (o) => settled.push(o.ok ? o.result.taskId : `${o.taskId}!${o.error.code}`),
    });
    await flush();
    expect([...client.waiting.keys()]).toEqual(['a', 'b']);
    client.waiting.get('b')?.reject(new BlockxClientError('NO_CAPACITY', 'full'));
    await flush();
    expect([...client.waiting.keys()]).toEqual(['a', 'b', 'c']);
    for (const id of ['a', 'c']) client.waiting.get(id)?.resolve(ok(id));
    await flush();
    for (const id of ['d', 'e']) client.waiting.get(id)?.resolve(ok(id));
    const outcomes = await all;
    expect(client.maxInFlight).toBe(2);
    expect(settled).toEqual(['b!NO_CAPACITY', 'a', 'c', 'd', 'e']);
    expect(outcomes.map((o) => o.index)).toEqual([0, 1, 2, 3, 4]);
  });

  it('after abort, tasks not started settle as CANCELLED without a call', async () => {
    const client = fakeClient();
    const abort = new AbortController();
    const all = runMany(client, ['a', 'b', 'c'].map(task), { concurrency: 1, signal: abort.signal });
    await flush();
    abort.abort();
    client.waiting.get('a')?.resolve(ok('a'));
    const outcomes = await all;
    expect([...client.waiting.keys()]).toEqual(['a']);
    expect(outcomes.map((o) => (o.ok ? 'ok' : o.error.code))).toEqual(['ok', 'CANCELLED', 'CANCELLED']);
  });

  it('rejects a concurrency below 1', async () => {
    await expect(runMany(fakeClient(), [task('a')], { concurrency: 0 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });
});
