// The orchestrator: the driver of one WorkerCore (docs/task-lifecycle.md).
//
// Theory of operation. Every input reaches the core through `feed`, which reads the clock once, calls
// the core synchronously, and queues the returned commands. Commands run in order from one queue (a
// trampoline): a command handler that feeds the core again (a phase finishing synchronously, a watcher
// detaching on its terminal update) appends to the queue instead of nesting, so commands of one step
// are never interleaved with another step's. Work that takes time (activation, Builder, Calls, Plugin)
// starts from its command as a promise and comes back later through `feed`; because JS is single-
// threaded and nothing awaits between reading the core and feeding it, the core is never re-entered.
//
// Timers: after every step one OS timer is (re-)armed for `core.nextDeadline()`, plus the fixed
// `timerScanMs` (500 ms) scan as a safety net; both call `tickTimers` (src/kernel/deadline-timer.ts).
// Timers are unref'd: a worker is kept alive by its gRPC server, not by its timers.
//
// Per task the orchestrator keeps a TaskRuntime (abort controller = the task's context, pinned epoch,
// IO scope) from PrepareTaskActivation until ConvergeTask, which aborts the context (cancelling calls
// still in flight and phases waiting for admission), closes the IO scope and releases the epoch pin.

import type { PluginRegistry } from '../../../../kernel/plugin-registry.js';
import {
  TaskState,
  type Applied,
  type ConvergeTask,
  type PrepareTaskActivation,
  type RequestTaskSlotResult,
  type ServingStatusChanged,
  type Step,
  type SubmitTaskResult,
  type TaskInput,
  type TaskResult,
  type TaskSnapshot,
  type TaskStatus,
  type TerminalTaskState,
  type WorkerCommand,
  type WorkerCore,
} from '../../core/index.js';
import { WorkerErrorRate, type ErrorRateOptions } from '../../core/health/error-rate.js';
import { DeadlineTimer } from '../../../../kernel/deadline-timer.js';
import { describeError } from '../../../../kernel/errors.js';
import {
  activateTask,
  runBuilderPhase,
  runCallPhase,
  runWriterPhase,
  type PhaseContext,
} from './orchestrator-phases.js';
import type { CallPhaseRunner, CodeEpochSource } from '../../../call-host/index.js';
import type { TaskIoScopeFactory } from './ports.js';
import { TaskRuntimes } from './task-runtimes.js';
import { PhaseFusion } from './phase-fusion.js';
import { createAdmissionSemaphores, type AdmissionSemaphores, type AdmissionSlots } from './semaphore.js';
import { silentLogger, type ServiceLogger } from '../../../../kernel/observability/service-logger.js';

/** What the rest of the worker hears from the orchestrator. Every method is optional. */
export interface OrchestratorListener {
  /** A task was admitted (PrepareTaskActivation): it is RUNNING from now (the recent-task ring). */
  onTaskAdmitted?(task: AdmittedTask): void;
  /** A task converged (NotifyTerminal): push it to its watchers. */
  onTerminal?(taskId: string, state: TerminalTaskState, result: TaskResult): void;
  /** An ALLOCATED slot expired without a submission; the task id is unknown again. */
  onSlotReclaimed?(taskId: string): void;
  /** Admissions opened or closed (drive grpc.health.v1). */
  onServingChanged?(change: ServingStatusChanged): void;
  /** Draining and no slot in use any more. */
  onDrained?(): void;
  /** A phase's work ended and its result went to the core (metrics: phase durations). */
  onPhaseFinished?(timing: PhaseTiming): void;
  /** `tasks` tasks (two or more) ran `phase` fused (docs/task-fusion.md; metrics: fused tasks). */
  onPhaseFused?(phase: PhaseName, tasks: number): void;
}

export type PhaseName = 'builder' | 'calls' | 'plugin';

/** What a listener learns of an admitted task: nothing of its input beyond the builder type. */
export interface AdmittedTask {
  readonly taskId: string;
  /** The Call Builder plugin type. */
  readonly builder: string;
  readonly acceptedAtMs: number;
  /** The submitter, when known. */
  readonly client?: string;
}

/** One phase of one task, from its Start command to its result (admission wait included). */
export interface PhaseTiming {
  readonly taskId: string;
  readonly phase: PhaseName;
  readonly durationMs: number;
}

