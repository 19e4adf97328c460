// One RunTasks stream to one Worker (docs/batched-protocol.md § Client): tasks are sent in batches of at
// most the Worker's credits, their admissions and terminal updates come back batched, and the stream is
// reopened (and its unfinished tasks sent again, with the same task ids and slots) when it breaks.
//
// What the stream guarantees its entries:
//   - `admitted` (RUNNING) at most once per send, `terminal` exactly once per entry that was admitted and
//     not lost, `refused` when the Worker refused the task (the credit it took comes back);
//   - credits: never more tasks sent and unanswered than the Worker granted;
//   - resending after a break is safe: SubmitTask semantics are idempotent per task id, so a task that
//     still runs answers RUNNING (and the new stream watches it) and a finished one answers its retained
//     result; it never runs a second time on that Worker.
//   - an entry that was admitted, sent again after a break and refused (the Worker restarted and forgot
//     it) is `lost` with NOT_FOUND, as a WatchTasks `not_found` after acceptance is on the unary path;
//   - after STREAM_FAILURE_LIMIT breaks in a row without a single message from the Worker, the Worker is
//     taken as gone: entries never admitted are `refused` with UNAVAILABLE (the runner reserves again),
//     admitted ones are `lost` (the task may have run: the task-level retry decides, docs/retries.md).
//
// Entries are cancelled by the runner (`cancel`): an unsent entry leaves the queue; a sent one stays
// tracked until the Worker answers for it (its credit must come back) but is no longer reported.
import type * as grpc from '@grpc/grpc-js';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { taskResultFromWire, taskStateFromWire, taskUpdateFromWire } from '../../grpc/convert.js';
import type { TaskResult, TaskState, TaskUpdate } from '../../grpc/domain-types.js';
import type { WorkerServiceClient } from '../../grpc/proto.js';
import type {
  RunTasksRequestWire,
  RunTasksResponseWireOut,
  TaskAdmissionWireOut,
  TaskInputWire,
} from '../../grpc/wire-types.js';
import { BlockxClientError, ClientErrorCode, toClientError } from '../errors.js';
import { refusal, type Failure } from './refusal.js';

/** Breaks in a row without any message from the Worker before it is taken as gone. */
export const STREAM_FAILURE_LIMIT = 3;
/** Times one entry is sent again after breaks before it is given up (a Worker that dies on it). */
export const MAX_RESENDS = 5;
/** Most tasks in one RunTasksRequest (the Worker refuses a message above 10,000). */
export const MAX_TASKS_PER_MESSAGE = 1_000;

export interface StreamListener {
  /** The Worker admitted the task (RUNNING); its terminal update follows. */
  admitted?(entry: StreamEntry): void;
  /** The task reached a terminal state: from an admission with a retained result, or an update. */
  terminal(entry: StreamEntry, update: TaskUpdate): void;
  /** The Worker refused the task (the SubmitTask status as an error), or never answered for it. */
  refused(entry: StreamEntry, failure: Failure): void;
  /** The task was admitted but the Worker was lost before its terminal update. */
  lost(entry: StreamEntry, error: BlockxClientError): void;
}

export interface StreamEntry {
  readonly taskId: string;
  readonly task: TaskInputWire;
  readonly slotId: string;
  readonly listener: StreamListener;
  /** Set by the stream: the Worker answered RUNNING for this entry at least once. */
  admitted: boolean;
  /** Set by `cancel`: nothing more is reported for this entry. */
  cancelled: boolean;
  /** Set by the stream: times it was sent again after a break. */
  resends: number;
  /** Set by the stream: waiting in its queue for a credit (not sent, or to be sent again). */
  queued: boolean;
}

export interface WorkerStreamOptions {
  readonly address: string;
  readonly stub: Pick<WorkerServiceClient, 'runTasks'>;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly signal: AbortSignal;
  /** Backoff before reopening a broken stream: doubling from `initialMs` up to `maxMs`. */
  readonly backoff: { readonly initialMs: number; readonly maxMs: number };
  readonly clock: () => number;
  /** The stream answered UNIMPLEMENTED: an older Worker without RunTasks. */
  readonly onUnsupported?: () => void;
}

export class WorkerTaskStream {
  readonly address: string;
  /** Tasks waiting for credits (sent first come, first served). */
  private readonly queue: StreamEntry[] = [];
  /** Sent entries waiting for their admission, in send order (the Worker answers in receive order). */
  private awaitingAdmission: StreamEntry[] = [];
  /** Admitted entries by task id, waiting for the terminal update. */
  private readonly running = new Map<string, StreamEntry[]>();
  private call: grpc.ClientDuplexStream<RunTasksRequestWire, RunTasksResponseWireOut> | undefined;
  private credits = 0;
  private failuresInRow = 0;
  private reopening = false;
  private flushScheduled = false;
  private unsupported = false;
  private closed = false;

