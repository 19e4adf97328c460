// A model driver for property tests: it plays the orchestrator (feeds inputs, reads commands) and checks
// after every step the promises of docs/task-lifecycle.md. It sees the core only through its public API and
// the commands it emits. Checks use a plain `check` (not `expect`) because they run ~10^5 times per test.

import {
  TaskState,
  WorkerAdmissionError,
  WorkerCore,
  isTerminalState,
  type ExecutionPhase,
  type FailureCode,
  type PhaseOutcome,
  type Step,
  type WorkerCoreConfig,
} from '../../../../../src/services/worker/core/index.js';
import type { Action } from './property-actions.js';
import { sequentialIds, taskInput } from './harness.js';

export const TASKS = ['t0', 't1', 't2', 't3', 't4'];
type Awaiting = 'Activation' | ExecutionPhase;

export function check(condition: boolean, message: () => string): void {
  if (!condition) throw new Error(`invariant violated: ${message()}`);
}

export class Driver {
  readonly core: WorkerCore;
  now = 0;
  /** Executing tasks (PrepareTaskActivation seen, ConvergeTask not yet) and what they wait for. */
  readonly awaiting = new Map<string, Awaiting>();
  readonly retainedUntil = new Map<string, number>();
  readonly slotOwner = new Map<string, string>();
  readonly lastSlot = new Map<string, string>();
  readonly prepares = new Map<string, number>();
  readonly converged = new Map<string, number>();

  constructor(readonly config: Partial<WorkerCoreConfig>) {
    this.core = new WorkerCore({ config, newSlotId: sequentialIds() });
    this.observe(this.core.handleExecutorReady(0));
  }

  run(action: Action): void {
    const c = this.core;
    const id = 'task' in action ? this.pickTask(action.task, 'live' in action && action.live) : 't0';
    switch (action.kind) {
      case 'request':
        this.admit(() => {
          const step = c.handleRequestTaskSlot(id, action.ttl, this.now, action.client);
          const { slotId, state } = step.result;
          if (slotId !== undefined) this.bind(slotId, id);
          check(
            (slotId === undefined) === isTerminalState(state),
            () => `request ${id}: slot ${slotId} in ${state}`,
          );
          return step;
        });
        break;
      case 'submit': {
        const other = [...this.lastSlot.entries()].find(([t]) => t !== id)?.[1];
        const slots = { none: undefined, empty: '', own: this.lastSlot.get(id), other, bogus: 'slot-bogus' };
        this.admit(() => {
          const input = taskInput(id, { taskTimeoutMs: action.timeout });
          const step = c.handleSubmitTask(input, slots[action.slot], this.now, action.client);
          const prepared = step.commands.filter((cmd) => cmd.type === 'PrepareTaskActivation').length;
          check(prepared === (step.result.accepted ? 1 : 0), () => `submit ${id}: ${prepared} prepares`);
          const { state } = step.result;
          check(
            state === TaskState.RUNNING || isTerminalState(state),
            () => `submit ${id} answered ${state}`,
          );
          return step;
        });
        break;
      }
      case 'advance':
        this.now += action.dt;
        this.tick();
        break;
      case 'follow':
        this.follow(id, action.ok, action.code, action.retryable);
        break;
      case 'activate':
        this.observe(
          action.ok
            ? c.handleTaskActivationPrepared(id, 1, this.now)
            : c.handleTaskActivationFailed(
                id,
                action.io ? 'IO_SCOPE_FAILED' : 'ACTIVATION_FAILED',
                'x',
                this.now,
              ),
        );
        break;
      case 'phase':
        this.observe(
          c.handleTaskPhaseFinished(id, action.phase, this.outcome(action.phase, action.ok), this.now),
        );
        break;
      case 'timedOut':
        this.observe(c.handleTaskTimedOut(id, this.now));
        break;
      case 'leaseExpired':
        this.observe(c.handleSlotLeaseExpired(`slot-${action.slot}`, this.now));
        break;
      case 'watch':
        if (action.op === 'attach') this.observe(c.handleWatchAttached(id, this.now));
        else if (action.op === 'detach') this.observe(c.handleWatchDetached(id, this.now));
        else this.observe(c.handleWatchDisconnected(id, this.now));
        break;
      case 'ready':
        this.observe(c.handleExecutorReady(this.now));
        break;
      case 'lost':
        this.observe(c.handleExecutorLost(this.now));
        break;
      case 'drain':
        this.observe(c.handleStartDraining(this.now));
        break;
      case 'query':
        this.checkStatus(id);
        break;
      default: {
        const unreachable: never = action;
        throw new Error(`unknown action ${JSON.stringify(unreachable)}`);
      }
    }
    this.checkInvariants();
  }

