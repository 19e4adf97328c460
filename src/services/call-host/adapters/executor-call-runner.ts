// ExecutorCallRunner: the real Calls phase. It owns one Sans-IO DispatcherCore for every task of the
// Worker and drives it from two sides:
//
//   orchestrator ── run(task, calls) ──▶ startCallPhase ─┐
//   task signal  ── abort ──────────────▶ cancelTask     ├─▶ commands ─▶ ExecuteCalls → link.executeCalls
//   link events  ── handleEvent(ev) ────▶ call*/executor*│             CancelCall  → link.cancelCall
//   one OS timer ── at nextDeadline() ──▶ tick           ┘             ResumeCall  → link.resumeCall
//                                                                      ConvergeTaskCalls → run() resolves
//
// IO requests of running calls (`ctx.io.*`) come through `serveWaiting`, the link's `onWaiting` port:
// the runner asks its `CallIoHandler` and the link answers the executor with the result. The dispatcher
// only records the wait (`callWaiting{kind:'io'}`, then `ioFinished`): the budget keeps running.
// Subcalls (`ctx.call`) are left to the dispatcher, which schedules the child and answers the parent
// with `ResumeCall`.
//
// Cost per call: one dispatcher input per link event, and a CallsCompleted frame's successes as one
// input (`callsCompleted`); the attempts a pump sends for a task as one ExecuteCalls command and one
// `link.executeCalls` (one ExecuteCallCommand object per attempt); no closure, promise or timer per call
// (a call's budget timer is armed only once it reports a start). The timer is re-armed at most once per turn (a microtask after a burst of events)
// and only when the earliest deadline moved earlier.

import type { CallBlock } from '../../../executor/protocol.js';
import type { CallSpec } from '../../../kernel/plugin-types.js';
import {
  DispatcherCore,
  DispatcherError,
  DispatcherErrorCode,
  resolveDispatcherConfig,
  type CallFailure,
  type ConvergeTaskCalls,
  type DispatcherCommand,
  type ExecuteCalls,
  type DispatcherStats,
  type TaskCancelReason,
} from '../core/dispatcher/index.js';
import {
  executeEach,
  noStorageIoHandler,
  realTimers,
  type CallIoHandler,
  type ExecutorCallRunnerOptions,
  type ExecutorLinkCommands,
} from './executor-call-io.js';
import {
  builderFailedOutcome,
  closedRunnerOutcome,
  convergedOutcome,
  retryLogLine,
  jsonByteLength,
  taskCancelReasonOf,
  toCallFailure,
} from './executor-call-mapping.js';
import type {
  ExecuteCallCommand,
  ExecutorLinkEvent,
  ResumeOutcome,
  WaitingRequest,
} from './executor-link.js';
import { CallRunnerTimer } from './call-runner-timer.js';
import { pageArgs, pageInfo } from './page-frames.js';
import { CallStreamFeeder } from './call-stream-feeder.js';
import { tenantKey } from './tenant-key.js';
import type { CallPhaseOutcome, CallPhaseRunner, CallPhaseTask } from '../ports.js';
import { silentLogger, type ServiceLogger } from '../../../kernel/observability/service-logger.js';

export type {
  CallIoHandler,
  CallIoRequest,
  ExecutorCallRunnerOptions,
  ExecutorLinkCommands,
  RunnerTimers,
} from './executor-call-io.js';
export { noStorageIoHandler } from './executor-call-io.js';
export {
  dispatcherConfigFromWorker,
  jsonByteLength,
  taskCancelReasonOf,
  toCallFailure,
} from './executor-call-mapping.js';

interface RunningTask {
  readonly taskId: string;
  readonly codeEpoch: string;
  /** The read-copy id of this Calls phase, when the IO handler caches answers (see ExecuteCall). */
  readonly ioCache: string | undefined;
  /**
   * Whether a call of this phase asked the Worker for a read (or reported read-copy hits). An executor
   * keeps read copies only of such answers, so a phase that read nothing needs no DropIoCache: under
   * `blockx submit` of one-call tasks that was one frame in two to the executor (docs/performance.md §
   * One-call tasks in the Executor).
   */
  read: boolean;
  /** The task's tenant: a key of its submitter (tenantKey). */
  readonly tenant: string;
  readonly signal: AbortSignal;
  readonly onAbort: () => void;
  resolve(outcome: CallPhaseOutcome): void;
}

