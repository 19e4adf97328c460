// The batched path of BlockxClient (docs/batched-protocol.md § Client): many tasks share one bulk
// reservation call and one RunTasks stream per Worker, instead of four RPCs each.
//
// Each task goes through the same placement rules as the unary path (reserve.ts `decideRetry`, one
// table for both): reserve (coalesced into ReserveWorkerSlots) → send on the Worker's stream → its
// admission → its terminal update. Per task:
//   - a refused reservation or admission is retried exactly as the unary path retries that status
//     (Unavailable at once then backoff, SlotUncertain after one slot TTL with the same id, InvalidSlot
//     → reserve again, NoCapacity → backoff, InvalidArgument → final);
//   - no capacity while other tasks of this runner hold slots is not a failure: the cluster is busy with
//     our own work. The runner keeps a window of tasks allowed to ask for or hold a slot at once, grown by
//     one per granted slot and cut to what it holds on "no capacity" (additive increase, multiplicative
//     decrease, as TCP does): the refused task goes back to the head of the queue and asks again when one
//     of ours finishes; that wait is not an attempt. With nothing of ours holding a slot, it backs off as
//     the unary path does (counted). Without the window, 20,000 tasks would ask for 20,000 slots of a
//     256-slot cluster over and over (bench/bullmq measured 7 refused asks per task);
//   - the Worker lost after admission rejects with UNAVAILABLE (rpc 'WatchTasks'): the task may have run,
//     so a new attempt is the task-level retry's decision (run-with-retries.ts), never this layer's.
//   - slot reuse (`reuseSlots` > 0, through a Coordinator; docs/batched-protocol.md § Slot reuse): a task
//     that SUCCEEDED hands its Worker to the next waiting task, which is sent there without a slot id
//     (the Worker reserves inline, as SubmitTask does) instead of asking the Coordinator: one bulk
//     reservation and one RequestTaskSlots fewer per task. A chain of reuses is at most `reuseSlots` long,
//     then a task asks the Coordinator again, so the Coordinator still places each slot's work regularly.
//     A reused send that is refused (the slot went to someone else, the Worker drains, ...) is placed
//     through the Coordinator at once, not counted as an attempt: nothing ran.
// A Coordinator or Worker that answers UNIMPLEMENTED (an older server) is served by the unary path
// (`fallback`) from then on.
//
// Cancellation: a task's signal settles it CANCELLED at once; close() settles every task CANCELLED. If it was already sent, the Worker still
// runs it (the protocol has no per-task cancel; neither has SubmitTask): only the wait is cancelled.
import { taskInputToWire } from '../../grpc/convert.js';
import type { TaskInput, TaskUpdate } from '../../grpc/domain-types.js';
import type { TaskInputWire } from '../../grpc/wire-types.js';
import type { ChannelPool } from '../channel-pool.js';
import { BlockxClientError, ClientErrorCode } from '../errors.js';
import { failureError, isUnimplemented, type Failure } from './refusal.js';
import {
  decideRetry,
  initialRetryState,
  type PlacementPhase,
  type Reservation,
  type RetryPolicy,
  type RetryState,
} from '../reserve.js';
import { runResultOf } from '../run-result.js';
import { taskInputOf } from '../task-input.js';
import type { ClientTaskInput, TaskRunResult } from '../types.js';
import { BulkReserver } from './bulk-reserver.js';
import { WorkerTaskStream, type StreamEntry, type StreamListener } from './worker-stream.js';

export interface BatchRunnerOptions {
  readonly pool: ChannelPool;
  /** Reserve through this Coordinator; or send straight to `worker` (exactly one of the two). */
  readonly coordinator?: string;
  readonly worker?: string;
  readonly policy: RetryPolicy;
  readonly rpcTimeoutMs: number;
  /** Sends in a row to a Worker freed by a task that SUCCEEDED, without a reservation (0: off; see header). */
  readonly reuseSlots?: number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly random: () => number;
  readonly clock: () => number;
  /** The client's lifetime: aborting it cancels the calls in flight (close() settles the tasks). */
  readonly signal: AbortSignal;
  /** The unary path, for servers without the batched RPCs. */
  readonly fallback: (
    task: ClientTaskInput & { taskId: string },
    signal: AbortSignal | undefined,
  ) => Promise<TaskRunResult>;
}