export interface OrchestratorOptions {
  readonly core: WorkerCore;
  readonly plugins: Pick<PluginRegistry, 'builders' | 'writers'>;
  readonly callRunner: CallPhaseRunner;
  readonly codeEpochs: CodeEpochSource;
  readonly ioScopes: TaskIoScopeFactory;
  /** Phase admission limits (default: 16 / 32 / 16 / 8, docs/task-lifecycle.md § Defaults). */
  readonly admission?: AdmissionSlots;
  /** Wall-clock milliseconds; made non-decreasing here (the core requires it). Default Date.now. */
  readonly clock?: () => number;
  readonly logger?: ServiceLogger;
  /** Half-life and floor of the heartbeat `errorRate` (core/health/error-rate.ts, docs/health.md). */
  readonly errorRate?: ErrorRateOptions;
  /**
   * Task fusion (docs/task-fusion.md): the most tasks one fused phase runs (worker.fusion.maxTasks).
   * Default 1: no fusion (the Worker passes its config's value, 64 by default).
   */
  readonly fusionMaxTasks?: number;
}

export class Orchestrator {
  readonly core: WorkerCore;
  readonly sems: AdmissionSemaphores;
  private readonly logger: ServiceLogger;
  private readonly clock: () => number;
  private readonly runtimes: TaskRuntimes;
  private readonly listeners = new Set<OrchestratorListener>();
  private readonly phases: PhaseContext;
  private readonly errorRate: WorkerErrorRate;
  private readonly fusion: PhaseFusion;
  private lastNow = Number.NEGATIVE_INFINITY;
  private queue: WorkerCommand[] = [];
  private applying = false;
  /** Set from `start()` to `stop()`: no timer is armed outside them. */
  private timer: DeadlineTimer | undefined;

  constructor(options: OrchestratorOptions) {
    this.core = options.core;
    this.sems = createAdmissionSemaphores(options.admission);
    this.logger = options.logger ?? silentLogger;
    this.clock = options.clock ?? Date.now;
    this.runtimes = new TaskRuntimes(this.logger);
    this.errorRate = new WorkerErrorRate(options.errorRate);
    this.phases = {
      core: this.core,
      plugins: options.plugins,
      callRunner: options.callRunner,
      codeEpochs: options.codeEpochs,
      ioScopes: options.ioScopes,
      sems: this.sems,
      now: () => this.now(),
      feed: (input) => this.feed(input),
      runtime: (taskId) => this.runtimes.get(taskId),
      closeScope: (taskId, scope) => this.runtimes.closeScope(taskId, scope),
    };
    this.fusion = new PhaseFusion(this.phases, {
      maxTasks: options.fusionMaxTasks ?? 1,
      logger: this.logger,
      track: (phase, taskIds, run) => this.trackPhase(phase, taskIds, run),
    });
  }

