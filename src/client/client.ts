// BlockxClient: the TypeScript client (docs/architecture.md § Processes and who calls whom). `run(task)` is
// the whole path — reserve a slot through the Coordinator (or go straight to one Worker), SubmitTask, follow
// WatchTasks to the terminal update — with the retry semantics of docs/retries.md (reserve.ts). The
// lower-level steps are public too: submit, watch, getResult, and clusterStatus (CoordinatorAdminService).
// Channels are pooled per address and shared by every concurrent call; close() closes them and cancels
// whatever is still in flight. Following a task to its terminal update is follow-task.ts.
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import * as grpc from '@grpc/grpc-js';
import { unaryCall } from '../grpc/clients.js';
import { tlsMaterialOf } from '../kernel/tls-files.js';
import { isTerminalState } from '../contracts/task.js';
import { taskInputToWire, taskResultFromWire, taskStateFromWire } from '../grpc/convert.js';
import type { TaskResult, TaskState, TaskUpdate } from '../grpc/domain-types.js';
import type {
  GetTaskResultResponseWireOut,
  ReserveWorkerSlotResponseWireOut,
  SubmitTaskResponseWireOut,
} from '../grpc/wire-types.js';
import { ChannelPool } from './channel-pool.js';
import { BlockxClientError, ClientErrorCode, toClientError } from './errors.js';
import { followToTerminal } from './follow-task.js';
import { resolveClientOptions } from './options.js';
import { placeTask, type Reservation, type RetryPolicy } from './reserve.js';
import { runResultOf } from './run-result.js';
import type {
  BlockxClientOptions,
  CallOptions,
  ClientTaskInput,
  ClusterStatusView,
  SubmitOutcome,
  TaskRunResult,
  TaskStatusView,
  WorkerCallOptions,
} from './types.js';
import { watchTaskUpdates } from './watch.js';
import type { BackfillPlan } from './backfill/plan.js';
import type { BackfillJournal } from './backfill/journal.js';
import {
  runBackfill,
  type BackfillEvent,
  type BackfillRunOptions,
  type BackfillSummary,
} from './backfill/run-backfill.js';
import { createProgressReporter } from './backfill/progress-reporter.js';
import { checkTaskRetryPolicy, DEFAULT_TASK_RETRY_BACKOFF } from './task-retry.js';
import { BatchedTaskRunner } from './batch/batch-runner.js';
import { taskInputOf } from './task-input.js';
import type { RunnableTask, TaskRunner } from './run-with-retries.js';
import { runMany as runManyWith, type RunManyOptions, type RunManyOutcome } from './run-many.js';

/** Options of BlockxClient#backfill; defaults as `blockx backfill`'s. */
export interface BackfillOptions {
  /** Units in flight at once. Default 64. */
  readonly concurrency?: number;
  /** Attempts after the first per unit. Default 3. */
  readonly retries?: number;
  /** Task-level backoff base and cap. Defaults 500 / 10000 ms. */
  readonly initialBackoffMs?: number;
  readonly maxBackoffMs?: number;
  readonly journal?: BackfillJournal;
  readonly stop?: AbortSignal;
  readonly signal?: AbortSignal;
  /**
   * Report the job's progress to the Coordinator for its dashboard (docs/dashboard-data.md § Backfill
   * jobs). Default true through a coordinator; never with `worker`. Advisory: a Coordinator without the
   * service, or one that fails it, never slows or fails the job.
   */
  readonly reportProgress?: boolean;
  /**
   * Told once when a progress report fails (reporting goes on with backoff) or reporting ends (the
   * Coordinator predates the service). Default: silent.
   */
  readonly warn?: (message: string, fields: Record<string, unknown>) => void;
  /** The older name of `warn`, used when `warn` is not given. */
  readonly debug?: (message: string, fields: Record<string, unknown>) => void;
  /** A failure that stops the whole job (BackfillRunOptions.stopOn). Default: none. */
  readonly stopOn?: BackfillRunOptions['stopOn'];
}

