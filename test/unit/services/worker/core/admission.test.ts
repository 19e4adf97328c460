// RequestTaskSlot and SubmitTask: every admission error, the order of checks, and idempotency.

import { describe, expect, it } from 'vitest';
import {
  TaskState,
  type WorkerErrorCode,
  type TaskInput,
  type WorkerCore,
} from '../../../../../src/services/worker/core/index.js';
import { admissionError, commandOf, makeCore, taskInput, toBuilder, typesOf } from './harness.js';

function fill(core: WorkerCore, n: number, now = 0): void {
  for (let i = 0; i < n; i++) core.handleRequestTaskSlot(`filler-${i}`, 1_000, now);
}

/** Converges `taskId` (already in Builder) as FAILED via a builder failure at `now`. */
function failBuilder(core: WorkerCore, taskId: string, now: number): void {
  core.handleTaskPhaseFinished(
    taskId,
    'Builder',
    { ok: false, failureCode: 'BUILDER_FAILED', message: 'x' },
    now,
  );
}

describe('RequestTaskSlot', () => {
  const errorCases: [string, (core: WorkerCore) => unknown, string, Record<string, unknown>][] = [
    ['empty task id', (c) => c.handleRequestTaskSlot('', 1_000, 0), 'InvalidArgument', { field: 'taskId' }],
    ['ttl 0', (c) => c.handleRequestTaskSlot('t', 0, 0), 'InvalidArgument', { field: 'ttlMs', value: 0 }],
    ['ttl negative', (c) => c.handleRequestTaskSlot('t', -5, 0), 'InvalidArgument', { field: 'ttlMs' }],
    ['ttl fractional', (c) => c.handleRequestTaskSlot('t', 1.5, 0), 'InvalidArgument', { field: 'ttlMs' }],
    ['ttl NaN', (c) => c.handleRequestTaskSlot('t', Number.NaN, 0), 'InvalidArgument', { field: 'ttlMs' }],
    [
      'no free slot',
      (c) => (fill(c, 2), c.handleRequestTaskSlot('t', 1_000, 0)),
      'NoSlot',
      { taskSlots: 2, slotsInUse: 2 },
    ],
  ];
  it.each(errorCases)('%s', (_name, act, code, detail) => {
    const core = makeCore();
    const err = admissionError(() => act(core), code as WorkerErrorCode);
    expect(err.detail).toMatchObject(detail);
  });

  it('is Unavailable before the executor is ready and while draining; arguments are checked first', () => {
    const notReady = makeCore({}, { ready: false });
    expect(
      admissionError(() => notReady.handleRequestTaskSlot('t', 1_000, 0), 'Unavailable').detail,
    ).toMatchObject({
      reason: 'NotReady',
    });
    admissionError(() => notReady.handleRequestTaskSlot('t', 0, 0), 'InvalidArgument');
    const draining = makeCore();
    draining.handleStartDraining(0);
    expect(
      admissionError(() => draining.handleRequestTaskSlot('t', 1_000, 0), 'Unavailable').detail,
    ).toMatchObject({
      reason: 'Draining',
    });
  });

  it('allocates an ALLOCATED slot with a lease of now + ttl', () => {
    const core = makeCore();
    const step = core.handleRequestTaskSlot('t1', 700, 100);
    expect(step.result).toEqual({
      taskId: 't1',
      slotId: 'slot-1',
      state: TaskState.ALLOCATED,
      leaseDeadlineMs: 800,
    });
    expect(step.commands).toEqual([]);
    expect(core.deriveHeartbeat(100)).toEqual({ taskSlots: 2, reservedSlots: 1, runningTasks: 0 });
    expect(core.nextDeadline()).toBe(800);
  });

  it('returns the same slot for the same task id while ALLOCATED (lease renewed, never shortened)', () => {
    const core = makeCore();
    core.handleRequestTaskSlot('t1', 1_000, 0);
    const again = core.handleRequestTaskSlot('t1', 1_000, 400);
    expect(again.result).toMatchObject({
      slotId: 'slot-1',
      state: TaskState.ALLOCATED,
      leaseDeadlineMs: 1_400,
    });
    const shorter = core.handleRequestTaskSlot('t1', 10, 500);
    expect(shorter.result.leaseDeadlineMs).toBe(1_400);
    expect(core.deriveHeartbeat(500).reservedSlots).toBe(1);
  });

  it('returns the same slot with state RUNNING once submitted, even at full capacity', () => {
    const core = makeCore({ taskSlots: 1 });
    toBuilder(core, 't1', 0);
    expect(core.handleRequestTaskSlot('t1', 1_000, 10).result).toEqual({
      taskId: 't1',
      slotId: 'slot-1',
      state: TaskState.RUNNING,
      leaseDeadlineMs: undefined,
    });
  });

  it('answers a retained task id with its terminal state and no slot; after retention a new slot', () => {
    const core = makeCore({ resultRetentionMs: 5_000 });
    toBuilder(core, 't1', 0);
    failBuilder(core, 't1', 100);
    expect(core.handleRequestTaskSlot('t1', 1_000, 200).result).toEqual({
      taskId: 't1',
      slotId: undefined,
      state: TaskState.FAILED,
      leaseDeadlineMs: undefined,
    });
    expect(core.deriveHeartbeat(200)).toEqual({ taskSlots: 2, reservedSlots: 0, runningTasks: 0 });
    const later = core.handleRequestTaskSlot('t1', 1_000, 5_100);
    expect(later.result).toMatchObject({ slotId: 'slot-2', state: TaskState.ALLOCATED });
  });

  it('a refusal changes nothing', () => {
    const core = makeCore({ taskSlots: 1 });
    core.handleRequestTaskSlot('a', 1_000, 0);
    admissionError(() => core.handleRequestTaskSlot('b', 1_000, 0), 'NoSlot');
    expect(core.deriveHeartbeat(0)).toEqual({ taskSlots: 1, reservedSlots: 1, runningTasks: 0 });
    expect(core.taskSnapshot('b', 0)).toEqual({ found: false, taskId: 'b' });
    expect(core.checkInvariants()).toEqual([]);
  });
});

