// Timers on virtual time: slot leases (and SLOT_LOST), task timeouts, the deadline check before Calls,
// result retention, and nextDeadline.

import { describe, expect, it } from 'vitest';
import {
  TaskState,
  WorkerErrorCode,
  type WorkerCore,
} from '../../../../../src/services/worker/core/index.js';
import {
  admissionError,
  commandOf,
  expectFailed,
  makeCore,
  taskInput,
  toBuilder,
  toCalls,
  toPlugin,
  typesOf,
} from './harness.js';

describe('slot leases', () => {
  it('reclaims an ALLOCATED slot exactly when its lease ends', () => {
    const core = makeCore();
    core.handleRequestTaskSlot('t1', 1_000, 0);
    const early = core.tickTimers(999);
    expect(early.commands).toEqual([]);
    expect(early.result.slotsReclaimed).toBe(0);
    const due = core.tickTimers(1_000);
    expect(due.commands).toEqual([{ type: 'SlotReclaimed', slotId: 'slot-1', taskId: 't1' }]);
    expect(due.result).toMatchObject({ slotsReclaimed: 1, slotsLost: 0 });
    expect(core.deriveHeartbeat(1_000)).toEqual({ taskSlots: 2, reservedSlots: 0, runningTasks: 0 });
    admissionError(() => core.handleGetTaskResult('t1', 1_000), WorkerErrorCode.NotFound);
    // The id is free to reserve again, under a new slot id.
    expect(core.handleRequestTaskSlot('t1', 1_000, 1_000).result.slotId).toBe('slot-2');
  });

  it('a task still Preparing when its lease ends converges FAILED / SLOT_LOST; late activation is ignored', () => {
    const core = makeCore({ defaultTtlMs: 1_000 });
    core.handleSubmitTask(taskInput('t1'), undefined, 0);
    const tick = core.tickTimers(1_000);
    const converge = expectFailed(tick, 'SLOT_LOST', true);
    expect(converge).toMatchObject({ fromPhase: 'Preparing', slotId: 'slot-1' });
    expect(typesOf(tick)).toEqual(['ConvergeTask', 'NotifyTerminal']);
    expect(tick.result).toMatchObject({ slotsReclaimed: 0, slotsLost: 1 });
    expect(core.deriveHeartbeat(1_000)).toEqual({ taskSlots: 2, reservedSlots: 0, runningTasks: 0 });
    const late = core.handleTaskActivationPrepared('t1', 1, 1_001);
    expect(late).toEqual({
      result: expect.objectContaining({ applied: false, reason: 'TaskTerminal' }),
      commands: [],
    });
    expect(core.taskSnapshot('t1', 1_001)).toMatchObject({
      found: true,
      terminal: true,
      state: TaskState.FAILED,
    });
  });

  it('submission renews the lease from acceptance, so a late submit still gets a full TTL to activate', () => {
    const core = makeCore();
    const { slotId } = core.handleRequestTaskSlot('t1', 1_000, 0).result;
    core.handleSubmitTask(taskInput('t1'), slotId, 900);
    expect(core.tickTimers(1_000).commands).toEqual([]);
    expect(core.nextDeadline()).toBe(1_900);
    expectFailed(core.tickTimers(1_900), 'SLOT_LOST', true);
  });

  it('a RUNNING slot has no lease: only the task deadline can end it', () => {
    const core = makeCore({ defaultTtlMs: 100, taskDeadlineMs: 10_000 });
    toBuilder(core, 't1', 0);
    expect(core.tickTimers(5_000).commands).toEqual([]);
    expect(core.deriveHeartbeat(5_000).runningTasks).toBe(1);
  });

  it('handleSlotLeaseExpired checks the slot and the deadline', () => {
    const core = makeCore();
    core.handleRequestTaskSlot('a', 1_000, 0);
    const running = toBuilder(core, 'b', 0);
    expect(core.handleSlotLeaseExpired('slot-1', 999).result).toMatchObject({
      applied: false,
      reason: 'NotDue',
    });
    expect(core.handleSlotLeaseExpired(running, 5_000).result).toMatchObject({ reason: 'SlotNotAllocated' });
    expect(core.handleSlotLeaseExpired('slot-99', 5_000).result).toMatchObject({
      reason: 'SlotNotAllocated',
    });
    const due = core.handleSlotLeaseExpired('slot-1', 1_000);
    expect(due.result).toEqual({ applied: true });
    expect(typesOf(due)).toEqual(['SlotReclaimed']);
    expect(core.checkInvariants()).toEqual([]);
  });
});