export class BlockxClient {
  readonly coordinator: string | undefined;
  readonly worker: string | undefined;
  private readonly policy: RetryPolicy;
  private readonly rpcTimeoutMs: number;
  private readonly maxWatchAttempts: number;
  private readonly reuseSlots: number;
  private readonly pool: ChannelPool;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly random: () => number;
  private readonly clock: () => number;
  /** Aborted by close(): cancels every call still in flight. */
  private readonly lifetime = new AbortController();
  private readonly batching: 'auto' | 'off';
  private batchRunner: BatchedTaskRunner | undefined;
  /** run() calls in flight: a run() that starts while another is in flight takes the batched path. */
  private runsInFlight = 0;

  constructor(opts: BlockxClientOptions) {
    if ((opts.coordinator === undefined) === (opts.worker === undefined)) {
      throw new BlockxClientError(
        ClientErrorCode.INVALID_ARGUMENT,
        'give exactly one of `coordinator` (reserve through it) or `worker` (submit directly)',
      );
    }
    this.coordinator = opts.coordinator;
    this.worker = opts.worker;
    const resolved = resolveClientOptions(opts);
    this.policy = resolved.policy;
    this.rpcTimeoutMs = resolved.rpcTimeoutMs;
    this.maxWatchAttempts = resolved.maxWatchAttempts;
    this.reuseSlots = resolved.reuseSlots;
    this.sleep = resolved.sleep;
    this.random = resolved.random;
    this.clock = resolved.clock;
    this.pool = new ChannelPool(
      opts.channelOptions,
      opts.tls === undefined ? undefined : tlsMaterialOf(opts.tls),
    );
    this.batching = opts.batching ?? 'auto';
    if (this.batching !== 'auto' && this.batching !== 'off') {
      throw new BlockxClientError(
        ClientErrorCode.INVALID_ARGUMENT,
        `batching must be 'auto' or 'off', got ${JSON.stringify(this.batching)}`,
      );
    }
    // Every call in flight listens on it: thousands of concurrent tasks are normal, not a leak.
    setMaxListeners(0, this.lifetime.signal);
  }

  /**
   * Reserve → submit → watch to the terminal state. Rejects only when the task could not be run or
   * followed. A lone run() takes the unary RPCs; one that starts while other run() calls of this client
   * are in flight joins the batched path (bulk reservation, one RunTasks stream per Worker;
   * docs/batched-protocol.md), so concurrent producers in one process share streams. `batching: 'off'`
   * keeps every run() unary.
   */
  async run(task: ClientTaskInput, opts: CallOptions = {}): Promise<TaskRunResult> {
    const batched = this.batching === 'auto' && this.runsInFlight > 0;
    this.runsInFlight++;
    try {
      return await (batched ? this.runBatched(task, opts) : this.runUnary(task, opts));
    } finally {
      this.runsInFlight--;
    }
  }

  /**
   * Runs many tasks, at most `concurrency` at a time (default 1024), on the batched path (unary with
   * `batching: 'off'`). Each outcome is a result or the error that stopped that task; one task's error
   * never stops the others. Tasks without an id get a fresh UUID.
   */
  runMany(tasks: readonly ClientTaskInput[], opts: Partial<RunManyOptions> = {}): Promise<RunManyOutcome[]> {
    const withIds: RunnableTask[] = tasks.map((t) => ({ ...t, taskId: t.taskId ?? randomUUID() }));
    return runManyWith(this.batched, withIds, { ...opts, concurrency: opts.concurrency ?? 1024 });
  }

  /** This client's run() on the batched path (or the unary one with `batching: 'off'`), as a TaskRunner. */
  get batched(): TaskRunner {
    return {
      run: (task, opts) =>
        this.batching === 'off' ? this.runUnary(task, opts ?? {}) : this.runBatched(task, opts ?? {}),
      resume: (taskId, opts) => this.resume(taskId, opts ?? {}),
    };
  }

