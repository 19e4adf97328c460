// RunTasks (docs/batched-protocol.md § Worker): many SubmitTasks and their terminal updates on one
// bidirectional stream, driven by the Sans-IO credit core `RunStream` (core/run-stream.ts).
//
// Theory of operation, per stream:
//   - open: one message with the initial credits (`maxInFlight`);
//   - each request: every submission goes through the same checks and call as SubmitTask
//     (`submitTaskFromWire` + `orchestrator.submitTask`), with the credit decisions of the core; the
//     admissions of that request leave in ONE message right after it, with the credits they return
//     (refusals, retained results, duplicates), plus whatever terminal updates were waiting;
//   - a task admitted RUNNING is followed through the SubscriptionManager (`attach`: no snapshot, one
//     attached watch per task), so the stream counts as a watch exactly like WatchTasks;
//   - terminal updates are collected for `flushMs` (0: until the next setImmediate) and leave together,
//     with the credits they return, split so no message carries much more than 1 MiB of updates;
//   - backpressure: when `call.write()` returns false the stream stops reading requests and stops
//     flushing updates until 'drain'. New tasks need credits, credits leave only with messages, so a
//     client that stops reading makes the Worker hold at most `maxInFlight` tasks' outcomes;
//   - client half-close: the stream stays open until every in-flight task's terminal update is sent,
//     then ends with OK. Cancel / connection loss: watches are released (the Watch-disconnect grace
//     applies), timers stop, nothing is written after.
//   - a protocol violation (too many submissions without credit in a row, a request above
//     MAX_BATCH_TASKS tasks) fails the stream with RESOURCE_EXHAUSTED; an internal error is logged and
//     fails it with INTERNAL. Nothing throws out of a handler.

import * as grpc from '@grpc/grpc-js';
import { callerIdentity } from '../../../../grpc/peer-identity.js';
import { grpcStatusError } from '../../../../grpc/status.js';
import { UNDECODABLE_MESSAGE } from '../../../../grpc/proto.js';
import type {
  RunTasksRequestWireOut,
  RunTasksResponseWire,
  TaskAdmissionWire,
  TaskSubmissionWireOut,
  TaskUpdateWire,
} from '../../../../grpc/wire-types.js';
import {
  RunStream,
  WorkerAdmissionError,
  isTerminalState,
  type FailStream,
  type RunStreamMessage,
  type RunStreamStats,
} from '../../core/index.js';
import { taskErrorToWire, workerErrorStatus } from './error-status.js';
import type { Orchestrator } from '../orchestration/orchestrator.js';
import { describeError } from '../../../../kernel/errors.js';
import type { StreamWatch, SubscriptionManager, WatchUpdate } from './subscription-manager.js';
import {
  admissionToWire,
  approxUpdateBytes,
  echoTaskId,
  refusedAdmission,
  submitTaskFromWire,
  watchUpdateToWire,
  type TaskConfigValidator,
} from './wire.js';
import type { ServiceLogger } from '../../../../kernel/observability/service-logger.js';

/** `worker.runTasks.flushMs` when unset: terminal updates wait at most 2 ms to share a message. */
export const DEFAULT_RUN_TASKS_FLUSH_MS = 2;
/** Soft cap on the update bytes of one RunTasksResponse (a single larger update still goes alone). */
export const RUN_TASKS_UPDATE_BYTES_PER_MESSAGE = 1024 * 1024;

export interface RunTasksOptions {
  /** Initial credits of every stream: `worker.runTasks.maxInFlight` (default: the worker's taskSlots). */
  readonly maxInFlight: number;
  /** Flush window of terminal updates in ms; 0 = the next setImmediate. `worker.runTasks.flushMs`. */
  readonly flushMs: number;
  /** Default RUN_TASKS_UPDATE_BYTES_PER_MESSAGE. */
  readonly maxUpdateBytesPerMessage?: number;
}

export interface RunTasksDeps {
  readonly orchestrator: Pick<Orchestrator, 'submitTask'>;
  readonly subscriptions: Pick<SubscriptionManager, 'attach'>;
  readonly plugins: TaskConfigValidator;
  readonly logger: ServiceLogger;
  readonly options: RunTasksOptions;
}

export type RunTasksCall = grpc.ServerDuplexStream<RunTasksRequestWireOut, RunTasksResponseWire>;

/** One stream's figures (tests, diagnostics). */
export interface RunTasksStreamStats extends RunStreamStats {
  /** Terminal updates the Worker holds for this stream: queued, or written and not yet taken by gRPC. */
  readonly pendingOutbound: number;
  /** Messages written and not yet taken by gRPC's transport. */
  readonly unacknowledgedWrites: number;
  /** Reading requests is paused because the client does not read (write() returned false). */
  readonly readingPaused: boolean;
  readonly requests: number;
  readonly submissions: number;
}

/** Every open RunTasks stream of one Worker. */
export class RunTasksStreams {
  private readonly open = new Set<RunTasksStream>();