export class ExecutorCallRunner implements CallPhaseRunner {
  readonly core: DispatcherCore;
  private readonly link: ExecutorLinkCommands;
  private readonly io: CallIoHandler;
  private readonly readCopies: boolean;
  private readonly clock: () => number;
  private readonly logger: ServiceLogger;
  private readonly tasks = new Map<string, RunningTask>();
  private readonly feeder: CallStreamFeeder;
  private readonly timer: CallRunnerTimer;
  private closed = false;
  /** Numbers the Calls phases this runner started (read-copy ids). */
  private phaseSeq = 0;

  constructor(options: ExecutorCallRunnerOptions) {
    this.link = options.link;
    this.io = options.io ?? noStorageIoHandler;
    this.readCopies = options.readCopies !== false && this.io.countCopyHits !== undefined;
    this.clock = options.clock ?? Date.now;
    this.logger = options.logger ?? silentLogger;
    this.core = new DispatcherCore(options.dispatcher ?? resolveDispatcherConfig(), {
      executorReady: options.link.ready,
      ...(options.random ? { random: options.random } : {}),
    });
    const core = this.core;
    this.timer = new CallRunnerTimer(
      options.timers ?? realTimers,
      this.clock,
      () => core.nextDeadline(),
      () => this.apply(core.tick(this.clock())),
      () => this.closed,
    );
    this.feeder = new CallStreamFeeder(
      {
        isAppending: (taskId) => core.isAppending(taskId),
        rootsPending: (taskId) => core.taskStats(taskId)?.rootsPending ?? 0,
        append: (taskId, calls) => {
          this.apply(core.appendCalls(taskId, calls, this.clock()));
          this.queueArm();
        },
        finish: (taskId) => {
          this.apply(core.finishAppending(taskId, this.clock()));
          this.queueArm();
        },
      },
      // A page forms within one append (core/dispatcher/pages.ts): append at least a page's worth.
      { highWater: 2 * core.config.taskMaxInflightCalls, batch: Math.max(64, core.config.callPageRows) },
    );
  }

  /** Tasks in their Calls phase. */
  get activeTasks(): number {
    return this.tasks.size;
  }

  stats(): DispatcherStats {
    return this.core.stats();
  }

  run(task: CallPhaseTask, calls: readonly CallSpec[]): Promise<CallPhaseOutcome> {
    return this.start(task, calls, false);
  }

  /**
   * The Calls phase of a streaming builder: calls are dispatched while `source` is still producing
   * them (see call-stream-feeder.ts for the memory bound). A failing source fails the phase with
   * BUILDER_FAILED, retryable as the error says (a storage error after its retries: yes).
   */
  async runStream(task: CallPhaseTask, source: AsyncIterable<CallSpec>): Promise<CallPhaseOutcome> {
    const outcome = this.start(task, [], true);
    const fed = await this.feeder.feed(task.taskId, source);
    if (fed.error !== undefined) this.cancelTask(task.taskId, 'CANCELLED');
    const result = await outcome;
    if (fed.error === undefined) return result;
    return builderFailedOutcome(fed.error);
  }

  private start(
    task: CallPhaseTask,
    calls: readonly CallSpec[],
    streaming: boolean,
  ): Promise<CallPhaseOutcome> {
    const { taskId, signal } = task;
    if (this.closed) {
      return Promise.resolve(closedRunnerOutcome());
    }
    if (this.tasks.has(taskId)) {
      return Promise.reject(
        new DispatcherError(
          DispatcherErrorCode.TASK_ALREADY_DISPATCHING,
          `task ${taskId} is already in its Calls phase`,
          { taskId },
        ),
      );
    }
    return new Promise<CallPhaseOutcome>((resolve, reject) => {
      const entry: RunningTask = {
        taskId,
        codeEpoch: task.codeEpoch,
        ioCache: this.readCopies ? `${taskId}#${++this.phaseSeq}` : undefined,
        read: false,
        tenant: tenantKey(task.client),
        signal,
        onAbort: () => this.cancelTask(taskId, taskCancelReasonOf(signal.reason)),
        resolve,
      };
      this.tasks.set(taskId, entry);
      const now = this.clock();
      let commands: readonly DispatcherCommand[];
      try {
        commands = this.core.startCallPhase(
          taskId,
          calls,
          { deadlineMs: task.deadlineMs, fastFail: true, streaming },
          now,
        );
      } catch (err) {
        this.tasks.delete(taskId);
        reject(err);
        return;
      }
      if (signal.aborted) {
        this.apply(commands);
        this.cancelTask(taskId, taskCancelReasonOf(signal.reason));
      } else {
        signal.addEventListener('abort', entry.onAbort, { once: true });
        this.apply(commands);
      }
      this.queueArm();
    });
  }