/** Tasks allowed to ask for or hold a slot at first; the window then follows the cluster (see header). */
export const INITIAL_WINDOW = 256;
export const MAX_WINDOW = 100_000;

class Job implements StreamListener {
  state: RetryState;
  held: Reservation | undefined;
  entry: StreamEntry | undefined;
  stream: WorkerTaskStream | undefined;
  settled = false;
  /** Counted in the runner's `active`: asking for, holding or using a slot. */
  inWindow = false;
  onAbort: (() => void) | undefined;
  /** Sends since the Coordinator last placed this slot lineage (0: reserved through it). */
  reuses = 0;
  /** Sent to a reused Worker and not answered yet; a refusal then goes to the Coordinator. */
  reused = false;
  /** A reused send was refused: this task asks the Coordinator from now on. */
  noReuse = false;
  readonly startedAt: number;

  constructor(
    readonly runner: BatchedTaskRunner,
    readonly input: TaskInput,
    readonly wire: TaskInputWire,
    readonly signal: AbortSignal | undefined,
    readonly resolve: (r: TaskRunResult) => void,
    readonly reject: (e: BlockxClientError) => void,
    policy: RetryPolicy,
    now: number,
  ) {
    this.state = initialRetryState(policy);
    this.startedAt = now;
  }

  get taskId(): string {
    return this.input.taskId;
  }

  terminal(_entry: StreamEntry, update: TaskUpdate): void {
    this.runner.onTerminal(this, update);
  }

  refused(_entry: StreamEntry, failure: Failure): void {
    this.runner.onRefused(this, failure);
  }

  lost(_entry: StreamEntry, error: BlockxClientError): void {
    this.runner.finish(this, error.with({ taskId: this.taskId, attempts: this.state.attempts }));
  }
}

export class BatchedTaskRunner {
  private readonly streams = new Map<string, WorkerTaskStream>();
  private readonly reserver: BulkReserver | undefined;
  /** Every task not settled yet (close() settles them). */
  private readonly unsettled = new Set<Job>();
  /** Tasks waiting for room in the window, oldest first (`head` is the first live index). */
  private queue: Job[] = [];
  private head = 0;
  private window = INITIAL_WINDOW;
  private active = 0;
  private unaryWorkers = new Set<string>();
  private unaryCoordinator = false;
  /**
   * Workers freed by tasks that just SUCCEEDED, for the tasks placed in the same event-loop turn (slot
   * reuse); what is left over then is dropped: the slot stays free for the Coordinator to place.
   */
  private freed: { readonly workerAddr: string; readonly reuses: number }[] = [];

  constructor(private readonly opts: BatchRunnerOptions) {
    const coordinator = opts.coordinator;
    if ((coordinator === undefined) === (opts.worker === undefined)) {
      throw new BlockxClientError(
        ClientErrorCode.INVALID_ARGUMENT,
        'give exactly one of coordinator or worker',
      );
    }
    this.reserver =
      coordinator === undefined
        ? undefined
        : new BulkReserver({
            address: coordinator,
            stub: () => opts.pool.coordinator(coordinator),
            rpcTimeoutMs: opts.rpcTimeoutMs,
            signal: opts.signal,
          });
  }

  /** Tasks asking for, holding or using a slot, and the most allowed at once (for tests and metrics). */
  get figures(): { readonly active: number; readonly window: number; readonly queued: number } {
    return { active: this.active, window: this.window, queued: this.queue.length - this.head };
  }

  /** `signal`: the caller's own (the runner's lifetime is handled by close()). */
  run(task: ClientTaskInput, signal?: AbortSignal): Promise<TaskRunResult> {
    const input = taskInputOf(task);
    const wire = taskInputToWire(input);
    return new Promise<TaskRunResult>((resolve, reject) => {
      const job = new Job(this, input, wire, signal, resolve, reject, this.opts.policy, this.opts.clock());
      if (signal?.aborted || this.opts.signal.aborted) return reject(cancelledError(job));
      if (signal !== undefined) {
        job.onAbort = () => this.finish(job, cancelledError(job));
        signal.addEventListener('abort', job.onAbort, { once: true });
      }
      this.unsettled.add(job);
      this.queue.push(job);
      this.pump();
    });
  }