  addListener(listener: OrchestratorListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Milliseconds, never going backwards. */
  now(): number {
    const t = this.clock();
    if (t > this.lastNow) this.lastNow = t;
    return this.lastNow;
  }

  // ---- Inputs --------------------------------------------------------------------------------------

  /** Runs one core input now and applies its commands. Admission inputs throw WorkerAdmissionError. */
  feed<R>(input: (now: number) => Step<R>, taskId?: string): R {
    const now = this.now();
    const step = input(now);
    const result = step.result;
    if (isIgnored(result)) {
      const fields = taskId === undefined ? {} : { task_id: taskId };
      this.logger.debug({ ...fields, reason: result.reason }, result.message);
    }
    this.apply(step.commands);
    this.rearm(now);
    return result;
  }

  /** `client`: who asked (src/grpc/peer-identity.ts), for the per-client reservation rules. */
  requestTaskSlot(taskId: string, ttlMs: number, client?: string): RequestTaskSlotResult {
    return this.feed((now) => this.core.handleRequestTaskSlot(taskId, ttlMs, now, client));
  }

  /** Throws InvalidArgument when `ttlMs` is not a TTL RequestTaskSlot accepts (RequestTaskSlots). */
  checkSlotTtl(ttlMs: number): void {
    this.core.checkSlotTtl(ttlMs);
  }

  submitTask(input: TaskInput, slotId: string | undefined, client?: string): SubmitTaskResult {
    return this.feed((now) => this.core.handleSubmitTask(input, slotId, now, client));
  }

  /** `client`: only that client's task is found (docs/security.md § Roles); omitted: any. */
  getTaskResult(taskId: string, client?: string): TaskStatus {
    return this.core.handleGetTaskResult(taskId, this.now(), client);
  }

  taskSnapshot(taskId: string, client?: string): TaskSnapshot {
    return this.core.taskSnapshot(taskId, this.now(), client);
  }

  watchAttached(taskId: string): void {
    this.feed((now) => this.core.handleWatchAttached(taskId, now), taskId);
  }

  watchDetached(taskId: string): void {
    this.feed((now) => this.core.handleWatchDetached(taskId, now), taskId);
  }

  executorReady(): void {
    this.feed((now) => this.core.handleExecutorReady(now));
  }

  executorLost(reason: string): void {
    this.logger.warn({ reason }, 'executor lost; admissions closed until it is ready again');
    this.feed((now) => this.core.handleExecutorLost(now));
  }

  startDraining(): void {
    this.feed((now) => this.core.handleStartDraining(now));
  }

  tick(): void {
    this.feed((now) => this.core.tickTimers(now));
  }

  // ---- Lifecycle -----------------------------------------------------------------------------------

  /** Starts the timers (the deadline timer and the `timerScanMs` scan). */
  start(): void {
    if (this.timer === undefined) {
      this.timer = new DeadlineTimer(() => this.tick());
      this.timer.scanEvery(this.core.config.timerScanMs);
    }
    this.rearm(this.now());
  }

  /** Stops the timers. Tasks in flight keep running until `abortAll` or process exit. */
  stop(): void {
    this.timer?.stop();
    this.timer = undefined;
  }

  /**
   * Aborts every active task's context (shutdown after the drain bound). Phases waiting for admission
   * fail CANCELLED; running builders, calls and writers see the signal.
   */
  abortAll(reason: string): void {
    this.runtimes.abortAll(reason);
  }

  /** Resolves once every IO scope of a converged task is closed. */
  settled(): Promise<void> {
    return this.runtimes.settled();
  }

  /** Tasks between PrepareTaskActivation and ConvergeTask. */
  get activeTasks(): number {
    return this.runtimes.size;
  }

  /**
   * Heartbeat `errorRate` as of now: the decayed share of recent tasks that failed through the worker's
   * fault, never a user function's or a task config's (core/health/error-rate.ts, docs/health.md).
   */
  get recentErrorRate(): number {
    return this.errorRate.rateAt(this.now());
  }

  // ---- Commands ------------------------------------------------------------------------------------

  private apply(commands: readonly WorkerCommand[]): void {
    if (commands.length === 0) return;
    for (const c of commands) this.queue.push(c);
    if (this.applying) return;
    this.applying = true;
    try {
      for (let i = 0; i < this.queue.length; i++) {
        const command = this.queue[i] as WorkerCommand;
        try {
          this.execute(command);
        } catch (err) {
          this.logger.error(
            { task_id: taskIdOf(command), err: describeError(err) },
            `command ${command.type} failed`,
          );
        }
      }
    } finally {
      this.queue = [];
      this.applying = false;
    }
  }

  private execute(command: WorkerCommand): void {
    switch (command.type) {
      case 'PrepareTaskActivation':
        this.prepare(command);
        break;
      case 'StartBuilderPhase':
        if (!this.fusion.offerBuilder(command))
          this.runPhase('builder', command.taskId, () => runBuilderPhase(this.phases, command));
        break;
      case 'StartCallPhase':
        if (!this.fusion.offerCalls(command))
          this.runPhase('calls', command.taskId, () => runCallPhase(this.phases, command));
        break;
      case 'StartWriterPhase':
        if (!this.fusion.offerWriter(command))
          this.runPhase('plugin', command.taskId, () => runWriterPhase(this.phases, command));
        break;
      case 'CancelTaskCalls':
        this.runtimes.abort(command.taskId, `task calls cancelled: ${command.reason}`);
        break;
      case 'ConvergeTask':
        this.converge(command);
        break;
      case 'NotifyTerminal':
        this.notify((l) => l.onTerminal?.(command.taskId, command.state, command.result));
        break;
      case 'SlotReclaimed':
        this.logger.debug(
          { task_id: command.taskId, slot_id: command.slotId },
          'slot lease expired; slot reclaimed',
        );
        this.notify((l) => l.onSlotReclaimed?.(command.taskId));
        break;
      case 'ServingStatusChanged':
        this.logger.info(
          { serving: command.serving, ready: command.ready, draining: command.draining },
          command.serving ? 'worker serving' : 'worker not serving',
        );
        this.notify((l) => l.onServingChanged?.(command));
        break;
      case 'Drained':
        this.logger.info({}, 'worker drained: no slot in use');
        this.notify((l) => l.onDrained?.());
        break;
      default: {
        const unreachable: never = command;
        throw new Error(`unknown worker command ${JSON.stringify(unreachable)}`);
      }
    }
  }

  private prepare(cmd: PrepareTaskActivation): void {
    const rt = this.runtimes.create(cmd, this.phases.plugins);
    this.logger.info(
      {
        task_id: cmd.taskId,
        slot_id: cmd.slotId,
        timeout_ms: cmd.timeoutMs,
        builder: cmd.input.functionCallConfig.type,
      },
      'task accepted',
    );
    const admitted: AdmittedTask = {
      taskId: cmd.taskId,
      builder: cmd.input.functionCallConfig.type,
      acceptedAtMs: cmd.acceptedAtMs,
      ...(cmd.client === undefined ? {} : { client: cmd.client }),
    };
    this.notify((l) => l.onTaskAdmitted?.(admitted));
    void activateTask(this.phases, cmd, rt).catch((err: unknown) => this.phaseCrashed(cmd.taskId, err));
  }

  private converge(cmd: ConvergeTask): void {
    const rt = this.runtimes.get(cmd.taskId);
    const ex = cmd.result.executeResult;
    this.errorRate.step({
      type: 'TaskTerminal',
      now: this.now(),
      outcome: {
        succeeded: cmd.state === TaskState.SUCCEEDED,
        failureCode: ex.failureCode,
        retryable: ex.retryable,
        failureMessage: ex.failureMessage,
      },
    });
    const fields = {
      task_id: cmd.taskId,
      state: cmd.state === TaskState.SUCCEEDED ? 'SUCCEEDED' : 'FAILED',
      from_phase: cmd.fromPhase,
      ...(ex.failureCode === ''
        ? {}
        : { failure_code: ex.failureCode, retryable: ex.retryable, message: ex.failureMessage }),
      ...(rt === undefined ? {} : { duration_ms: this.now() - rt.acceptedAtMs }),
    };
    if (cmd.state === TaskState.SUCCEEDED) this.logger.info(fields, 'task succeeded');
    else this.logger.warn(fields, 'task failed');
    const abortReason = cmd.state === TaskState.FAILED ? `task converged (${ex.failureCode})` : undefined;
    this.runtimes.dispose(cmd.taskId, abortReason);
  }

  private runPhase(phase: PhaseName, taskId: string, run: () => Promise<void>): void {
    this.trackPhase(phase, [taskId], run());
  }

  /** Times a phase run of `taskIds` (one, or a fused group) and logs a crash of its promise. */
  private trackPhase(phase: PhaseName, taskIds: readonly string[], run: Promise<void>): void {
    const startedAt = this.now();
    if (taskIds.length > 1) this.notify((l) => l.onPhaseFused?.(phase, taskIds.length));
    void run.then(
      () => {
        const durationMs = this.now() - startedAt;
        for (const taskId of taskIds) this.notify((l) => l.onPhaseFinished?.({ taskId, phase, durationMs }));
      },
      (err: unknown) => this.phaseCrashed(taskIds.join(','), err),
    );
  }

  /** A phase function itself threw (a bug, not a task failure): log it; the task times out as usual. */
  private phaseCrashed(taskId: string, err: unknown): void {
    this.logger.error({ task_id: taskId, err: describeError(err) }, 'task phase crashed');
  }

  private notify(call: (listener: OrchestratorListener) => void): void {
    for (const listener of this.listeners) {
      try {
        call(listener);
      } catch (err) {
        this.logger.error({ err: describeError(err) }, 'orchestrator listener failed');
      }
    }
  }

  private rearm(now: number): void {
    this.timer?.arm(this.core.nextDeadline(), now);
  }
}

function isIgnored(result: unknown): result is Extract<Applied, { applied: false }> {
  return typeof result === 'object' && result !== null && (result as { applied?: unknown }).applied === false;
}

function taskIdOf(command: WorkerCommand): string | undefined {
  return 'taskId' in command ? command.taskId : undefined;
}