  /** Ends a task's phase now (its calls are cancelled); a task not in its Calls phase is ignored. */
  cancelTask(taskId: string, reason: TaskCancelReason): void {
    this.apply(this.core.cancelTask(taskId, reason, this.clock()));
    this.queueArm();
  }

  /** Every event of the executor link (the supervisor's `onEvent`). */
  handleEvent(ev: ExecutorLinkEvent): void {
    const core = this.core;
    switch (ev.type) {
      case 'callCompleted':
        if (ev.ioHits !== undefined) this.copyHits(ev.taskId, ev.ioHits);
        this.apply(
          core.callCompleted(
            ev.callId,
            ev.attempt,
            ev.value,
            ev.outputBytes ?? jsonByteLength(ev.value),
            this.clock(),
          ),
        );
        break;
      case 'callsCompleted': {
        const results = ev.results;
        for (let i = 0; i < results.length; i++) {
          const hits = results[i]!.ioHits;
          if (hits !== undefined && hits > 0) this.copyHits(ev.taskId, hits);
        }
        this.apply(core.callsCompleted(results, ev.outputBytesEach, this.clock()));
        break;
      }
      case 'callStarted':
        // The attempt has been on an executor thread for `elapsedMs`: its budget started then.
        core.callStarted(ev.callId, ev.attempt, this.clock() - Math.max(0, ev.elapsedMs));
        break;
      case 'callFailed':
        if (ev.ioHits !== undefined) this.copyHits(ev.taskId, ev.ioHits);
        this.apply(core.callFailed(ev.callId, ev.attempt, toCallFailure(ev), this.clock()));
        break;
      case 'callWaiting': {
        const r = ev.request;
        this.apply(
          core.callWaiting(
            ev.callId,
            ev.attempt,
            r.kind === 'subcall'
              ? { kind: 'subcall', function: r.function, args: r.args, waitId: ev.requestId }
              : { kind: 'io', waitId: ev.requestId, request: r },
            this.clock(),
          ),
        );
        break;
      }
      case 'executorReady':
        this.apply(core.executorReady(this.clock()));
        break;
      case 'executorLost':
        // After close() the executor is being stopped on purpose: not worth a warning.
        (this.closed ? this.logger.debug.bind(this.logger) : this.logger.warn.bind(this.logger))(
          { reason: ev.reason, pid: ev.pid, failed_attempts: ev.failedAttempts },
          'executor lost: its attempts fail retryably; dispatching resumes when an executor is ready',
        );
        this.apply(core.executorLost(this.clock()));
        break;
      case 'heartbeat':
        return;
      default: {
        const _exhaustive: never = ev;
        return _exhaustive;
      }
    }
    this.feeder.progress();
    this.queueArm();
  }

  /**
   * The link's `onWaiting` port: IO reads are served here (the link resumes the call with the result);
   * subcalls return undefined and are answered by the dispatcher's ResumeCall.
   */
  serveWaiting(req: WaitingRequest): Promise<ResumeOutcome> | undefined {
    const request = req.request;
    if (request.kind !== 'io') return undefined;
    this.markRead(req.taskId);
    let pending: Promise<unknown>;
    try {
      pending = this.io(req.taskId, request);
    } catch (err) {
      pending = Promise.reject(err);
    }
    return pending.then(
      (value): ResumeOutcome => {
        this.core.ioFinished(req.callId, req.attempt, this.clock());
        return { ok: true, value };
      },
      (err: unknown) => {
        this.core.ioFinished(req.callId, req.attempt, this.clock());
        throw err;
      },
    );
  }