  constructor(private readonly deps: RunTasksDeps) {
    if (!Number.isSafeInteger(deps.options.maxInFlight) || deps.options.maxInFlight <= 0) {
      throw new RangeError(
        `runTasks.maxInFlight must be a positive integer, got ${deps.options.maxInFlight}`,
      );
    }
    if (!Number.isSafeInteger(deps.options.flushMs) || deps.options.flushMs < 0) {
      throw new RangeError(`runTasks.flushMs must be a non-negative integer, got ${deps.options.flushMs}`);
    }
  }

  /** The RunTasks handler: serves `call` until it ends. Never throws. */
  serve(call: RunTasksCall): void {
    let stream: RunTasksStream | undefined;
    try {
      stream = new RunTasksStream(call, this.deps, () => {
        if (stream !== undefined) this.open.delete(stream);
      });
      this.open.add(stream);
      stream.start();
    } catch (err) {
      this.deps.logger.error({ rpc: 'RunTasks', err: describeError(err) }, 'RunTasks failed to open');
      if (stream !== undefined) this.open.delete(stream);
      call.emit('error', grpcStatusError(grpc.status.INTERNAL, `internal error: ${describeError(err)}`));
    }
  }

  get size(): number {
    return this.open.size;
  }

  stats(): RunTasksStreamStats[] {
    return [...this.open].map((s) => s.stats());
  }
}

class RunTasksStream {
  private readonly core: RunStream<TaskAdmissionWire, TaskUpdateWire>;
  private readonly watch: StreamWatch;
  private readonly maxUpdateBytes: number;
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  /** Ended, failed or cancelled: nothing is written or processed any more. */
  private done = false;
  private writable = true;
  private readingPaused = false;
  private unackedWrites = 0;
  private unackedUpdates = 0;
  private requests = 0;
  private submissions = 0;
  /** Who opened the stream: every inline reservation on it is that client's. */
  private readonly client: string;

  constructor(
    private readonly call: RunTasksCall,
    private readonly deps: RunTasksDeps,
    private readonly onClosed: () => void,
  ) {
    this.core = new RunStream({ window: deps.options.maxInFlight });
    this.client = callerIdentity(call);
    this.maxUpdateBytes = deps.options.maxUpdateBytesPerMessage ?? RUN_TASKS_UPDATE_BYTES_PER_MESSAGE;
    this.watch = deps.subscriptions.attach(
      [],
      { send: (u) => this.guard('update', () => this.onTerminal(u)) },
      this.client,
    );
  }

  start(): void {
    const call = this.call;
    call.on('data', (req: RunTasksRequestWireOut) => this.guard('request', () => this.onRequest(req)));
    call.on('end', () => this.guard('end', () => this.onInputEnded()));
    call.on('drain', () => this.guard('drain', () => this.onDrain()));
    // The client cancelled or the connection died (keepalive included); 'close' and 'error' are safety
    // nets. Either way: detach the watches (grace applies), stop the timers, write nothing more.
    call.on('cancelled', () => this.release());
    call.on('close', () => this.release());
    call.on('error', () => this.release());
    this.flush();
  }

  stats(): RunTasksStreamStats {
    const core = this.core.stats();
    return {
      ...core,
      pendingOutbound: core.queuedUpdates + this.unackedUpdates,
      unacknowledgedWrites: this.unackedWrites,
      readingPaused: this.readingPaused,
      requests: this.requests,
      submissions: this.submissions,
    };
  }

  // ---- Inputs --------------------------------------------------------------------------------------

  private onRequest(req: RunTasksRequestWireOut): void {
    if (this.done) return;
    if ((req as unknown) === UNDECODABLE_MESSAGE) {
      this.failWith(
        grpcStatusError(grpc.status.INVALID_ARGUMENT, 'a RunTasksRequest that protobuf cannot decode'),
      );
      return;
    }
    this.requests++;
    const tasks = req.tasks ?? [];
    const verdict = this.core.requestReceived(tasks.length);
    if (verdict.type === 'FailStream') {
      this.violation(verdict);
      return;
    }
    for (const submission of tasks) {
      if (!this.admit(submission)) return;
    }
    // The admissions of this request leave now, together, even when the client is slow to read: they
    // are bounded by the request the client just sent.
    this.flush(true);
  }