  private runBatched(task: ClientTaskInput, opts: CallOptions): Promise<TaskRunResult> {
    this.batchRunner ??= new BatchedTaskRunner({
      pool: this.pool,
      ...(this.coordinator !== undefined ? { coordinator: this.coordinator } : {}),
      ...(this.worker !== undefined ? { worker: this.worker } : {}),
      policy: this.policy,
      rpcTimeoutMs: this.rpcTimeoutMs,
      reuseSlots: this.reuseSlots,
      sleep: (ms) => this.sleep(ms),
      random: this.random,
      clock: this.clock,
      signal: this.lifetime.signal,
      fallback: (t, signal) => this.runUnary(t, signal ? { signal } : {}),
    });
    // The caller's own signal only: the client's lifetime is the runner's close(), not a listener per task.
    return this.batchRunner.run(task, opts.signal);
  }

  private async runUnary(task: ClientTaskInput, opts: CallOptions): Promise<TaskRunResult> {
    const started = this.clock();
    const signal = this.signalFor(opts.signal);
    const submitted = await this.submitWith(task, signal);
    const update = await this.terminalUpdate(submitted.workerAddr, submitted, signal);
    return runResultOf(update, submitted.workerAddr, submitted.attempts, this.clock() - started);
  }

  /**
   * The terminal update of a task `workerAddr` holds in `known.state`: made from the result the Worker
   * already answered when terminal, otherwise followed with WatchTasks.
   */
  private async terminalUpdate(
    workerAddr: string,
    known: { readonly taskId: string; readonly state: TaskState; readonly result?: TaskResult },
    signal: AbortSignal,
  ): Promise<TaskUpdate> {
    if (known.result !== undefined && isTerminalState(known.state)) {
      const { taskId, state, result } = known;
      return { taskId, state, isTerminal: true, workerAddr, timestampMs: this.clock(), result, error: '' };
    }
    return followToTerminal(this.pool.worker(workerAddr), known.taskId, workerAddr, signal, {
      backoff: this.policy.backoff,
      maxWatchAttempts: this.maxWatchAttempts,
      sleep: (ms, s) => this.sleep(ms, s),
    });
  }

  /**
   * The result of `taskId` from the Worker of the cluster that holds it (RUNNING or terminal), followed
   * to its end if it still runs; undefined when no Worker knows it, or without a coordinator. A resumed
   * backfill asks this before placing a unit an earlier run may have started (docs/backfill.md § Resuming).
   */
  async resume(taskId: string, opts: CallOptions = {}): Promise<TaskRunResult | undefined> {
    if (this.coordinator === undefined) return undefined;
    const started = this.clock();
    const { workers } = await this.clusterStatus(opts);
    const known = await Promise.all(
      workers.map(({ workerAddr }) =>
        this.getResult(taskId, { ...opts, workerAddr }).then(
          (status) =>
            status.state === 'RUNNING' || isTerminalState(status.state) ? { workerAddr, status } : undefined,
          () => undefined,
        ),
      ),
    );
    const holder = known.find((k) => k !== undefined);
    if (holder === undefined) return undefined;
    const update = await this.terminalUpdate(holder.workerAddr, holder.status, this.signalFor(opts.signal));
    return runResultOf(update, holder.workerAddr, 1, this.clock() - started);
  }

  /**
   * Runs a backfill plan (`planBackfill(job)`: the template over every block or aligned bundle of a range)
   * with task-level retries, yielding one event per unit and a summary last (docs/backfill.md). Pass a
   * `journal` (FileJournal, keyed by `plan.jobId`) to skip what an earlier run of the same job finished;
   * `stop` lets the tasks in flight finish and starts no more, `signal` cancels them.
   */
  backfill(plan: BackfillPlan, opts: BackfillOptions = {}): AsyncGenerator<BackfillEvent, BackfillSummary> {
    const policy = checkTaskRetryPolicy({
      retries: opts.retries ?? 3,
      slotTtlMs: this.policy.slotTtlMs,
      initialBackoffMs: opts.initialBackoffMs ?? DEFAULT_TASK_RETRY_BACKOFF.initialBackoffMs,
      maxBackoffMs: opts.maxBackoffMs ?? DEFAULT_TASK_RETRY_BACKOFF.maxBackoffMs,
    });
    return runBackfill(this.batched, plan, {
      concurrency: opts.concurrency ?? 64,
      policy,
      ...(opts.journal ? { journal: opts.journal } : {}),
      ...(opts.stop ? { stop: opts.stop } : {}),
      ...(opts.stopOn ? { stopOn: opts.stopOn } : {}),
      signal: this.signalFor(opts.signal),
      sleep: this.sleep,
      random: this.random,
      clock: this.clock,
      ...(this.coordinator !== undefined && opts.reportProgress !== false
        ? { progress: this.progressReporter(this.coordinator, opts.warn ?? opts.debug) }
        : {}),
    });
  }

