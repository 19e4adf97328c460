// Streaming Calls phases (BlockBundleCallConfig with stream.enabled): ExecutorCallRunner.runStream over a
// fake link on virtual time, and the CallStreamFeeder's backpressure against a fake target.
import { argsValuesOf } from '../../../../../src/contracts/call-args.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CallSpec } from '../../../../../src/kernel/plugin-types.js';
import {
  CallStreamFeeder,
  type StreamTarget,
} from '../../../../../src/services/call-host/adapters/call-stream-feeder.js';
import type { ExecuteCallCommand } from '../../../../../src/services/call-host/adapters/executor-link.js';
import { completed, failed, setup, task, track } from './runner-harness.js';

/** Lets every queued microtask (async generator steps, runner re-arms) run: one macrotask turn. */
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** An async source of `n` calls that records how far it was pulled and whether it was closed. */
function source(n: number, opts: { failAt?: number; error?: unknown } = {}) {
  const state = { pulled: 0, closed: false };
  async function* gen(): AsyncGenerator<CallSpec> {
    try {
      for (let i = 0; i < n; i++) {
        if (i === opts.failAt) throw opts.error ?? new Error('scan broke');
        state.pulled = i + 1;
        yield { function: 'noop', args: [i] };
      }
    } finally {
      state.closed = true;
    }
  }
  return { state, iterable: gen() };
}

/** Completes every executed call not completed yet, in order, until the run settles or `max` rounds pass. */
async function completeAll(
  runner: ReturnType<typeof setup>['runner'],
  link: ReturnType<typeof setup>['link'],
  value: (cmd: ExecuteCallCommand) => unknown = (c) => argsValuesOf(c.args)[0],
  max = 10_000,
): Promise<void> {
  let done = 0;
  for (let round = 0; round < max; round++) {
    await flush();
    if (done === link.executed.length) return;
    while (done < link.executed.length) {
      const cmd = link.executed[done++]!;
      runner.handleEvent(completed(cmd, value(cmd)));
    }
  }
}

describe('ExecutorCallRunner.runStream', () => {
  it('dispatches calls while the source produces them and returns outputs in stream order', async () => {
    const { link, runner } = setup();
    const src = source(300);
    const run = track(runner.runStream(task(), src.iterable));
    await flush();
    // Calls are at the executor before the source is exhausted.
    expect(link.executed.length).toBeGreaterThan(0);
    await completeAll(runner, link);
    await run.done;
    expect(run.outcome).toMatchObject({ success: true });
    expect(run.outcome?.outputs).toEqual(Array.from({ length: 300 }, (_, i) => i));
    expect(src.state.closed).toBe(true);
  });

  it('an empty stream converges with success and no outputs', async () => {
    const { runner } = setup();
    const outcome = await runner.runStream(task(), source(0).iterable);
    expect(outcome).toEqual({ success: true, retryable: false, outputs: [] });
  });

  it('a failing call stops the scan (iterator closed) and fails the phase with CALL_FAILED', async () => {
    const { link, runner } = setup({ maxAttempts: 1 });
    const src = source(100_000);
    const run = track(runner.runStream(task(), src.iterable));
    await flush();
    runner.handleEvent(failed(link.executed[0]!, 'user', false, 'bad row'));
    await run.done;
    await flush();
    expect(run.outcome).toMatchObject({ success: false, failureCode: 'CALL_FAILED', retryable: false });
    expect(src.state.closed).toBe(true);
    expect(src.state.pulled).toBeLessThan(100_000);
  });

  it.each([
    ['a retryable storage error', { retryable: true, code: 'CONNECTION' }, true],
    ['a non-retryable error', { retryable: false, code: 'BAD_VALUE' }, false],
    ['an unclassified error', {}, false],
  ])(
    '%s from the scan fails the phase BUILDER_FAILED, retryable as it says',
    async (_n, fields, retryable) => {
      const { link, runner } = setup();
      const error = Object.assign(new Error('scan broke'), fields);
      const run = track(runner.runStream(task(), source(500, { failAt: 200, error }).iterable));
      await completeAll(runner, link);
      await run.done;
      expect(run.outcome).toMatchObject({ success: false, failureCode: 'BUILDER_FAILED', retryable });
      expect(run.outcome?.message).toContain('scan broke');
      expect(runner.activeTasks).toBe(0);
    },
  );

  it('aborting the task signal cancels the phase and closes the source', async () => {
    const { runner } = setup();
    const ac = new AbortController();
    const src = source(1_000_000);
    const run = track(runner.runStream(task('t1', ac.signal), src.iterable));
    await flush();
    ac.abort();
    await run.done;
    await flush();
    expect(run.outcome).toMatchObject({ success: false, failureCode: 'CANCELLED' });
    expect(src.state.closed).toBe(true);
  });

  it('never pulls more than the high-water mark ahead of dispatch (bounded memory)', async () => {
    const { link, runner } = setup();
    const highWater = 2 * runner.core.config.taskMaxInflightCalls;
    const src = source(50_000);
    const run = track(runner.runStream(task(), src.iterable));
    let maxAhead = 0;
    let done = 0;
    for (let round = 0; round < 100_000 && run.outcome === undefined; round++) {
      await flush();
      maxAhead = Math.max(maxAhead, src.state.pulled - link.executed.length);
      // Complete a small slice per round, so the source has to wait for the executor.
      const until = Math.min(link.executed.length, done + 64);
      while (done < until) runner.handleEvent(completed(link.executed[done++]!, null));
    }
    await run.done;
    expect(run.outcome).toMatchObject({ success: true });
    expect(run.outcome?.outputs).toHaveLength(50_000);
    // Undispatched calls never exceed the high-water mark plus one batch in hand (a page's worth).
    expect(maxAhead).toBeLessThanOrEqual(highWater + Math.max(64, runner.core.config.callPageRows));
  });
});

