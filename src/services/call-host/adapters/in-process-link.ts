// InProcessLink: the executor link's commands (ExecutorLinkCommands, executor-call-io.ts) carried out
// inside the Worker process, FOR DEVELOPMENT AND TESTS ONLY. The Calls phase is the real one: the
// ExecutorCallRunner and its Sans-IO dispatcher decide retries, budgets (`callDeadlineMs`), fastFail,
// the output cap, subcalls and task cancellation exactly as they do over the executor socket; only the
// far end of the link is different. The functions themselves run the executor's way: resolved by the
// executor's rules (in-process-functions.ts), called with the executor's `ctx` (executor/call-context.ts),
// and every outcome passes through the executor's own frames (executor/call-outcome.ts: a thrown value
// read defensively and classified, a return value that JSON cannot carry or that exceeds the frame limit
// failed) and the link core's frame → event translation (core/link/frames.ts). Arguments and answers go
// through JSON as on the wire, `io.get` / `io.getMany` answers are frozen as an execution thread freezes
// them, and no event is ever emitted inside the command that caused it (a microtask later at the earliest).
//
// What it cannot do (docs/executor.md § In-process functions): isolate anything. A function shares the
// Worker's event loop, memory and globals; `CancelCall` aborts `ctx.signal` and rejects its open
// requests, but a function that ignores them keeps running (the dispatcher has written the attempt off,
// so its late outcome is dropped), and a hot loop blocks the whole Worker. No read copies, no per-task
// module instances, no memory bound. The link is ready from the start and is never lost.

import {
  cancelRunningCall,
  cancellationError,
  completedFrameOf,
  failedFrameOf,
  invokeFunction,
  newRunningCall,
  type CallHost,
  type LogLevel,
  type RunningCall,
} from '../../../executor/call-context.js';
import { failedFrame } from '../../../executor/call-outcome.js';
import { CallAlreadyInFlightError } from '../../../executor/errors.js';
import { DEFAULT_MAX_FRAME_BYTES } from '../../../executor/frame-codec.js';
import {
  attemptKey,
  type CallCompletedMessage,
  type CallFailedMessage,
  type ExecuteCallMessage,
  type WaitRequest,
} from '../../../executor/protocol.js';
import { deepFreeze } from '../../../executor/read-copies.js';
import { CallWaitError, type LogFields } from '../../../executor/sdk.js';
import { DEFAULT_DISPATCHER_CONFIG } from '../core/dispatcher/index.js';
import { failedEvent, terminalEvent } from '../core/link/frames.js';
import type { ExecutorCallRunnerOptions, ExecutorLinkCommands } from './executor-call-io.js';
import { ExecutorCallRunner } from './executor-call-runner.js';
import { executeCallJson } from './frames-as-text.js';
import {
  serveWaiting,
  type ExecuteCallCommand,
  type ExecutorLinkEvent,
  type ResumeOutcome,
  type WaitingRequest,
} from './executor-link.js';
import { InProcessFunctions } from './in-process-functions.js';
import { silentLogger, type ServiceLogger } from '../../../kernel/observability/service-logger.js';

export interface InProcessLinkOptions {
  /** Folder of the function files (`config.functions.dir`). */
  readonly functionsDir: string;
  /** Every link event (the runner's `handleEvent`). */
  readonly onEvent: (event: ExecutorLinkEvent) => void;
  /** Serve an IO request (the runner's `serveWaiting`); undefined leaves it to `callWaiting` handlers. */
  readonly onWaiting?: (request: WaitingRequest) => Promise<ResumeOutcome> | undefined;
  /** Where `ctx.log` lines go, with `task_id`, `call_id`, `attempt` and `function`. */
  readonly logger?: ServiceLogger;
  /** The largest CallCompleted frame (the value's JSON plus its envelope). Default the executor's. */
  readonly maxFrameBytes?: number;
}

type Waiter = { resolve: (v: unknown) => void; reject: (e: unknown) => void };

export class InProcessLink implements ExecutorLinkCommands {
  /** Always: there is no executor to wait for or to lose. */
  readonly ready = true;
  private readonly opts: InProcessLinkOptions;
  private readonly functions: InProcessFunctions;
  private readonly logger: ServiceLogger;
  private readonly maxFrameBytes: number;
  private readonly running = new Map<string, RunningCall>();
  private readonly host: CallHost;
  private closed = false;

