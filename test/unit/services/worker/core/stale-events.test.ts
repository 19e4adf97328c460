// Stale and out-of-order events: ignored, reported with a reason, and without any change of state.

import { describe, expect, it } from 'vitest';
import type { Step, WorkerCore } from '../../../../../src/services/worker/core/index.js';
import { makeCore, phaseFailure, preparing, toBuilder, toCalls, type Reach } from './harness.js';

describe('stale and out-of-order events are ignored, reported, and change nothing', () => {
  const builderOk = { ok: true as const, calls: [] };
  // [name, setup, event, reason]
  const cases: [string, Reach, (core: WorkerCore, now: number) => Step<unknown>, string][] = [
    [
      'activation for an unknown task',
      () => undefined,
      (c, n) => c.handleTaskActivationPrepared('t', 1, n),
      'TaskNotActive',
    ],
    [
      'activation for a task only ALLOCATED',
      (c, id, n) => c.handleRequestTaskSlot(id, 1_000, n),
      (c, n) => c.handleTaskActivationPrepared('t', 1, n),
      'TaskNotActive',
    ],
    ['a second activation', toBuilder, (c, n) => c.handleTaskActivationPrepared('t', 2, n), 'PhaseMismatch'],
    [
      'activation failed during Calls',
      toCalls,
      (c, n) => c.handleTaskActivationFailed('t', 'ACTIVATION_FAILED', 'x', n),
      'PhaseMismatch',
    ],
    [
      'a Builder result while Preparing',
      preparing,
      (c, n) => c.handleTaskPhaseFinished('t', 'Builder', builderOk, n),
      'PhaseMismatch',
    ],
    [
      'a second Builder result',
      toCalls,
      (c, n) => c.handleTaskPhaseFinished('t', 'Builder', builderOk, n),
      'PhaseMismatch',
    ],
    [
      'a Plugin result during Calls',
      toCalls,
      (c, n) => c.handleTaskPhaseFinished('t', 'Plugin', { ok: true, pluginResults: [] }, n),
      'PhaseMismatch',
    ],
    [
      'a non-execution phase',
      preparing,
      (c, n) => c.handleTaskPhaseFinished('t', 'Preparing' as 'Builder', builderOk, n),
      'PhaseMismatch',
    ],
    ['a timeout before the deadline', toCalls, (c, n) => c.handleTaskTimedOut('t', n), 'NotDue'],
    [
      'a timeout for an unknown task',
      () => undefined,
      (c, n) => c.handleTaskTimedOut('t', n),
      'TaskNotActive',
    ],
  ];
  it.each(cases)('%s', (_name, setup, event, reason) => {
    const core = makeCore();
    setup(core, 't', 0);
    const before = [core.deriveHeartbeat(1), core.taskSnapshot('t', 1), core.nextDeadline()];
    const step = event(core, 1);
    expect(step.result).toMatchObject({ applied: false, reason });
    expect(step.commands).toEqual([]);
    expect([core.deriveHeartbeat(1), core.taskSnapshot('t', 1), core.nextDeadline()]).toEqual(before);
    expect(core.checkInvariants()).toEqual([]);
  });

  it('every late event after convergence is TaskTerminal', () => {
    const core = makeCore({ resultRetentionMs: 60_000 });
    toCalls(core, 't', 0);
    core.handleTaskPhaseFinished('t', 'Calls', phaseFailure('CALL_FAILED'), 1);
    const late = [
      core.handleTaskActivationPrepared('t', 1, 2),
      core.handleTaskActivationFailed('t', 'ACTIVATION_FAILED', 'x', 2),
      core.handleTaskPhaseFinished('t', 'Calls', { ok: true, outputs: [] }, 2),
      core.handleTaskPhaseFinished('t', 'Plugin', { ok: true, pluginResults: [] }, 2),
      core.handleTaskTimedOut('t', 10_001),
      core.handleWatchDisconnected('t', 2),
    ];
    for (const step of late) {
      expect(step.result).toMatchObject({ applied: false, reason: 'TaskTerminal' });
      expect(step.commands).toEqual([]);
    }
    expect(core.handleGetTaskResult('t', 2).result?.executeResult.failureCode).toBe('CALL_FAILED');
  });

  it('a late event after the result expired is TaskNotActive', () => {
    const core = makeCore({ resultRetentionMs: 100 });
    toBuilder(core, 't', 0);
    core.handleTaskPhaseFinished('t', 'Builder', phaseFailure('BUILDER_FAILED'), 1);
    expect(core.handleTaskPhaseFinished('t', 'Builder', { ok: true, calls: [] }, 101).result).toMatchObject({
      reason: 'TaskNotActive',
    });
  });
});