  /** A call of `taskId`'s running phase read through the Worker: its executor may hold copies. */
  private markRead(taskId: string): void {
    const task = this.tasks.get(taskId);
    if (task !== undefined) task.read = true;
  }

  /** Read-copy hits of a call: counted by the IO handler, and the phase has copies to drop. */
  private copyHits(taskId: string, hits: number): void {
    this.io.countCopyHits?.(taskId, hits);
    if (hits > 0) this.markRead(taskId);
  }

  /** Ends every running task with CANCELLED (retryable) and stops the timer. Later runs are refused. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const taskId of [...this.tasks.keys()]) this.cancelTask(taskId, 'CANCELLED');
    this.timer.clear();
  }

  // ---- commands -------------------------------------------------------------------------------------

  private apply(commands: readonly DispatcherCommand[]): void {
    for (let i = 0; i < commands.length; i++) {
      const cmd = commands[i]!;
      switch (cmd.type) {
        case 'ExecuteCalls':
          this.execute(cmd);
          break;
        case 'CancelCall':
          this.link.cancelCall(cmd.callId, cmd.attempt, cmd.reason);
          break;
        case 'ResumeCall':
          this.link.resumeCall(
            cmd.callId,
            cmd.attempt,
            cmd.ok
              ? { requestId: cmd.waitId as number | undefined, ok: true, value: cmd.value }
              : {
                  requestId: cmd.waitId as number | undefined,
                  ok: false,
                  error: { message: cmd.error.message, kind: cmd.error.kind, retryable: cmd.error.retryable },
                },
          );
          break;
        case 'ConvergeTaskCalls':
          this.converge(cmd);
          break;
        default: {
          const _exhaustive: never = cmd;
          return _exhaustive;
        }
      }
    }
  }

  private execute(cmd: ExecuteCalls): void {
    const task = this.tasks.get(cmd.taskId);
    if (task === undefined) return; // cannot happen: the dispatcher only dispatches for live tasks
    const { taskId, codeEpoch, ioCache, tenant } = task;
    const budgetMs = cmd.budgetMs;
    const attempts = cmd.attempts;
    const calls = new Array<ExecuteCallCommand>(attempts.length);
    for (let i = 0; i < attempts.length; i++) {
      const a = attempts[i]!;
      const page = a.page;
      // One shape for every attempt (ioCache present, possibly undefined: the encoders leave it out).
      calls[i] = {
        taskId,
        callId: a.callId,
        attempt: a.attempt,
        function: a.function,
        args: page === undefined ? a.args : pageArgs(page),
        block: page === undefined ? (a.block as CallBlock | undefined) : undefined,
        codeEpoch,
        budgetMs,
        ioCache,
        tenant,
        page: page === undefined ? undefined : pageInfo(page),
      };
    }
    // An attempt the link refuses (an earlier one with the same id is still at the executor) comes back
    // as a retryable callFailed on a microtask, outside this command loop.
    executeEach(this.link, calls, (refused, err) => {
      const failure: CallFailure = {
        kind: 'executor_crash',
        retryable: true,
        message: `the executor link refused the call: ${(err as Error).message}`,
      };
      queueMicrotask(() => {
        this.apply(this.core.callFailed(refused.callId, refused.attempt, failure, this.clock()));
        this.queueArm();
      });
    });
  }

  private converge(cmd: ConvergeTaskCalls): void {
    const task = this.tasks.get(cmd.taskId);
    if (task === undefined) return;
    this.tasks.delete(cmd.taskId);
    task.signal.removeEventListener('abort', task.onAbort);
    // No call of this phase runs any more (a cancelled one still running reads past its copies). A phase
    // whose calls read nothing left no copies to drop.
    if (task.ioCache !== undefined && task.read) this.link.dropIoCache(task.ioCache);
    // A streaming task's feeder may be waiting for its backlog: the phase is over, let it stop.
    this.feeder.progress();
    if (cmd.retried !== undefined) {
      const line = retryLogLine(cmd.taskId, cmd.retried);
      this.logger.warn(line.fields, line.msg);
    }
    task.resolve(convergedOutcome(cmd));
  }

  /** Re-arm the timer once after the current burst of events (call-runner-timer.ts). */
  private queueArm(): void {
    this.timer.queueArm();
  }
}