  /** ReportBackfillProgress on the Coordinator's pooled channel (./backfill/progress-reporter.ts). */
  private progressReporter(
    address: string,
    warn: BackfillOptions['warn'],
  ): ReturnType<typeof createProgressReporter> {
    return createProgressReporter({
      send: (progress, timeoutMs) => {
        const jobs = this.pool.jobs(address);
        return unaryCall<unknown>((md, o, cb) => jobs.reportBackfillProgress(progress, md, o, cb), {
          timeoutMs,
          signal: this.lifetime.signal,
        }).then(() => undefined);
      },
      // A Coordinator older than the service answers UNIMPLEMENTED to every report: no retry mends that.
      permanent: (err) => (err as { code?: unknown } | null)?.code === grpc.status.UNIMPLEMENTED,
      ...(warn ? { warn } : {}),
    });
  }

  /** Reserve (with retries) and SubmitTask; resolves once the Worker accepted the task. */
  submit(task: ClientTaskInput, opts: CallOptions = {}): Promise<SubmitOutcome> {
    return this.submitWith(task, this.signalFor(opts.signal));
  }

  /**
   * WatchTasks on one Worker: every update of `taskIds` until each is terminal. Leaving the loop early
   * cancels the stream.
   */
  watch(taskIds: readonly string[], opts: WorkerCallOptions = {}): AsyncIterable<TaskUpdate> {
    const address = this.workerAddress(opts.workerAddr);
    return watchTaskUpdates(this.pool.worker(address), taskIds, {
      address,
      signal: this.signalFor(opts.signal),
    });
  }

  /** GetTaskResult on one Worker. Rejects with NOT_FOUND when the Worker does not know the task. */
  async getResult(taskId: string, opts: WorkerCallOptions = {}): Promise<TaskStatusView> {
    const address = this.workerAddress(opts.workerAddr);
    const worker = this.pool.worker(address);
    const res = await this.unary<GetTaskResultResponseWireOut>(
      'GetTaskResult',
      address,
      taskId,
      this.signalFor(opts.signal),
      (md, o, cb) => worker.getTaskResult({ taskId }, md, o, cb),
    );
    const result = taskResultFromWire(res.result);
    return { taskId: res.taskId, state: taskStateFromWire(res.state), ...(result ? { result } : {}) };
  }

  /** The Coordinator's view of its Workers (CoordinatorAdminService.GetClusterStatus). */
  clusterStatus(opts: CallOptions = {}): Promise<ClusterStatusView> {
    const address = this.coordinator;
    if (address === undefined) {
      throw new BlockxClientError(ClientErrorCode.INVALID_ARGUMENT, 'clusterStatus needs a coordinator');
    }
    const admin = this.pool.admin(address);
    return this.unary<ClusterStatusView>(
      'GetClusterStatus',
      address,
      undefined,
      this.signalFor(opts.signal),
      (md, o, cb) => admin.getClusterStatus({}, md, o, cb),
    );
  }