  /** An id from the pool, or with `live` one of the executing tasks (so results hit running tasks). */
  pickTask(index: number, live: boolean): string {
    const executing = [...this.awaiting.keys()];
    if (live && executing.length > 0) return executing[index % executing.length] ?? 't0';
    return TASKS[index] ?? 't0';
  }

  /** Feeds the result the task is waiting for, as an orchestrator would next. */
  follow(id: string, ok: boolean, code: FailureCode, retryable: boolean | undefined): void {
    const awaiting = this.awaiting.get(id);
    if (awaiting === undefined) return;
    let step: Step<{ applied: boolean }>;
    if (awaiting === 'Activation') {
      step = ok
        ? this.core.handleTaskActivationPrepared(id, 'e1', this.now)
        : this.core.handleTaskActivationFailed(id, 'ACTIVATION_FAILED', 'x', this.now);
    } else {
      const failure = { ok: false as const, failureCode: code, message: 'x', retryable };
      step = this.core.handleTaskPhaseFinished(
        id,
        awaiting,
        ok ? this.outcome(awaiting, true) : failure,
        this.now,
      );
    }
    check(step.result.applied, () => `the awaited ${awaiting} result of ${id} was ignored`);
    this.observe(step);
  }

  outcome(phase: ExecutionPhase, ok: boolean): PhaseOutcome {
    if (!ok) return { ok: false, failureCode: 'CANCELLED', message: 'x' };
    if (phase === 'Builder') return { ok: true, calls: [1, 2] };
    if (phase === 'Calls') return { ok: true, outputs: ['a', 'b'] };
    return { ok: true, pluginResults: [] };
  }

  tick(): void {
    this.observe(this.core.tickTimers(this.now));
    const next = this.core.nextDeadline();
    check(next === undefined || next > this.now, () => `nextDeadline ${next} is not after ${this.now}`);
  }

  /** Runs an admission; a refusal must be a WorkerAdmissionError and must change nothing. */
  admit(fn: () => Step<unknown>): void {
    const before = this.fingerprint();
    let step: Step<unknown>;
    try {
      step = fn();
    } catch (err) {
      if (!(err instanceof WorkerAdmissionError)) throw err;
      const after = this.fingerprint();
      check(after === before, () => `refused admission changed state:\n${before}\n${after}`);
      return;
    }
    this.observe(step);
  }

  fingerprint(): string {
    return JSON.stringify([
      this.core.deriveHeartbeat(this.now),
      TASKS.map((t) => this.core.taskSnapshot(t, this.now)),
    ]);
  }

  bind(slotId: string, taskId: string): void {
    const owner = this.slotOwner.get(slotId);
    check(owner === undefined || owner === taskId, () => `slot ${slotId} bound to ${owner} and ${taskId}`);
    this.slotOwner.set(slotId, taskId);
    this.lastSlot.set(taskId, slotId);
  }