  constructor(private readonly opts: WorkerStreamOptions) {
    this.address = opts.address;
  }

  /** Tasks sent or queued and not yet finished on this stream. */
  get load(): number {
    let running = 0;
    for (const entries of this.running.values()) running += entries.length;
    return this.queue.length + this.awaitingAdmission.length + running;
  }

  /** The credits the Worker granted that are not in use (0 before the first message). */
  get availableCredits(): number {
    return this.credits;
  }

  get isUnsupported(): boolean {
    return this.unsupported;
  }

  submit(entry: StreamEntry): void {
    if (this.closed || this.unsupported) {
      entry.listener.refused(entry, this.closedError(entry.taskId));
      return;
    }
    entry.queued = true;
    this.queue.push(entry);
    this.ensureOpen();
    this.scheduleFlush();
  }

  /** Stop reporting `entry`; an unsent one is dropped. */
  cancel(entry: StreamEntry): void {
    entry.cancelled = true;
    // Every finished task is cancelled by the runner: only a queued one costs a search.
    if (!entry.queued) return;
    entry.queued = false;
    const i = this.queue.indexOf(entry);
    if (i >= 0) this.queue.splice(i, 1);
  }

  /** Cancels the stream; entries still pending are refused with CANCELLED. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.call?.cancel();
    this.call = undefined;
    const error = (id: string): BlockxClientError =>
      new BlockxClientError(ClientErrorCode.CANCELLED, 'client closed', {
        taskId: id,
        address: this.address,
      });
    for (const e of this.drainAll()) this.report(e, (l) => l.refused(e, error(e.taskId)));
  }

  // ---- internals ----------------------------------------------------------------------------------

  private ensureOpen(): void {
    if (this.call !== undefined || this.reopening || this.closed) return;
    const call = this.opts.stub.runTasks();
    this.call = call;
    this.credits = 0;
    call.on('data', (msg: RunTasksResponseWireOut) => {
      if (this.call !== call) return;
      this.failuresInRow = 0;
      this.onMessage(msg);
    });
    // 'status' comes last on every path (error, end, cancel): one place decides what a break means.
    call.on('error', () => {});
    call.on('status', (status: grpc.StatusObject) => {
      if (this.call !== call) return;
      this.call = undefined;
      this.onBroken(status);
    });
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  /** Sends as many queued tasks as the credits allow, in messages of at most MAX_TASKS_PER_MESSAGE. */
  private flush(): void {
    const call = this.call;
    if (call === undefined) return;
    while (this.credits > 0 && this.queue.length > 0) {
      const n = Math.min(this.credits, this.queue.length, MAX_TASKS_PER_MESSAGE);
      const batch = this.queue.splice(0, n);
      this.credits -= n;
      for (const e of batch) {
        e.queued = false;
        this.awaitingAdmission.push(e);
      }
      call.write({ tasks: batch.map((e) => ({ task: e.task, slotId: e.slotId })) });
    }
  }

  private onMessage(msg: RunTasksResponseWireOut): void {
    this.credits += msg.credits;
    for (const adm of msg.admissions) this.onAdmission(adm);
    for (const wire of msg.updates) {
      let update: TaskUpdate;
      try {
        update = taskUpdateFromWire(wire);
      } catch {
        continue;
      }
      this.onUpdate(update);
    }
    if (this.queue.length > 0) this.scheduleFlush();
  }

  private takeAwaiting(taskId: string): StreamEntry | undefined {
    const first = this.awaitingAdmission[0];
    if (first !== undefined && first.taskId === taskId) return this.awaitingAdmission.shift();
    const i = this.awaitingAdmission.findIndex((e) => e.taskId === taskId);
    return i < 0 ? undefined : this.awaitingAdmission.splice(i, 1)[0];
  }

  private onAdmission(adm: TaskAdmissionWireOut): void {
    const entry = this.takeAwaiting(adm.taskId);
    if (entry === undefined) return;
    if (adm.error !== null && adm.error !== undefined) {
      if (entry.admitted) {
        // Sent again after a break, and the Worker no longer has it (it restarted): the task was
        // accepted once and may have run, so it is lost, not refused (docs/retries.md).
        const lost = new BlockxClientError(
          ClientErrorCode.NOT_FOUND,
          `worker ${this.address} no longer knows task ${adm.taskId} after the stream broke: ${adm.error.message}`,
          { taskId: adm.taskId, address: this.address, rpc: 'WatchTasks' },
        );
        this.report(entry, (l) => l.lost(entry, lost));
        return;
      }
      const refused = refusal(adm.error.status, adm.error.code, adm.error.message, 'RunTasks', this.address);
      this.report(entry, (l) => l.refused(entry, refused));
      return;
    }
    const state = taskStateFromWire(adm.state);
    const result = taskResultFromWire(adm.result);
    if (result !== undefined && (state === 'SUCCEEDED' || state === 'FAILED')) {
      const update = terminalUpdate(adm.taskId, state, result, this.address, this.opts.clock());
      this.report(entry, (l) => l.terminal(entry, update));
      return;
    }
    entry.admitted = true;
    let list = this.running.get(adm.taskId);
    if (list === undefined) this.running.set(adm.taskId, (list = []));
    list.push(entry);
    this.report(entry, (l) => l.admitted?.(entry));
  }