  /**
   * Resolves once the client's target (its coordinator, or its worker) accepts a connection; rejects with
   * UNAVAILABLE naming the address after `timeoutMs`. A command about to submit many tasks calls this first,
   * so a wrong address fails in seconds instead of after every task's retries.
   */
  waitForReady(timeoutMs: number): Promise<void> {
    const address = this.coordinator ?? this.worker ?? '';
    const stub = this.coordinator !== undefined ? this.pool.coordinator(address) : this.pool.worker(address);
    return new Promise((resolve, reject) => {
      stub.waitForReady(Date.now() + timeoutMs, (err) => {
        if (err === undefined || err === null) return resolve();
        reject(
          new BlockxClientError(
            ClientErrorCode.UNAVAILABLE,
            `cannot reach the ${this.coordinator !== undefined ? 'coordinator' : 'worker'} at ${address} within ${timeoutMs} ms`,
            { address, cause: err },
          ),
        );
      });
    });
  }

  /** Addresses this client has a channel open to (one per address, shared by every call). */
  get channelAddresses(): readonly string[] {
    return this.pool.addresses;
  }

  /** Cancels calls in flight and closes every channel. The client cannot be used afterwards. */
  close(): void {
    this.lifetime.abort(new BlockxClientError(ClientErrorCode.CANCELLED, 'client closed'));
    this.batchRunner?.close();
    this.pool.close();
  }

  // ---- internals ----------------------------------------------------------------------------------

  private async submitWith(task: ClientTaskInput, signal: AbortSignal): Promise<SubmitOutcome> {
    const input = taskInputOf(task);
    const wire = taskInputToWire(input);
    const taskId = input.taskId;
    const coordinator = this.coordinator;
    const reserve =
      coordinator === undefined
        ? undefined
        : async (id: string): Promise<Reservation> => {
            const stub = this.pool.coordinator(coordinator);
            const res = await this.unary<ReserveWorkerSlotResponseWireOut>(
              'ReserveWorkerSlot',
              coordinator,
              id,
              signal,
              (md, o, cb) => stub.reserveWorkerSlot({ taskId: id }, md, o, cb),
            );
            return { workerAddr: res.workerAddr, slotId: res.slotId };
          };
    const placed = await placeTask(
      taskId,
      {
        ...(reserve ? { reserve } : {}),
        ...(this.worker !== undefined ? { directWorker: this.worker } : {}),
        submit: (workerAddr, slotId) => {
          const stub = this.pool.worker(workerAddr);
          return this.unary<SubmitTaskResponseWireOut>(
            'SubmitTask',
            workerAddr,
            taskId,
            signal,
            (md, o, cb) => stub.submitTask({ task: wire, slotId }, md, o, cb),
          );
        },
        sleep: this.sleep,
        random: this.random,
      },
      this.policy,
      signal,
    );
    const res = placed.submitted;
    const result = taskResultFromWire(res.result);
    return {
      taskId,
      workerAddr: placed.workerAddr,
      state: taskStateFromWire(res.state),
      ...(result ? { result } : {}),
      attempts: placed.attempts,
    };
  }

  private unary<Res>(
    rpc: string,
    address: string,
    taskId: string | undefined,
    signal: AbortSignal,
    invoke: Parameters<typeof unaryCall<Res>>[0],
  ): Promise<Res> {
    return unaryCall<Res>(invoke, { timeoutMs: this.rpcTimeoutMs, signal }).catch((err: unknown) => {
      throw toClientError(err, { rpc, address, ...(taskId !== undefined ? { taskId } : {}) });
    });
  }

  private workerAddress(given: string | undefined): string {
    const address = given ?? this.worker;
    if (address === undefined) {
      throw new BlockxClientError(
        ClientErrorCode.INVALID_ARGUMENT,
        'no worker address: pass { workerAddr } (the client was created with a coordinator)',
      );
    }
    return address;
  }

  private signalFor(signal: AbortSignal | undefined): AbortSignal {
    if (signal === undefined) return this.lifetime.signal;
    const either = AbortSignal.any([signal, this.lifetime.signal]);
    // A backfill's or runMany's tasks in flight all listen on it, as on the lifetime's (see the constructor).
    setMaxListeners(0, either);
    return either;
  }
}
