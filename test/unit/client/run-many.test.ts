// runMany: bounded concurrency, per-task outcomes, cancellation of what has not started.
import { getEventListeners } from 'node:events';
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

  it("64 tasks listening to the signal raise no listener-leak warning; an abort still reaches each, and no listener stays on the caller's signal", async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error): number => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const reached: string[] = [];
      const client = {
        run: (t: ClientTaskInput, o?: { signal?: AbortSignal }) =>
          new Promise<TaskRunResult>((_resolve, reject) =>
            o?.signal?.addEventListener('abort', () => {
              reached.push(t.taskId as string);
              reject(new BlockxClientError('CANCELLED', 'cancelled'));
            }),
          ),
      };
      const abort = new AbortController();
      const ids = Array.from({ length: 64 }, (_, i) => `t${i}`);
      const all = runMany(client, ids.map(task), { concurrency: 64, signal: abort.signal });
      await flush();
      abort.abort();
      const outcomes = await all;
      await flush(); // a warning is emitted on the next tick
      expect(reached.sort()).toEqual([...ids].sort());
      expect(outcomes.every((o) => !o.ok && o.error.code === 'CANCELLED')).toBe(true);
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
      // Finished without an abort: nothing is left listening on the caller's signal.
      const kept = new AbortController();
      const finishing = fakeClient();
      const done = runMany(finishing, [task('x')], { concurrency: 1, signal: kept.signal });
      await flush();
      expect(getEventListeners(kept.signal, 'abort')).toHaveLength(1);
      finishing.waiting.get('x')?.resolve(ok('x'));
      await done;
      expect(getEventListeners(kept.signal, 'abort')).toHaveLength(0);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('rejects a concurrency below 1', async () => {
    await expect(runMany(fakeClient(), [task('a')], { concurrency: 0 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });
});