describe('SubmitTask', () => {
  const bad = (overrides: Partial<TaskInput> | Record<string, unknown>): TaskInput =>
    ({ ...taskInput('t1'), ...overrides }) as TaskInput;
  const argumentCases: [string, TaskInput, string | undefined, string][] = [
    ['empty task id', bad({ taskId: '' }), undefined, 'taskId'],
    [
      'missing functionCallConfig',
      bad({ functionCallConfig: undefined }),
      undefined,
      'functionCallConfig.type',
    ],
    [
      'empty builder type',
      bad({ functionCallConfig: { type: '', config: {} } }),
      undefined,
      'functionCallConfig.type',
    ],
    ['result handler without type', bad({ resultHandler: { config: {} } }), undefined, 'resultHandler.type'],
    ['negative timeout', bad({ taskTimeoutMs: -1 }), undefined, 'taskTimeoutMs'],
    ['timeout above the max', bad({ taskTimeoutMs: 8 * 3_600_000 + 1 }), undefined, 'taskTimeoutMs'],
    ['fractional timeout', bad({ taskTimeoutMs: 0.5 }), undefined, 'taskTimeoutMs'],
    ['non-string slot id', taskInput('t1'), 42 as unknown as string, 'slotId'],
  ];
  it.each(argumentCases)('%s → InvalidArgument', (_name, input, slotId, field) => {
    const core = makeCore();
    expect(
      admissionError(() => core.handleSubmitTask(input, slotId, 0), 'InvalidArgument').detail,
    ).toMatchObject({
      field,
    });
    expect(core.deriveHeartbeat(0)).toEqual({ taskSlots: 2, reservedSlots: 0, runningTasks: 0 });
  });

  it('checks arguments before readiness, readiness before everything else', () => {
    const core = makeCore({}, { ready: false });
    admissionError(
      () => core.handleSubmitTask(taskInput('t1', { taskTimeoutMs: -1 }), undefined, 0),
      'InvalidArgument',
    );
    admissionError(() => core.handleSubmitTask(taskInput('t1'), 'no-such-slot', 0), 'Unavailable');
  });

  it('is Unavailable while draining, even for a task that is already running (documented order)', () => {
    const core = makeCore();
    toBuilder(core, 't1', 0);
    core.handleStartDraining(10);
    const err = admissionError(() => core.handleSubmitTask(taskInput('t1'), undefined, 20), 'Unavailable');
    expect(err.detail).toMatchObject({ reason: 'Draining' });
  });

  it('NoSlot when submitting without a slot id at full capacity', () => {
    const core = makeCore();
    fill(core, 2);
    expect(
      admissionError(() => core.handleSubmitTask(taskInput('t1'), undefined, 0), 'NoSlot').detail,
    ).toEqual({
      code: 'NoSlot',
      taskSlots: 2,
      slotsInUse: 2,
    });
  });

  it.each([
    ['an unknown slot', 'SlotUnknown'],
    ["another task's ALLOCATED slot", 'SlotBoundToOtherTask'],
    ["another task's RUNNING slot", 'SlotNotAllocated'],
  ])('InvalidSlot for %s', (name, reason) => {
    const core = makeCore();
    let slotId = 'slot-404';
    if (name.includes('ALLOCATED'))
      slotId = core.handleRequestTaskSlot('other', 1_000, 0).result.slotId ?? '';
    if (name.includes('RUNNING')) slotId = toBuilder(core, 'other', 0);
    const before = core.deriveHeartbeat(0);
    const err = admissionError(() => core.handleSubmitTask(taskInput('t1'), slotId, 0), 'InvalidSlot');
    expect(err.detail).toEqual({ code: 'InvalidSlot', slotId, reason });
    expect(core.deriveHeartbeat(0)).toEqual(before);
    expect(core.taskSnapshot('t1', 0).found).toBe(false);
  });

  it('InvalidSlot for a slot id that expired and was reclaimed', () => {
    const core = makeCore();
    const { slotId } = core.handleRequestTaskSlot('t1', 100, 0).result;
    core.tickTimers(100);
    admissionError(() => core.handleSubmitTask(taskInput('t1'), slotId, 150), 'InvalidSlot');
  });

  it('accepts on its ALLOCATED slot: RUNNING, PrepareTaskActivation, deadline counted from acceptance', () => {
    const core = makeCore();
    const { slotId } = core.handleRequestTaskSlot('t1', 1_000, 0).result;
    const input = taskInput('t1', { taskTimeoutMs: 2_000 });
    const step = core.handleSubmitTask(input, slotId, 500);
    expect(step.result).toEqual({
      taskId: 't1',
      state: TaskState.RUNNING,
      result: undefined,
      accepted: true,
    });
    expect(step.commands).toEqual([
      {
        type: 'PrepareTaskActivation',
        taskId: 't1',
        slotId: 'slot-1',
        input: { ...input, resultHandler: input.resultHandler },
        acceptedAtMs: 500,
        timeoutMs: 2_000,
        deadlineMs: 2_500,
        // The submitter (none given: anonymous), for who may list the task (docs/security.md § Roles).
        client: 'anonymous',
      },
    ]);
    // Still ALLOCATED (Preparing) until activation; the lease is renewed from acceptance.
    expect(core.deriveHeartbeat(500)).toEqual({ taskSlots: 2, reservedSlots: 1, runningTasks: 0 });
    expect(core.handleRequestTaskSlot('t1', 1, 500).result.leaseDeadlineMs).toBe(1_500);
    expect(core.handleGetTaskResult('t1', 500).state).toBe(TaskState.RUNNING);
  });

  it('timeout 0 takes taskDeadlineMs', () => {
    const core = makeCore({ taskDeadlineMs: 9_000 });
    const prepare = commandOf(
      core.handleSubmitTask(taskInput('t1'), undefined, 100),
      'PrepareTaskActivation',
    );
    expect(prepare).toMatchObject({ timeoutMs: 9_000, deadlineMs: 9_100 });
  });

  it.each([
    ['undefined', undefined],
    ['null', null],
    ['an empty type', { type: '', config: {} }],
  ])('normalises a result handler that is %s to null', (_name, resultHandler) => {
    const core = makeCore();
    const step = core.handleSubmitTask(taskInput('t1', { resultHandler }), undefined, 0);
    expect(commandOf(step, 'PrepareTaskActivation').input.resultHandler).toBeNull();
  });

  it('without a slot id (or an empty one) requests a slot inline with defaultTtlMs', () => {
    const core = makeCore({ defaultTtlMs: 300 });
    const step = core.handleSubmitTask(taskInput('t1'), '', 50);
    expect(commandOf(step, 'PrepareTaskActivation').slotId).toBe('slot-1');
    expect(core.nextDeadline()).toBe(350);
  });

  it('without a slot id reuses the slot the task already reserved', () => {
    const core = makeCore({ taskSlots: 1 });
    core.handleRequestTaskSlot('t1', 1_000, 0);
    const step = core.handleSubmitTask(taskInput('t1'), undefined, 10);
    expect(commandOf(step, 'PrepareTaskActivation').slotId).toBe('slot-1');
    expect(core.deriveHeartbeat(10).reservedSlots).toBe(1);
  });

  it('a running task answers RUNNING and never prepares a second activation', () => {
    const core = makeCore();
    const first = core.handleSubmitTask(taskInput('t1'), undefined, 0);
    expect(typesOf(first)).toEqual(['PrepareTaskActivation']);
    const slotId = commandOf(first, 'PrepareTaskActivation').slotId;
    for (const s of [undefined, slotId, 'bogus']) {
      const again = core.handleSubmitTask(taskInput('t1'), s, 5);
      expect(again.result).toEqual({
        taskId: 't1',
        state: TaskState.RUNNING,
        result: undefined,
        accepted: false,
      });
      expect(again.commands).toEqual([]);
    }
  });

  it('100 submits of one task id prepare exactly one activation', () => {
    const core = makeCore();
    const prepares = Array.from({ length: 100 }, (_, i) =>
      core.handleSubmitTask(taskInput('t1'), undefined, i),
    )
      .flatMap((s) => s.commands)
      .filter((c) => c.type === 'PrepareTaskActivation');
    expect(prepares).toHaveLength(1);
    expect(core.deriveHeartbeat(100).reservedSlots).toBe(1);
  });

  it('a retained task answers its terminal state and result; after retention it runs again', () => {
    const core = makeCore({ resultRetentionMs: 1_000 });
    toBuilder(core, 't1', 0);
    failBuilder(core, 't1', 10);
    const retained = core.handleSubmitTask(taskInput('t1'), undefined, 500);
    expect(retained.commands).toEqual([]);
    expect(retained.result).toMatchObject({ state: TaskState.FAILED, accepted: false });
    expect(retained.result.result?.executeResult.failureCode).toBe('BUILDER_FAILED');
    // Retention ends at 10 + 1000; at that instant the result is gone even before a timer scan.
    const again = core.handleSubmitTask(taskInput('t1'), undefined, 1_010);
    expect(again.result.accepted).toBe(true);
    expect(typesOf(again)).toEqual(['PrepareTaskActivation']);
  });
});