describe('task timeouts', () => {
  const reach: [string, (core: WorkerCore, id: string, now: number) => unknown, boolean][] = [
    [
      'Preparing',
      (c, id, n) => c.handleSubmitTask(taskInput(id, { taskTimeoutMs: 500 }), undefined, n),
      false,
    ],
    ['Builder', (c, id, n) => toBuilder(c, id, n, { taskTimeoutMs: 500 }), false],
    ['Calls', (c, id, n) => toCalls(c, id, n, { taskTimeoutMs: 500 }), true],
    ['Plugin', (c, id, n) => toPlugin(c, id, n, { taskTimeoutMs: 500 }), false],
  ];
  it.each(reach)('in %s: TIMED_OUT (retryable) at acceptance + timeout', (phase, setup, cancelsCalls) => {
    const core = makeCore({ defaultTtlMs: 10_000 });
    setup(core, 't1', 200);
    expect(core.tickTimers(699).commands).toEqual([]);
    const tick = core.tickTimers(700);
    const converge = expectFailed(tick, 'TIMED_OUT', true);
    expect(converge.fromPhase).toBe(phase);
    expect(tick.result.tasksTimedOut).toBe(1);
    if (cancelsCalls) {
      expect(typesOf(tick)).toEqual(['CancelTaskCalls', 'ConvergeTask', 'NotifyTerminal']);
      expect(commandOf(tick, 'CancelTaskCalls')).toEqual({
        type: 'CancelTaskCalls',
        taskId: 't1',
        reason: 'TIMED_OUT',
      });
    } else {
      expect(typesOf(tick)).toEqual(['ConvergeTask', 'NotifyTerminal']);
    }
    expect(core.deriveHeartbeat(700)).toEqual({ taskSlots: 2, reservedSlots: 0, runningTasks: 0 });
  });

  it('handleTaskTimedOut forces the timeout once due', () => {
    const core = makeCore();
    toCalls(core, 't1', 0, { taskTimeoutMs: 500 });
    expect(core.handleTaskTimedOut('t1', 499).result).toMatchObject({ applied: false, reason: 'NotDue' });
    const step = core.handleTaskTimedOut('t1', 500);
    expectFailed(step, 'TIMED_OUT', true);
    expect(typesOf(step)[0]).toBe('CancelTaskCalls');
    // The timer is gone with the task: a tick at the same time finds nothing.
    expect(core.tickTimers(500).commands).toEqual([]);
  });

  it('late phase results after a timeout are ignored', () => {
    const core = makeCore();
    toCalls(core, 't1', 0, { taskTimeoutMs: 500 });
    core.tickTimers(500);
    const late = core.handleTaskPhaseFinished('t1', 'Calls', { ok: true, outputs: [] }, 501);
    expect(late.result).toMatchObject({ applied: false, reason: 'TaskTerminal' });
    expect(core.handleGetTaskResult('t1', 501).result?.executeResult.failureCode).toBe('TIMED_OUT');
  });

  it('the deadline is checked before Calls: expired → TIMED_OUT without StartCallPhase', () => {
    const core = makeCore();
    toBuilder(core, 'late', 0, { taskTimeoutMs: 500 });
    const step = core.handleTaskPhaseFinished('late', 'Builder', { ok: true, calls: [['x']] }, 500);
    expectFailed(step, 'TIMED_OUT', true);
    expect(typesOf(step)).toEqual(['ConvergeTask', 'NotifyTerminal']);
    expect(commandOf(step, 'ConvergeTask').fromPhase).toBe('Builder');

    toBuilder(core, 'in-time', 0, { taskTimeoutMs: 500 });
    const ok = core.handleTaskPhaseFinished('in-time', 'Builder', { ok: true, calls: [['x']] }, 499);
    expect(typesOf(ok)).toEqual(['StartCallPhase']);
  });

  it('lease and timeout due in the same tick: the lease is handled first (SLOT_LOST)', () => {
    const core = makeCore({ defaultTtlMs: 500 });
    core.handleSubmitTask(taskInput('t1', { taskTimeoutMs: 500 }), undefined, 0);
    const tick = core.tickTimers(500);
    expectFailed(tick, 'SLOT_LOST', true);
    expect(tick.result).toMatchObject({ slotsLost: 1, tasksTimedOut: 0 });
  });
});

