// The Watch-disconnect grace: off by default, only for watched tasks, cleared by a new stream.

import { describe, expect, it } from 'vitest';
import { commandOf, expectFailed, makeCore, taskInput, toBuilder, toCalls, typesOf } from './harness.js';

describe('watch disconnect grace', () => {
  it('is off when watchDisconnectGraceMs = 0: a watched task outlives its last stream', () => {
    const core = makeCore({ watchDisconnectGraceMs: 0, taskDeadlineMs: 10_000 });
    toBuilder(core, 't1', 0);
    core.handleWatchAttached('t1', 0);
    expect(core.handleWatchDetached('t1', 10).result).toEqual({ applied: true });
    expect(core.nextDeadline()).toBe(10_000);
    expect(core.tickTimers(9_999).commands).toEqual([]);
    expect(core.handleWatchDisconnected('t1', 9_999).result).toMatchObject({
      applied: false,
      reason: 'NotDue',
    });
  });

  it('fails a watched task WATCH_DISCONNECTED (not retryable) when the grace expires', () => {
    const core = makeCore({ watchDisconnectGraceMs: 300 });
    toBuilder(core, 't1', 0);
    core.handleWatchAttached('t1', 0);
    core.handleWatchDetached('t1', 100);
    expect(core.nextDeadline()).toBe(400);
    expect(core.tickTimers(399).commands).toEqual([]);
    const tick = core.tickTimers(400);
    expect(tick.result.watchesDisconnected).toBe(1);
    expect(expectFailed(tick, 'WATCH_DISCONNECTED', false).fromPhase).toBe('Builder');
    expect(typesOf(tick)).toEqual(['ConvergeTask', 'NotifyTerminal']);
  });

  it('cancels calls in flight when it fires during the Calls phase', () => {
    const core = makeCore({ watchDisconnectGraceMs: 300 });
    toCalls(core, 't1', 0);
    core.handleWatchAttached('t1', 0);
    core.handleWatchDetached('t1', 0);
    const tick = core.tickTimers(300);
    expect(typesOf(tick)).toEqual(['CancelTaskCalls', 'ConvergeTask', 'NotifyTerminal']);
    expect(commandOf(tick, 'CancelTaskCalls').reason).toBe('WATCH_DISCONNECTED');
  });

  it('a stream attaching within the grace clears it', () => {
    const core = makeCore({ watchDisconnectGraceMs: 300, taskDeadlineMs: 10_000 });
    toBuilder(core, 't1', 0);
    core.handleWatchAttached('t1', 0);
    core.handleWatchDetached('t1', 100);
    core.handleWatchAttached('t1', 200);
    expect(core.tickTimers(400).commands).toEqual([]);
    expect(core.nextDeadline()).toBe(10_000);
  });

  it('starts only when the last of several streams detaches', () => {
    const core = makeCore({ watchDisconnectGraceMs: 300, taskDeadlineMs: 10_000 });
    toBuilder(core, 't1', 0);
    core.handleWatchAttached('t1', 0);
    core.handleWatchAttached('t1', 0);
    core.handleWatchDetached('t1', 100);
    expect(core.nextDeadline()).toBe(10_000);
    core.handleWatchDetached('t1', 200);
    expect(core.nextDeadline()).toBe(500);
  });

  it('never affects a task that was never watched', () => {
    const core = makeCore({ watchDisconnectGraceMs: 300, taskDeadlineMs: 10_000 });
    toBuilder(core, 't1', 0);
    expect(core.handleWatchDetached('t1', 0).result).toMatchObject({
      applied: false,
      reason: 'WatchNotAttached',
    });
    expect(core.handleWatchDisconnected('t1', 5_000).result).toMatchObject({
      applied: false,
      reason: 'NotDue',
    });
    expect(core.tickTimers(5_000).commands).toEqual([]);
  });

  it('a stream attached before SubmitTask makes the task watched; one gone before submit does not', () => {
    const core = makeCore({ watchDisconnectGraceMs: 300, taskDeadlineMs: 10_000 });
    core.handleWatchAttached('watched', 0);
    core.handleWatchAttached('left', 0);
    core.handleWatchDetached('left', 0);
    core.handleSubmitTask(taskInput('watched'), undefined, 10);
    core.handleSubmitTask(taskInput('left'), undefined, 10);
    core.handleWatchDetached('watched', 20);
    expect(core.nextDeadline()).toBe(320);
    const tick = core.tickTimers(320);
    expect(commandOf(tick, 'ConvergeTask').taskId).toBe('watched');
    expect(tick.commands.filter((c) => c.type === 'ConvergeTask')).toHaveLength(1);
  });

  it('handleWatchDisconnected converges only once the grace is due', () => {
    const core = makeCore({ watchDisconnectGraceMs: 300 });
    toBuilder(core, 't1', 0);
    core.handleWatchAttached('t1', 0);
    core.handleWatchDetached('t1', 0);
    expect(core.handleWatchDisconnected('t1', 299).result).toMatchObject({ reason: 'NotDue' });
    expectFailed(core.handleWatchDisconnected('t1', 300), 'WATCH_DISCONNECTED', false);
    expect(core.tickTimers(300).commands).toEqual([]);
  });

  it('convergence clears a running grace; streams of a terminal task come and go freely', () => {
    const core = makeCore({ watchDisconnectGraceMs: 300, resultRetentionMs: 5_000 });
    toBuilder(core, 't1', 0);
    core.handleWatchAttached('t1', 0);
    core.handleWatchDetached('t1', 0);
    core.handleTaskPhaseFinished(
      't1',
      'Builder',
      { ok: false, failureCode: 'BUILDER_NOT_FOUND', message: 'x' },
      10,
    );
    expect(core.nextDeadline()).toBe(5_010);
    expect(core.handleWatchAttached('t1', 20).result).toEqual({ applied: true });
    expect(core.handleWatchDetached('t1', 30).result).toEqual({ applied: true });
    expect(core.tickTimers(400).commands).toEqual([]);
    expect(core.checkInvariants()).toEqual([]);
  });
});