  /** Checks each command against what the driver knows, and updates its knowledge. */
  observe(step: Step<unknown>): void {
    const cmds = step.commands;
    cmds.forEach((cmd, i) => {
      const next = cmds[i + 1];
      const state = this.awaiting.get('taskId' in cmd ? cmd.taskId : '');
      const where = (): string => `${cmd.type} ${'taskId' in cmd ? cmd.taskId : ''} (awaiting ${state})`;
      switch (cmd.type) {
        case 'PrepareTaskActivation': {
          // A task id executes at most once per retention window.
          check(state === undefined, () => `${where()}: prepared while executing`);
          const until = this.retainedUntil.get(cmd.taskId);
          check(until === undefined || this.now >= until, () => `${where()}: prepared while retained`);
          check(
            cmd.deadlineMs === this.now + cmd.timeoutMs,
            () => `${where()}: deadline not from acceptance`,
          );
          this.bind(cmd.slotId, cmd.taskId);
          this.awaiting.set(cmd.taskId, 'Activation');
          this.prepares.set(cmd.taskId, (this.prepares.get(cmd.taskId) ?? 0) + 1);
          break;
        }
        case 'StartBuilderPhase':
          check(state === 'Activation', where);
          this.awaiting.set(cmd.taskId, 'Builder');
          break;
        case 'StartCallPhase':
          check(state === 'Builder' && this.now < cmd.deadlineMs, where);
          this.awaiting.set(cmd.taskId, 'Calls');
          break;
        case 'StartWriterPhase':
          check(state === 'Calls', where);
          this.awaiting.set(cmd.taskId, 'Plugin');
          break;
        case 'CancelTaskCalls':
          check(state === 'Calls', where);
          check(next?.type === 'ConvergeTask' && next.taskId === cmd.taskId, where);
          break;
        case 'ConvergeTask': {
          check(state !== undefined, () => `${where()}: converged while not executing`);
          check(this.slotOwner.get(cmd.slotId) === cmd.taskId && cmd.slotReleased, where);
          check(cmd.retainedUntilMs === this.now + (this.config.resultRetentionMs ?? 0), where);
          check(cmd.result.success === (cmd.state === TaskState.SUCCEEDED), where);
          const { failureCode, retryable } = cmd.result.executeResult;
          if (failureCode === 'TIMED_OUT' || failureCode === 'SLOT_LOST') check(retryable, where);
          if (failureCode === 'CALL_FAILED' || failureCode === 'WATCH_DISCONNECTED') check(!retryable, where);
          check(
            next?.type === 'NotifyTerminal' &&
              next.taskId === cmd.taskId &&
              next.state === cmd.state &&
              next.result === cmd.result,
            () => `${where()}: not followed by its NotifyTerminal`,
          );
          this.awaiting.delete(cmd.taskId);
          this.retainedUntil.set(cmd.taskId, cmd.retainedUntilMs);
          this.converged.set(cmd.taskId, (this.converged.get(cmd.taskId) ?? 0) + 1);
          break;
        }
        case 'NotifyTerminal': {
          const prev = cmds[i - 1];
          check(prev?.type === 'ConvergeTask' && prev.taskId === cmd.taskId, where);
          break;
        }
        case 'SlotReclaimed':
          check(state === undefined, () => `${where()}: reclaimed the slot of an executing task`);
          break;
        case 'ServingStatusChanged':
        case 'Drained':
          break;
        default: {
          const unreachable: never = cmd;
          throw new Error(`unknown command ${JSON.stringify(unreachable)}`);
        }
      }
    });
  }

  checkStatus(id: string): void {
    const snapshot = this.core.taskSnapshot(id, this.now);
    const show = (): string => `${id}: ${JSON.stringify(snapshot)} (awaiting ${this.awaiting.get(id)})`;
    if (this.awaiting.has(id)) {
      check(snapshot.found && snapshot.state === TaskState.RUNNING && !snapshot.terminal, show);
      return;
    }
    const until = this.retainedUntil.get(id);
    if (until !== undefined && this.now < until) check(snapshot.found && snapshot.terminal, show);
    if (snapshot.found && snapshot.terminal) check(snapshot.result !== undefined, show);
  }

  checkInvariants(): void {
    const problems = this.core.checkInvariants();
    check(problems.length === 0, () => problems.join('; '));
    const hb = this.core.deriveHeartbeat(this.now);
    const running = [...this.awaiting.values()].filter((a) => a !== 'Activation').length;
    check(hb.reservedSlots + hb.runningTasks <= hb.taskSlots, () => `heartbeat ${JSON.stringify(hb)}`);
    check(hb.runningTasks === running, () => `runningTasks ${hb.runningTasks} != ${running}`);
    check(
      hb.reservedSlots >= this.awaiting.size - running,
      () => `reservedSlots ${hb.reservedSlots} too low`,
    );
    for (const id of TASKS) this.checkStatus(id);
    for (const [id, n] of this.prepares) {
      const open = n - (this.converged.get(id) ?? 0);
      check(open === (this.awaiting.has(id) ? 1 : 0), () => `${id}: ${n} prepares, ${open} unconverged`);
    }
  }
}