  /** Settles every unsettled task CANCELLED and closes the streams. */
  close(): void {
    for (const job of [...this.unsettled]) this.finish(job, cancelledError(job));
    for (const s of this.streams.values()) s.close();
    this.streams.clear();
  }

  // ---- the window ---------------------------------------------------------------------------------

  private pump(): void {
    while (this.active < this.window && this.head < this.queue.length) {
      const job = this.queue[this.head++] as Job;
      if (job.settled) continue;
      job.inWindow = true;
      this.active++;
      this.place(job);
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }

  private leaveWindow(job: Job): void {
    if (!job.inWindow) return;
    job.inWindow = false;
    this.active--;
  }

  /** Back to the head of the queue: it asks again as soon as the window has room. */
  private requeueFirst(job: Job): void {
    this.leaveWindow(job);
    if (this.head > 0) this.queue[--this.head] = job;
    else this.queue.unshift(job);
  }

  // ---- steps --------------------------------------------------------------------------------------

  private place(job: Job): void {
    if (job.settled) return;
    if (this.reserver === undefined) return this.send(job, this.opts.worker as string, '');
    if (job.held !== undefined) return this.send(job, job.held.workerAddr, job.held.slotId);
    if (this.unaryCoordinator) return this.viaFallback(job);
    const lease = job.noReuse ? undefined : this.freed.pop();
    if (lease !== undefined) {
      job.reuses = lease.reuses;
      job.reused = true;
      this.window = Math.min(this.window + 1, MAX_WINDOW);
      return this.send(job, lease.workerAddr, '');
    }
    job.reuses = 0;
    job.state = { ...job.state, attempts: job.state.attempts + 1 };
    this.reserver.reserve(job.taskId).then(
      (reservation) => {
        if (job.settled) return;
        this.window = Math.min(this.window + 1, MAX_WINDOW);
        job.held = reservation;
        // The reservation counted this attempt: reserve and submit of one placement are one attempt.
        this.send(job, reservation.workerAddr, reservation.slotId, true);
      },
      (failure: Failure) => {
        if (isUnimplemented(failure)) {
          this.unaryCoordinator = true;
          return this.viaFallback(job);
        }
        this.retry(job, 'reserve', failure);
      },
    );
  }

  private send(job: Job, workerAddr: string, slotId: string, counted = false): void {
    if (job.settled) return;
    if (this.unaryWorkers.has(workerAddr)) return this.viaFallback(job);
    if (!counted) job.state = { ...job.state, attempts: job.state.attempts + 1 };
    const stream = this.stream(workerAddr);
    const entry: StreamEntry = {
      taskId: job.taskId,
      task: job.wire,
      slotId,
      listener: job,
      admitted: false,
      cancelled: false,
      resends: 0,
      queued: false,
    };
    job.entry = entry;
    job.stream = stream;
    stream.submit(entry);
  }

  private stream(address: string): WorkerTaskStream {
    let s = this.streams.get(address);
    if (s === undefined) {
      s = new WorkerTaskStream({
        address,
        stub: this.opts.pool.worker(address),
        sleep: this.opts.sleep,
        signal: this.opts.signal,
        backoff: this.opts.policy.backoff,
        clock: this.opts.clock,
        onUnsupported: () => this.unaryWorkers.add(address),
      });
      this.streams.set(address, s);
    }
    return s;
  }

  private viaFallback(job: Job): void {
    if (job.settled) return;
    const { taskId, functionCallConfig, resultHandler, taskTimeoutMs } = job.input;
    const task = { taskId, functionCallConfig, ...(resultHandler ? { resultHandler } : {}), taskTimeoutMs };
    this.opts.fallback(task, job.signal).then(
      (r) => this.finish(job, r),
      (e: unknown) => this.finish(job, e as BlockxClientError),
    );
  }

  // ---- stream events --------------------------------------------------------------------------------

  onTerminal(job: Job, update: TaskUpdate): void {
    if (update.error === 'not_found') {
      const addr = job.stream?.address ?? '';
      return this.finish(
        job,
        new BlockxClientError(
          ClientErrorCode.NOT_FOUND,
          `worker ${addr} does not know task ${job.taskId} (its result expired or the worker restarted)`,
          // The follow half of the stream: the task-level retry reads it as "worker lost" (task-retry.ts).
          { taskId: job.taskId, address: addr, rpc: 'WatchTasks', attempts: job.state.attempts },
        ),
      );
    }
    const addr = job.stream?.address ?? update.workerAddr;
    this.finish(job, runResultOf(update, addr, job.state.attempts, this.opts.clock() - job.startedAt));
  }

  onRefused(job: Job, failure: Failure): void {
    if (job.settled) return;
    if (isUnimplemented(failure)) return this.viaFallback(job);
    if (job.reused && failure.code !== ClientErrorCode.INVALID_ARGUMENT) {
      // Nothing ran: the reused slot was not there. Ask the Coordinator, as if this send never happened.
      job.reused = false;
      job.noReuse = true;
      job.entry = undefined;
      job.stream = undefined;
      job.state = { ...job.state, attempts: Math.max(0, job.state.attempts - 1) };
      return this.place(job);
    }
    this.retry(job, this.reserver === undefined ? 'direct-submit' : 'submit', failure);
  }

  /** Settles `job` once; its room in the window goes to the next task. */
  finish(job: Job, outcome: TaskRunResult | BlockxClientError): void {
    if (job.settled) return;
    job.settled = true;
    this.unsettled.delete(job);
    if (job.onAbort !== undefined) job.signal?.removeEventListener('abort', job.onAbort);
    if (job.entry !== undefined && job.stream !== undefined) job.stream.cancel(job.entry);
    if (outcome instanceof BlockxClientError) job.reject(outcome);
    else job.resolve(outcome);
    if (job.inWindow) {
      this.leaveWindow(job);
      const reuse = this.reuseOf(job, outcome);
      if (reuse !== undefined) this.offer(reuse);
      this.pump();
    }
  }

  /**
   * Keeps a freed Worker for the rest of this event-loop turn: a caller that runs its next task when the
   * last one settles (runMany, backfill lanes) asks in a microtask of the same turn.
   */
  private offer(reuse: { readonly workerAddr: string; readonly reuses: number }): void {
    this.freed.push(reuse);
    if (this.freed.length > 1) return;
    setImmediate(() => {
      this.freed.length = 0;
    });
  }

  /** The Worker `job` frees for the next task, if it may be reused (see the header). */
  private reuseOf(
    job: Job,
    outcome: TaskRunResult | BlockxClientError,
  ): { readonly workerAddr: string; readonly reuses: number } | undefined {
    const limit = this.opts.reuseSlots ?? 0;
    const workerAddr = job.stream?.address;
    if (
      this.reserver === undefined ||
      job.reuses >= limit ||
      workerAddr === undefined ||
      outcome instanceof BlockxClientError ||
      !outcome.success ||
      this.unaryWorkers.has(workerAddr)
    )
      return undefined;
    return { workerAddr, reuses: job.reuses + 1 };
  }

  // ---- retries --------------------------------------------------------------------------------------

  private retry(job: Job, phase: PlacementPhase, failure: Failure): void {
    if (job.settled) return;
    if (job.signal?.aborted) return this.finish(job, cancelledError(job));
    job.entry = undefined;
    job.stream = undefined;
    job.reused = false;
    if (failure.code === ClientErrorCode.NO_CAPACITY && this.active > 1) {
      // Busy with our own tasks: shrink the window to what we hold and wait for one of them to finish.
      // Not an attempt (see the header).
      job.state = { ...job.state, attempts: Math.max(0, job.state.attempts - 1) };
      if (phase !== 'direct-submit') job.held = undefined;
      this.window = Math.max(1, this.active - 1);
      this.requeueFirst(job);
      return;
    }
    const decision = decideRetry(phase, failure.code, job.state, this.opts.policy, this.opts.random);
    if (decision.type === 'fail')
      return this.finish(job, failureError(failure, job.taskId, job.state.attempts));
    if (decision.action === 'reserve') job.held = undefined;
    job.state = decision.next;
    if (decision.delayMs <= 0) return this.place(job);
    void this.opts.sleep(decision.delayMs).then(() => this.place(job));
  }
}

function cancelledError(job: Job): BlockxClientError {
  return new BlockxClientError(ClientErrorCode.CANCELLED, `task ${job.taskId}: cancelled`, {
    taskId: job.taskId,
    ...(job.signal?.reason !== undefined ? { cause: job.signal.reason } : {}),
  });
}
