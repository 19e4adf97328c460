import { describe, expect, it } from 'vitest';
import { FAR, FakeExecutor, callList, coreWith, executes } from './harness.js';

describe('window ramp-up', () => {
  it('starts with the initial window, and each success frees its slot and grows the window by one', () => {
    const core = coreWith({ initialWindow: 16 });
    const ex = new FakeExecutor(core);
    const first = executes(
      ex.take(core.startCallPhase('t', callList(200), { deadlineMs: FAR, fastFail: true }, 0)),
    );
    expect(first.map((c) => c.callId)).toEqual(Array.from({ length: 16 }, (_, i) => `t/${i}`));
    expect(first.every((c) => c.attempt === 1 && c.budgetMs === 5_000 && c.depth === 0)).toBe(true);

    // Table: after k successes the window is 16 + k, and all of it is in flight.
    const rows = [
      { successes: 1, window: 17, newDispatches: 2 },
      { successes: 2, window: 18, newDispatches: 2 },
      { successes: 16, window: 32, newDispatches: 2 },
    ];
    let done = 0;
    for (const row of rows) {
      let last: number = 0;
      while (done < row.successes) {
        last = executes(ex.complete(`t/${done}`, 1)).length;
        done++;
      }
      expect(last).toBe(row.newDispatches);
      expect(core.taskStats('t')).toMatchObject({ window: row.window, inflight: row.window });
    }
  });

  it('doubles once per window of successes until the cap', () => {
    const core = coreWith({ initialWindow: 16, taskMaxInflightCalls: 100 });
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(1_000), { deadlineMs: FAR }, 0));
    const windows: number[] = [];
    for (let wave = 0; wave < 4; wave++) {
      const inWave = [...ex.live.keys()];
      for (const id of inWave) ex.complete(id, 1);
      windows.push(core.taskStats('t')!.window);
    }
    expect(windows).toEqual([32, 64, 100, 100]);
  });

  it('halves on a retryable failure, once per generation, then grows by one per window of successes', () => {
    const core = coreWith({ initialWindow: 16 });
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(100), { deadlineMs: FAR }, 0));
    const crash = { kind: 'executor_crash' as const, retryable: true, message: 'x' };
    // Three failures of attempts dispatched in the same generation: one halving.
    for (const id of ['t/0', 't/1', 't/2']) ex.take(core.callFailed(id, 1, crash, 1));
    expect(core.taskStats('t')).toMatchObject({ window: 8, inflight: 13 });
    // Nothing new is dispatched until in-flight drops below the window (steady growth: +1 per 8).
    for (let i = 3; i < 8; i++) expect(executes(ex.complete(`t/${i}`, 2))).toEqual([]);
    expect(core.taskStats('t')).toMatchObject({ window: 8, inflight: 8 });
    expect(executes(ex.complete('t/8', 3))).toHaveLength(1);
    expect(executes(ex.complete('t/9', 3))).toHaveLength(1);
    expect(executes(ex.complete('t/10', 3))).toHaveLength(2); // 8th success since the halving: window 9
    expect(core.taskStats('t')).toMatchObject({ window: 9, inflight: 9 });
  });

  it('does not shrink on a non-retryable failure of a child (no load signal)', () => {
    const core = coreWith({ initialWindow: 4 });
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(10), { deadlineMs: FAR }, 0));
    ex.take(core.callWaiting('t/0', 1, { kind: 'subcall', function: 'g', args: [] }, 1));
    ex.take(core.callFailed('t/0.1', 1, { kind: 'user', retryable: false, message: 'boom' }, 2));
    expect(core.taskStats('t')!.window).toBe(4);
  });

  it('never dispatches while the executor is not ready, then fills the window at once', () => {
    const core = coreWith({ initialWindow: 8 }, false);
    const ex = new FakeExecutor(core);
    expect(ex.take(core.startCallPhase('t', callList(20), { deadlineMs: FAR }, 0))).toEqual([]);
    expect(executes(ex.take(core.executorReady(5)))).toHaveLength(8);
  });
});

describe('in-flight cap', () => {
  it('never exceeds taskMaxInflightCalls (1024) with 5,000 calls, and reaches it', () => {
    const core = coreWith({ initialWindow: 16, taskMaxInflightCalls: 1_024 });
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(5_000), { deadlineMs: FAR }, 0));
    let maxInflight = 0;
    let step = 0;
    while (!ex.converged.has('t')) {
      // Complete the most recent attempt first half the time, the oldest otherwise: irregular order.
      const ids = [...ex.live.keys()];
      const id = step++ % 2 === 0 ? ids[0]! : ids[ids.length - 1]!;
      ex.complete(id, step);
      const stats = core.taskStats('t');
      if (stats !== undefined) {
        expect(stats.inflight).toBeLessThanOrEqual(1_024);
        expect(stats.window).toBeLessThanOrEqual(1_024);
        expect(ex.live.size).toBe(stats.inflight);
        maxInflight = Math.max(maxInflight, stats.inflight);
      }
    }
    expect(maxInflight).toBe(1_024);
    expect(ex.converged.get('t')?.outputs).toHaveLength(5_000);
  });

  it('clamps an initial window above the cap', () => {
    const core = coreWith({ initialWindow: 5_000, minWindow: 1, taskMaxInflightCalls: 1_024 });
    const cmds = core.startCallPhase('t', callList(5_000), { deadlineMs: FAR }, 0);
    expect(executes(cmds)).toHaveLength(1_024);
  });

  it('keeps tasks independent: each has its own window', () => {
    const core = coreWith({ initialWindow: 3 });
    expect(executes(core.startCallPhase('a', callList(10), { deadlineMs: FAR }, 0))).toHaveLength(3);
    expect(executes(core.startCallPhase('b', callList(10), { deadlineMs: FAR }, 0))).toHaveLength(3);
    expect(core.stats()).toMatchObject({ tasks: 2, inflight: 6 });
  });
});