  private onUpdate(update: TaskUpdate): void {
    if (!update.isTerminal) return;
    const list = this.running.get(update.taskId);
    if (list === undefined) return;
    this.running.delete(update.taskId);
    for (const entry of list) this.report(entry, (l) => l.terminal(entry, update));
  }

  private onBroken(status: grpc.StatusObject): void {
    if (this.closed) return;
    if (status.code === GrpcStatus.UNIMPLEMENTED) {
      this.unsupported = true;
      this.opts.onUnsupported?.();
      const error = this.closedError('');
      for (const e of this.drainAll()) this.report(e, (l) => l.refused(e, error));
      return;
    }
    const idle = this.load === 0;
    if (status.code === GrpcStatus.OK && idle) return;
    this.failuresInRow++;
    // Everything sent and unfinished goes again (idempotent per task id), ahead of what was never sent.
    const resend: StreamEntry[] = [...this.awaitingAdmission];
    for (const list of this.running.values()) resend.push(...list);
    this.awaitingAdmission = [];
    this.running.clear();
    const again: StreamEntry[] = [];
    for (const e of resend) {
      if (e.cancelled) continue;
      if (++e.resends <= MAX_RESENDS) {
        again.push(e);
        continue;
      }
      const error = new BlockxClientError(
        ClientErrorCode.UNAVAILABLE,
        `worker ${this.address}: the stream broke ${MAX_RESENDS + 1} times with task ${e.taskId} unfinished`,
        { taskId: e.taskId, address: this.address, rpc: e.admitted ? 'WatchTasks' : 'RunTasks' },
      );
      this.report(e, (l) => (e.admitted ? l.lost(e, error) : l.refused(e, error)));
    }
    for (const e of again) e.queued = true;
    this.queue.unshift(...again);
    if (this.failuresInRow >= STREAM_FAILURE_LIMIT) {
      this.failuresInRow = 0;
      const cause = toClientError(
        Object.assign(new Error(status.details), {
          code: status.code,
          details: status.details,
          metadata: status.metadata,
        }),
        { rpc: 'RunTasks', address: this.address },
      );
      for (const e of this.queue.splice(0)) {
        const error = new BlockxClientError(
          ClientErrorCode.UNAVAILABLE,
          `worker ${this.address} lost: ${cause.message}`,
          { taskId: e.taskId, address: this.address, rpc: e.admitted ? 'WatchTasks' : 'RunTasks', cause },
        );
        this.report(e, (l) => (e.admitted ? l.lost(e, error) : l.refused(e, error)));
      }
      return;
    }
    if (this.queue.length === 0) return;
    const delay = Math.min(
      this.opts.backoff.initialMs * 2 ** (this.failuresInRow - 1),
      this.opts.backoff.maxMs,
    );
    this.reopening = true;
    void this.opts.sleep(delay, this.opts.signal).then(() => {
      this.reopening = false;
      if (this.closed || this.queue.length === 0) return;
      this.ensureOpen();
      this.scheduleFlush();
    });
  }

  private drainAll(): StreamEntry[] {
    const all = [...this.queue.splice(0), ...this.awaitingAdmission];
    for (const list of this.running.values()) all.push(...list);
    this.awaitingAdmission = [];
    this.running.clear();
    return all;
  }

  private report(entry: StreamEntry, fn: (l: StreamListener) => void): void {
    if (entry.cancelled) return;
    fn(entry.listener);
  }

  private closedError(taskId: string): BlockxClientError {
    return this.unsupported
      ? new BlockxClientError(ClientErrorCode.INTERNAL, `worker ${this.address} does not serve RunTasks`, {
          taskId,
          address: this.address,
          rpc: 'RunTasks',
          grpcStatus: GrpcStatus.UNIMPLEMENTED,
        })
      : new BlockxClientError(ClientErrorCode.CANCELLED, 'client closed', { taskId, address: this.address });
  }
}

function terminalUpdate(
  taskId: string,
  state: TaskState,
  result: TaskResult,
  workerAddr: string,
  now: number,
): TaskUpdate {
  return { taskId, state, isTerminal: true, workerAddr, timestampMs: now, result, error: '' };
}