  constructor(options: InProcessLinkOptions) {
    this.opts = options;
    this.functions = new InProcessFunctions(options.functionsDir);
    this.logger = options.logger ?? silentLogger;
    this.maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    this.host = {
      wait: (run, request) => this.wait(run, request),
      log: (run, level, message, fields) => this.log(run, level, message, fields),
    };
  }

  /** The absolute functions folder. */
  get functionsDir(): string {
    return this.functions.dir;
  }

  /** Attempts accepted and not yet terminal. */
  get inflight(): number {
    return this.running.size;
  }

  executeCall(command: ExecuteCallCommand): void {
    const key = attemptKey(command.callId, command.attempt);
    if (this.running.has(key)) throw new CallAlreadyInFlightError(command.callId, command.attempt);
    const { taskId, callId, attempt } = command;
    let call: ExecuteCallMessage;
    try {
      // What the executor would receive: arguments and block through JSON.
      call = JSON.parse(executeCallJson(command)) as ExecuteCallMessage;
    } catch (err) {
      const why = `cannot send the call to the executor: ${(err as Error).message}`;
      this.emitLater(failedEvent({ taskId, callId, attempt }, 'user', false, why));
      return;
    }
    const run = newRunningCall(call, key, performance.now());
    this.running.set(key, run);
    if (this.closed) {
      const message = 'the in-process link is closed';
      this.finish(run, failedFrame(call, { kind: 'executor_crash', retryable: true, message }));
      return;
    }
    void this.functions.load(call.codeEpoch, call.function).then((loaded) => {
      if (run.done) return;
      if (run.cancelReason !== undefined) {
        this.finishFailed(run, cancellationError(run.cancelReason));
      } else if (!loaded.ok) {
        this.finish(
          run,
          failedFrame(call, { kind: 'load', retryable: false, code: loaded.code, message: loaded.message }),
        );
      } else {
        this.opts.onEvent({ type: 'callStarted', taskId, callId, attempt, elapsedMs: 0 });
        invokeFunction(
          run,
          this.host,
          loaded.fn,
          (v) => this.finishCompleted(run, v),
          (e) => this.finishFailed(run, e),
        );
      }
    });
  }

  /**
   * Each attempt as `executeCall`; one still in flight fails on a microtask instead of throwing. The
   * in-process path stays per call both ways: every function runs on the Worker's own loop and reports
   * one terminal event, as there is no frame to share (docs/executor.md § In-process functions).
   */
  executeCalls(commands: readonly ExecuteCallCommand[]): void {
    for (const command of commands) {
      try {
        this.executeCall(command);
      } catch (err) {
        const why = `the executor link refused the call: ${(err as Error).message}`;
        this.emitLater(failedEvent(command, 'executor_crash', true, why));
      }
    }
  }

  cancelCall(callId: string, attempt: number, reason = 'cancelled by the worker'): void {
    const run = this.running.get(attemptKey(callId, attempt));
    if (run) cancelRunningCall(run, reason);
  }

  /** Answer an open request. Unknown attempts and requests are ignored (the call has ended). */
  resumeCall(callId: string, attempt: number, outcome: ResumeOutcome): void {
    const run = this.running.get(attemptKey(callId, attempt));
    const waits = run?.waits;
    if (!waits) return;
    const requestId = outcome.requestId ?? waits.keys().next().value;
    const waiter = requestId === undefined ? undefined : waits.get(requestId);
    if (requestId === undefined || !waiter) return;
    waits.delete(requestId);
    if (!outcome.ok) {
      // As an execution thread reads a failed ResumeCall (its kind defaults to io, not retryable).
      const e = outcome.error;
      const fields = { kind: e.kind ?? 'io', retryable: e.retryable ?? false, code: e.code };
      waiter.reject(new CallWaitError(e.message, fields));
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(JSON.stringify(outcome.value ?? null)) as unknown;
    } catch (err) {
      const message = `the answer cannot be sent to the executor: ${(err as Error).message}`;
      waiter.reject(new CallWaitError(message, { kind: 'io', retryable: false }));
      return;
    }
    waiter.resolve(value);
  }

  /** No read copies in-process: nothing to drop. */
  dropIoCache(_ioCache: string): void {}