  /** One submission through the core and SubmitTask. False when the stream failed. */
  private admit(submission: TaskSubmissionWireOut): boolean {
    this.submissions++;
    const verdict = this.core.submissionReceived();
    let taskId = echoTaskId(submission.task?.taskId ?? '');
    switch (verdict.type) {
      case 'FailStream':
        this.violation(verdict);
        return false;
      case 'RefuseNoCredit': {
        const status = workerErrorStatus(WorkerAdmissionError.noCredit(taskId, verdict.window));
        this.core.admissionDecided(taskId, 'Refused', refusedAdmission(taskId, taskErrorToWire(status)));
        return true;
      }
      case 'Admit':
        break;
      default: {
        const unreachable: never = verdict;
        throw new Error(`unknown submission verdict ${JSON.stringify(unreachable)}`);
      }
    }
    let result;
    try {
      const { input, slotId } = submitTaskFromWire(submission, this.deps.plugins);
      taskId = echoTaskId(input.taskId);
      result = this.deps.orchestrator.submitTask(input, slotId, this.client);
    } catch (err) {
      const status = workerErrorStatus(err);
      // Not an admission outcome but a bug: the guard logs it and fails the stream with INTERNAL.
      if (status.code === undefined) throw err;
      this.deps.logger.debug({ task_id: taskId, rpc: 'RunTasks', code: status.code }, status.message);
      this.core.admissionDecided(taskId, 'Refused', refusedAdmission(taskId, taskErrorToWire(status)));
      return true;
    }
    if (isTerminalState(result.state)) {
      this.core.admissionDecided(result.taskId, 'Terminal', admissionToWire(result));
      return true;
    }
    const decided = this.core.admissionDecided(result.taskId, 'Running', admissionToWire(result));
    // After the core knows the task is in flight: a task that already turned terminal is delivered by
    // `attach` at once, and its update must find it in flight.
    if (decided.type === 'Watch') this.watch.attach([result.taskId]);
    return true;
  }

  private onTerminal(update: WatchUpdate): void {
    if (this.done) return;
    const wire = watchUpdateToWire(update);
    if (!this.core.terminal(update.taskId, wire, approxUpdateBytes(wire))) return;
    this.scheduleFlush();
  }

  private onInputEnded(): void {
    if (this.done) return;
    this.core.inputEnded();
    this.flush();
  }

  private onDrain(): void {
    if (this.done) return;
    this.writable = true;
    this.flush();
    if (this.writable && this.readingPaused && !this.done) {
      this.readingPaused = false;
      this.call.resume();
    }
  }

  // ---- Output --------------------------------------------------------------------------------------

  private scheduleFlush(): void {
    if (this.timer !== undefined || this.immediate !== undefined) return;
    const fire = (): void => {
      this.timer = undefined;
      this.immediate = undefined;
      // A client that does not read gets its updates on 'drain', not into gRPC's buffers.
      if (this.writable) this.guard('flush', () => this.flush());
    };
    if (this.deps.options.flushMs === 0) {
      this.immediate = setImmediate(fire);
      this.immediate.unref();
    } else {
      this.timer = setTimeout(fire, this.deps.options.flushMs);
      this.timer.unref();
    }
  }

  /**
   * Writes what the outbox holds: one message, more while the call stays writable. `evenIfBlocked`
   * sends the first message although the call is not writable (the admissions of a request).
   */
  private flush(evenIfBlocked = false): void {
    this.clearTimers();
    if (this.done) return;
    let force = evenIfBlocked;
    while ((this.writable || force) && this.core.hasQueued) {
      force = false;
      const message = this.core.takeMessage(this.maxUpdateBytes);
      if (message === undefined) break;
      this.write(message);
    }
    // Whatever is left waits for 'drain'.
    if (this.core.finished) {
      this.release();
      this.call.end();
    }
  }

  private write(message: RunStreamMessage<TaskAdmissionWire, TaskUpdateWire>): void {
    const updates = message.updates.length;
    this.unackedWrites++;
    this.unackedUpdates += updates;
    const wire: RunTasksResponseWire = {
      credits: message.credits,
      admissions: [...message.admissions],
      updates: [...message.updates],
    };
    const ok = this.call.write(wire, () => {
      this.unackedWrites--;
      this.unackedUpdates -= updates;
    });
    if (!ok) {
      this.writable = false;
      if (!this.readingPaused) {
        this.readingPaused = true;
        this.call.pause();
      }
    }
  }

  // ---- Ending --------------------------------------------------------------------------------------

  private violation(verdict: FailStream): void {
    this.deps.logger.warn({ rpc: 'RunTasks', reason: verdict.reason }, verdict.message);
    this.failWith(grpcStatusError(grpc.status.RESOURCE_EXHAUSTED, verdict.message));
  }

  /** Ends the call with `err` (see failServerStream: grpc-js sends the status when the stream ends). */
  private failWith(err: grpc.ServiceError): void {
    if (this.done) return;
    this.release();
    this.call.emit('error', err);
  }

  /** Detaches every watch (the Watch-disconnect grace applies), stops the timers. Idempotent. */
  private release(): void {
    if (this.done) return;
    this.done = true;
    this.clearTimers();
    this.core.close();
    this.watch.close();
    if (this.readingPaused) {
      this.readingPaused = false;
      this.call.resume(); // let grpc-js read (and drop) what the client still sends
    }
    this.onClosed();
  }

  private clearTimers(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.immediate !== undefined) clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
  }

  /** Runs an input; an unexpected throw is logged and fails the stream with INTERNAL. */
  private guard(what: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.deps.logger.error({ rpc: 'RunTasks', err: describeError(err) }, `RunTasks ${what} failed`);
      this.failWith(grpcStatusError(grpc.status.INTERNAL, `internal error: ${describeError(err)}`));
    }
  }
}
