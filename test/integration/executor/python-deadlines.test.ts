// The Python executor's cut-offs: a `while True:` call is cut off at the hard limit after its cancel
// (or its local safety net) while other calls complete; cancelling an async call; a sync call that
// checks ctx.cancelled; SIGKILL of the executor mid-call (the link reports it lost, nothing survives it).
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { eventually } from '../../support/eventually.js';
import type { ExecutorHarness } from './executor-harness.js';
import { PY_FIXTURES, SnapshotEpochs, pythonHarness } from './python-executor-harness.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const HARD_LIMIT_MS = 400;
const epochs = new SnapshotEpochs();
let h: ExecutorHarness;
let fx: string;

beforeAll(async () => {
  fx = epochs.take(PY_FIXTURES);
  h = await pythonHarness({
    functionsDir: PY_FIXTURES,
    epochs,
    threads: 2,
    cancelHardLimitMs: HARD_LIMIT_MS,
  }).start();
});

afterAll(async () => {
  await h?.stop();
});

/** Pids whose parent is `pid` (Linux /proc). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('python executor: deadlines and cancellation', () => {
  it('cuts off a while True: call at the hard limit while another call completes', async () => {
    const stuck = h.run({ function: 'hot_loop', codeEpoch: fx, callId: 'spin-1', budgetMs: 60_000 });
    await h.until(() => h.events.some((e) => e.type === 'callStarted' && e.callId === 'spin-1'));
    const started = h.events.find((e) => e.type === 'callStarted' && e.callId === 'spin-1') as {
      elapsedMs: number;
    };
    expect(started.elapsedMs).toBeGreaterThanOrEqual(25);
    // The other execution process serves calls while one spins.
    const t0 = performance.now();
    expect(await h.run({ function: 'sleepy', args: [30, 'meanwhile'], codeEpoch: fx })).toMatchObject({
      type: 'callCompleted',
      value: 'meanwhile',
    });
    expect(performance.now() - t0).toBeLessThan(1_000);
    const cancelledAt = performance.now();
    h.link.cancelCall('spin-1', 1, 'deadline');
    const ev = await stuck;
    const after = performance.now() - cancelledAt;
    expect(ev).toMatchObject({
      type: 'callFailed',
      kind: 'deadline',
      retryable: true,
      message: expect.stringContaining('cut off'),
    });
    expect(after).toBeGreaterThanOrEqual(HARD_LIMIT_MS - 5);
    expect(after).toBeLessThan(HARD_LIMIT_MS + 1_500);
    // The process was replaced: the executor keeps its two processes and keeps serving.
    expect(await h.run({ function: 'noop', codeEpoch: fx })).toMatchObject({ type: 'callCompleted' });
    await h.until(() => {
      const hb = h.events.filter((e) => e.type === 'heartbeat').at(-1) as { threads: number } | undefined;
      return hb?.threads === 2;
    });
  });

  it('the safety net cancels a spinning call that got no CancelCall (budget + max(1 s, budget))', async () => {
    const t0 = performance.now();
    const ev = await h.run({ function: 'hot_loop', codeEpoch: fx, budgetMs: 100 });
    const took = performance.now() - t0;
    expect(ev).toMatchObject({
      type: 'callFailed',
      kind: 'deadline',
      retryable: true,
      message: expect.stringContaining('safety net'),
    });
    expect(took).toBeGreaterThanOrEqual(1_100 + HARD_LIMIT_MS - 50);
    expect(took).toBeLessThan(1_100 + HARD_LIMIT_MS + 2_000);
  });

  it('cancelling an async call fails it with deadline at once (asyncio cancellation)', async () => {
    const call = h.run({ function: 'sleepy', args: [30_000], codeEpoch: fx, callId: 'sleep-1' });
    await h.until(() => h.events.some((e) => e.type === 'callStarted' && e.callId === 'sleep-1'));
    const t0 = performance.now();
    h.link.cancelCall('sleep-1', 1, 'task timed out');
    expect(await call).toMatchObject({
      type: 'callFailed',
      kind: 'deadline',
      retryable: true,
      message: expect.stringContaining('task timed out'),
    });
    expect(performance.now() - t0).toBeLessThan(HARD_LIMIT_MS);
  });

  it('a sync call that checks ctx.cancelled ends by itself, before the hard limit', async () => {
    const call = h.run({ function: 'polite_loop', codeEpoch: fx, callId: 'polite-1' });
    await h.until(() => h.events.some((e) => e.type === 'callStarted' && e.callId === 'polite-1'));
    const t0 = performance.now();
    h.link.cancelCall('polite-1', 1, 'fast fail');
    expect(await call).toMatchObject({ type: 'callFailed', kind: 'deadline', retryable: true });
    expect(performance.now() - t0).toBeLessThan(HARD_LIMIT_MS);
  });

  it('SIGKILL of the executor mid-call: the link reports it lost, its processes die with it', async () => {
    const pid = h.supervisor.pid!;
    const units = childrenOf(pid);
    expect(units).toHaveLength(2);
    const call = h.run({ function: 'hot_loop', codeEpoch: fx, callId: 'doomed-1', budgetMs: 60_000 });
    await h.until(() => h.events.some((e) => e.type === 'callStarted' && e.callId === 'doomed-1'));
    const readyBefore = h.count('executorReady');
    process.kill(pid, 'SIGKILL');
    expect(await call).toMatchObject({ type: 'callFailed', kind: 'executor_crash', retryable: true });
    expect(h.events).toContainEqual(expect.objectContaining({ type: 'executorLost', pid }));
    await eventually(() => units.every((u) => !alive(u)), {
      message: 'the execution processes exit with their router',
    });
    // The supervisor starts a new executor, which serves calls.
    await h.until(() => h.count('executorReady') > readyBefore);
    expect(await h.run({ function: 'noop', codeEpoch: fx })).toMatchObject({ type: 'callCompleted' });
  });
});