  /**
   * Refuse new attempts (they fail retryably, as after a lost executor) and cancel the running ones.
   * A function that ignores its signal cannot be stopped (see the opening comment).
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const run of [...this.running.values()])
      this.cancelCall(run.call.callId, run.call.attempt, 'the worker is shutting down');
  }

  // ---- a running call ----------------------------------------------------------------------------------

  /** `ctx.io.*` and `ctx.call`: a CallWaiting the runner answers (IO) or the dispatcher does (subcall). */
  private wait(run: RunningCall, request: WaitRequest): Promise<unknown> {
    if (run.cancelReason !== undefined) return Promise.reject(cancellationError(run.cancelReason));
    if (run.done) return Promise.reject(new Error('the call has already finished'));
    let sent: WaitRequest;
    try {
      sent = JSON.parse(JSON.stringify(request)) as WaitRequest;
    } catch (err) {
      return Promise.reject(
        new TypeError(`request arguments are not JSON-serialisable: ${(err as Error).message}`),
      );
    }
    const requestId = ++run.nextRequestId;
    const waits = (run.waits ??= new Map<number, Waiter>());
    const answer = new Promise<unknown>((resolve, reject) => waits.set(requestId, { resolve, reject }));
    const { taskId, callId, attempt } = run.call;
    const req: WaitingRequest = { taskId, callId, attempt, requestId, request: sent };
    // Outside the function's own turn: events never re-enter the runner from inside user code.
    queueMicrotask(() => {
      if (run.done || run.waits?.get(requestId) === undefined) return;
      this.opts.onEvent({ type: 'callWaiting', ...req });
      serveWaiting(this.opts.onWaiting, req, (c, a, outcome) => this.resumeCall(c, a, outcome));
    });
    // get / getMany answers are frozen, as on an execution thread (read copies or not).
    return sent.kind === 'io' && sent.op !== 'scan' ? answer.then(deepFreeze) : answer;
  }

  private log(run: RunningCall, level: LogLevel, message: string, fields: LogFields | undefined): void {
    const { taskId, callId, attempt } = run.call;
    this.logger[level](
      { ...fields, task_id: taskId, call_id: callId, attempt, function: run.call.function },
      message,
    );
  }

  private finishCompleted(run: RunningCall, value: unknown): void {
    if (!run.done) this.finish(run, completedFrameOf(run, value, this.maxFrameBytes));
  }

  private finishFailed(run: RunningCall, err: unknown): void {
    if (!run.done) this.finish(run, failedFrameOf(run, err));
  }

  /** The attempt's one terminal event, from its frame (as the socket link reads it), on a microtask. */
  private finish(run: RunningCall, frame: string): void {
    run.done = true;
    run.waits = undefined;
    this.running.delete(run.key);
    const m = JSON.parse(frame) as CallCompletedMessage | CallFailedMessage;
    const bytes = m.type === 'CallCompleted' ? Buffer.byteLength(frame) : 0;
    this.emitLater(terminalEvent(run.call, m, bytes));
  }

  private emitLater(event: ExecutorLinkEvent): void {
    queueMicrotask(() => this.opts.onEvent(event));
  }
}

export interface InProcessCallRunnerOptions
  extends
    Omit<ExecutorCallRunnerOptions, 'link' | 'readCopies'>,
    Pick<InProcessLinkOptions, 'functionsDir' | 'maxFrameBytes'> {}

/** The Worker's Calls phase with its functions in-process: the real runner over an InProcessLink. */
export interface InProcessCallRunner {
  readonly runner: ExecutorCallRunner;
  readonly link: InProcessLink;
  /** Ends the running Calls phases (CANCELLED) and cancels their calls. Idempotent. */
  close(): void;
}

export function createInProcessCallRunner(options: InProcessCallRunnerOptions): InProcessCallRunner {
  const { functionsDir, maxFrameBytes, ...runnerOptions } = options;
  // The link emits on microtasks only, so `runner` exists by the time its handlers run.
  const link = new InProcessLink({
    functionsDir,
    onEvent: (ev) => runner.handleEvent(ev),
    onWaiting: (req) => runner.serveWaiting(req),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(maxFrameBytes !== undefined ? { maxFrameBytes } : {}),
  });
  // No pages in-process (docs/executor.md § Pages): every call is its own attempt here anyway.
  const dispatcher = { ...(runnerOptions.dispatcher ?? DEFAULT_DISPATCHER_CONFIG), callPageRows: 1 };
  const runner: ExecutorCallRunner = new ExecutorCallRunner({
    ...runnerOptions,
    dispatcher,
    link,
    readCopies: false,
  });
  return {
    runner,
    link,
    close() {
      runner.close();
      link.close();
    },
  };
}