describe('CallStreamFeeder', () => {
  /** A target whose backlog the test drains by hand. */
  function fakeTarget() {
    const t = {
      appended: 0,
      dispatched: 0,
      finished: 0,
      appending: true,
      maxPending: 0,
      target: undefined as unknown as StreamTarget,
    };
    t.target = {
      isAppending: () => t.appending,
      rootsPending: () => t.appended - t.dispatched,
      append: (_id, calls) => {
        t.appended += calls.length;
        t.maxPending = Math.max(t.maxPending, t.appended - t.dispatched);
      },
      finish: () => {
        t.finished += 1;
        t.appending = false;
      },
    };
    return t;
  }

  it('backlog never exceeds highWater + batch for any drain pattern (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 3_000 }),
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 2, max: 300 }),
        fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 20 }),
        async (n, batch, highWater, drains) => {
          const t = fakeTarget();
          const feeder = new CallStreamFeeder(t.target, { batch, highWater });
          const fed = feeder.feed('t', source(n).iterable);
          let settled = false;
          void fed.then(() => (settled = true));
          for (let i = 0; !settled && i < 10_000; i++) {
            await flush();
            t.dispatched = Math.min(t.appended, t.dispatched + drains[i % drains.length]!);
            feeder.progress();
          }
          expect(await fed).toEqual({});
          expect(t.appended).toBe(n);
          expect(t.finished).toBe(1);
          expect(t.maxPending).toBeLessThanOrEqual(highWater + batch);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('stops without finishing when the task stops appending, and closes the iterator', async () => {
    const t = fakeTarget();
    const feeder = new CallStreamFeeder(t.target, { batch: 10, highWater: 20 });
    const src = source(1_000);
    const fed = feeder.feed('t', src.iterable);
    await flush();
    t.appending = false;
    feeder.progress();
    expect(await fed).toEqual({});
    expect(t.finished).toBe(0);
    expect(src.state.closed).toBe(true);
    expect(feeder.waiting).toBe(0);
  });

  it('reports an append that throws (an invalid call) as the feed error', async () => {
    const t = fakeTarget();
    const boom = new Error('call 3 has no function');
    t.target.append = () => {
      throw boom;
    };
    const feeder = new CallStreamFeeder(t.target, { batch: 1 });
    expect(await feeder.feed('t', source(5).iterable)).toEqual({ error: boom });
  });
});