describe('result retention', () => {
  it('keeps a terminal result queryable for resultRetentionMs, then purges it', () => {
    const core = makeCore({ resultRetentionMs: 1_000 });
    toPlugin(core, 't1', 0);
    core.handleTaskPhaseFinished('t1', 'Plugin', { ok: true, pluginResults: [] }, 100);
    expect(core.nextDeadline()).toBe(1_100);
    expect(core.tickTimers(1_099).result.resultsPurged).toBe(0);
    expect(core.handleGetTaskResult('t1', 1_099).state).toBe(TaskState.SUCCEEDED);
    const tick = core.tickTimers(1_100);
    expect(tick.result.resultsPurged).toBe(1);
    expect(tick.commands).toEqual([]);
    admissionError(() => core.handleGetTaskResult('t1', 1_100), 'NotFound');
    expect(core.nextDeadline()).toBeUndefined();
  });

  it('an expired result is gone even before the timer scan', () => {
    const core = makeCore({ resultRetentionMs: 1_000 });
    toBuilder(core, 't1', 0);
    core.handleTaskActivationFailed('t1', 'IO_SCOPE_FAILED', 'x', 0);
    expect(core.taskSnapshot('t1', 999)).toMatchObject({ found: true, state: TaskState.FAILED });
    expect(core.taskSnapshot('t1', 1_000)).toEqual({ found: false, taskId: 't1' });
  });

  it('retention 0 keeps nothing', () => {
    const core = makeCore({ resultRetentionMs: 0 });
    toBuilder(core, 't1', 0);
    const step = core.handleTaskActivationFailed('t1', 'ACTIVATION_FAILED', 'x', 10);
    expect(commandOf(step, 'ConvergeTask').retainedUntilMs).toBe(10);
    expect(core.taskSnapshot('t1', 10).found).toBe(false);
    expect(core.handleSubmitTask(taskInput('t1'), undefined, 10).result.accepted).toBe(true);
  });
});

describe('nextDeadline', () => {
  it('is the earliest of lease, task deadline, watch grace and retention', () => {
    const core = makeCore({
      taskSlots: 4,
      defaultTtlMs: 1_000,
      watchDisconnectGraceMs: 300,
      resultRetentionMs: 2_000,
    });
    expect(core.nextDeadline()).toBeUndefined();
    core.handleRequestTaskSlot('reserved', 5_000, 0);
    expect(core.nextDeadline()).toBe(5_000);
    toBuilder(core, 'running', 0, { taskTimeoutMs: 4_000 });
    expect(core.nextDeadline()).toBe(4_000);
    core.handleWatchAttached('running', 0);
    core.handleWatchDetached('running', 100);
    expect(core.nextDeadline()).toBe(400);
    core.handleWatchAttached('running', 200);
    expect(core.nextDeadline()).toBe(4_000);
    toBuilder(core, 'done', 0);
    core.handleTaskActivationFailed('done', 'ACTIVATION_FAILED', 'x', 500);
    expect(core.nextDeadline()).toBe(2_500);
  });

  it('is never in the past after a tick', () => {
    const core = makeCore({ taskSlots: 3, defaultTtlMs: 100, resultRetentionMs: 0 });
    core.handleRequestTaskSlot('a', 50, 0);
    core.handleSubmitTask(taskInput('b', { taskTimeoutMs: 70 }), undefined, 0);
    toCalls(core, 'c', 0, { taskTimeoutMs: 60 });
    for (const now of [10, 55, 65, 80, 200]) {
      core.tickTimers(now);
      const next = core.nextDeadline();
      if (next !== undefined) expect(next).toBeGreaterThan(now);
    }
    expect(core.nextDeadline()).toBeUndefined();
  });
});
