// The executor's execution units: a small pool of worker threads, fed by the main thread. This is the
// shell: threads, shared memory, postMessage batches and the OS timers. Every decision (routing, stuck
// detection, cancellation deadlines, the safety net, what a lost thread's calls fail with) is made by
// core/pool-scheduler.ts, with `now` read once per input here (`clock()`). The whole design, measured
// against child processes, is in docs/executor.md § The thread pool.
//
// Started: a thread claims each call in shared memory as it starts it (thread-messages.ts), so the
// sweep knows which calls really run. Calls sent to a thread that has gone stuck (or has a cancelled call
// on it), and not started there, are taken back and routed again; they never run twice.
//
// Epochs: modules are never freed, so a thread that imported a retired epoch is drained (no new calls),
// replaced, and terminated once idle (task module instances are not modules: thread-modules.ts).
// Memory: the sweep samples each thread's published figure and the process RSS; memory-watch.ts names
// the thread to terminate (EXECUTOR_MEMORY_LIMIT).
//
// Also here: the pool's options, the stats it reports, and who waits on it (every initial thread ready;
// no call in flight, for a graceful shutdown).

import { failedFrame } from './call-outcome.js';
import * as books from './core/pool-calls.js';
import * as scheduler from './core/pool-scheduler.js';
import { placeTenantCalls } from './core/tenant-placement.js';
import {
  ThreadSet,
  type ExecutionThread,
  type ThreadLimits,
  type ThreadSetEvents,
  type ThreadSetLike,
} from './execution-thread.js';
import type { CompiledFunction } from './function-compiler.js';
import { judgeMemory, type MemoryLimits } from './memory-watch.js';
import {
  attemptKey,
  type BatchedCallIn,
  type CallFailureKind,
  type CallTask,
  type ResumeCallMessage,
} from './protocol.js';
import * as shm from './thread-messages.js';
import { ThreadEvent, type ThreadControl, type ThreadToMainBatch } from './thread-messages.js';

export interface ThreadPoolOptions {
  readonly threads: number;
  readonly maxCallsPerThread: number;
  readonly cancelHardLimitMs: number;
  readonly maxFrameBytes: number;
  /** Read copies each thread keeps (read-copies.ts); 0 turns them off. */
  readonly readCopyMaxEntries: number;
  /** task: threads lock down, freeze their global and make a module instance per task; none: no isolation. */
  readonly isolation: 'task' | 'none';
  readonly memory: MemoryLimits;
  /** Extra running time past `budgetMs` before the local safety net cancels. Default max(1000, budget). */
  readonly safetyMarginMs?: number;
  /** Resolves a call's module (compiled, cached). */
  readonly resolveModule: (epoch: string, name: string) => CompiledFunction | Promise<CompiledFunction>;
  /** One outbound protocol frame, already JSON. */
  readonly send: (json: string) => void;
  /**
   * One successful outcome of an attempt whose task asked for bulk results: its CallsCompleted entry
   * (completedResultJson), for the caller to join with the task's others of this turn.
   */
  readonly sendCompleted: (taskId: string, entryJson: string) => void;
  readonly log: (line: string) => void;
  /**
   * Tests: threads of their own instead of worker threads, a virtual clock instead of performance.now,
   * and no sweep timer (the test calls `sweep()`).
   */
  readonly testing?: {
    readonly threadSet: (limits: ThreadLimits, on: ThreadSetEvents<PoolCall>) => ThreadSetLike<PoolCall>;
    readonly clock: () => number;
  };
}

/** What the pool reports about itself: calls in flight and queued, live threads, the epochs they imported. */
export interface ThreadPoolStats {
  inflight: number;
  queued: number;
  /** Threads not draining. */
  threads: number;
  epochs: number;
}

/** A log line for the executor's stderr (its `time` is wall-clock, for people reading logs). */
export function logLine(level: string, msg: string): string {
  return JSON.stringify({ level, time: Date.now(), component: 'executor', msg });
}

type ThreadUnit = ExecutionThread<PoolCall>;
export type PoolCall = books.PoolCall<ThreadUnit, Extract<CompiledFunction, { ok: true }>>;

export class ThreadPool {
  private readonly opts: ThreadPoolOptions;
  private readonly calls = new Map<string, PoolCall>();
  private readonly set: ThreadSetLike<PoolCall>;
  private readonly queue = new books.CallQueue<PoolCall>();
  private closed = false;
  private readonly sweepTimer: NodeJS.Timeout | undefined;
  private readyWaiters: (() => void)[] = [];
  private drainWaiters: (() => void)[] = [];
  private sweeps = 0;
  private lastRssKillAt: number | undefined;
  /** Cancelled calls' hard limits (core/pool-scheduler.ts), looked at on every sweep tick. */
  private readonly hardLimits = new scheduler.DeadlineTable<PoolCall>();

  constructor(options: ThreadPoolOptions) {
    this.opts = options;
    const { maxFrameBytes, readCopyMaxEntries, isolation } = options;
    if (options.testing) this.clock = options.testing.clock;
    const limits = {
      maxFrameBytes,
      readCopyMaxEntries,
      isolation,
      threadHeapMb: options.memory.threadHeapMb,
    };
    const on: ThreadSetEvents<PoolCall> = {
      message: (t, batch) => this.onThreadMessages(t, batch),
      lost: (t, reason) => this.onThreadLost(t, reason, this.clock()),
    };
    this.set = options.testing ? options.testing.threadSet(limits, on) : new ThreadSet<PoolCall>(limits, on);
    for (let i = 0; i < Math.max(1, options.threads); i++) this.set.spawn();
    if (!options.testing) {
      this.sweepTimer = setInterval(() => this.sweep(), scheduler.SWEEP_INTERVAL_MS);
      this.sweepTimer.unref();
    }
  }

  /** Resolves once every initial thread is ready. */
  ready(): Promise<void> {
    if (this.set.threads.every((t) => t.ready)) return Promise.resolve();
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  stats(): ThreadPoolStats {
    const epochs = new Set<string>();
    let live = 0;
    for (const t of this.set.threads) {
      if (!t.draining) live++;
      for (const e of t.epochs) epochs.add(e);
    }
    let queued = 0;
    for (const c of this.calls.values()) if (c.state !== 'running') queued++;
    return { inflight: this.calls.size, queued, threads: live, epochs: epochs.size };
  }

  /**
   * Run attempts of one task: the entries of an ExecuteCalls frame (or the one of an ExecuteCall), each
   * posted to its thread as is, with `task` shared by all of them. The module is resolved once for all.
   */
  execute(task: CallTask, entries: readonly BatchedCallIn[]): void {
    if (this.closed) return;
    const fresh: PoolCall[] = [];
    for (const entry of entries) {
      const key = attemptKey(entry.callId, entry.attempt);
      if (this.calls.has(key)) {
        this.opts.log(logLine('warn', `duplicate ExecuteCall for ${key} ignored`));
        continue;
      }
      const call: PoolCall = books.newPoolCall(task, entry, key);
      this.calls.set(key, call);
      fresh.push(call);
    }
    if (fresh.length === 0) return;
    const resolved = this.opts.resolveModule(task.codeEpoch, task.function);
    if (resolved instanceof Promise) {
      resolved.then(
        (r) => this.onResolved(fresh, r, this.clock()),
        (err: Error) =>
          this.onResolved(
            fresh,
            { ok: false, code: 'FUNCTION_LOAD_FAILED', message: err.message },
            this.clock(),
          ),
      );
    } else {
      this.onResolved(fresh, resolved, this.clock());
    }
  }

  cancel(callId: string, attempt: number, reason: string): void {
    this.cancelAt(callId, attempt, reason, this.clock());
  }

  resume(msg: ResumeCallMessage): void {
    const call = this.calls.get(attemptKey(msg.callId, msg.attempt));
    if (!call || call.state !== 'running' || !call.thread) return;
    books.endWait(call, call.thread, this.clock());
    const { callId, attempt, requestId } = msg;
    this.control(
      call.thread,
      msg.ok
        ? { t: 'resume', callId, attempt, requestId, ok: true, value: msg.value }
        : { t: 'resume', callId, attempt, requestId, ok: false, error: msg.error },
    );
  }

  /**
   * Every thread forgets its read copies of the Calls phase `ioCache`. Only a thread that may hold some
   * is told (`ioCaches`): the Worker sends this once per phase that read, and a message to every thread
   * for a task that read nothing woke each of them for nothing (docs/executor.md § Read copies).
   */
  dropIoCache(ioCache: string): void {
    for (const t of this.set.threads)
      if (t.ioCaches.delete(ioCache) && !t.dead) this.control(t, { t: 'dropIoCache', ioCache });
  }

  /** Drain and replace every thread that imported `epoch`. */
  retireEpoch(epoch: string): void {
    for (const t of [...this.set.threads]) {
      if (t.draining || t.dead || !t.epochs.has(epoch)) continue;
      t.draining = true;
      this.set.spawn();
      if (t.calls.size === 0) this.set.terminate(t);
    }
  }

  /** Stop every thread. In-flight calls are dropped without frames (the connection is gone or closing). */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweepTimer);
    this.hardLimits.clear();
    this.calls.clear();
    this.notifyDrained();
    await this.set.terminateAll();
  }

  /** Resolves true once no call is in flight (for a graceful shutdown), or false after `timeoutMs`. */
  drained(timeoutMs: number): Promise<boolean> {
    if (this.calls.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.drainWaiters = this.drainWaiters.filter((w) => w !== onDrained);
        resolve(this.calls.size === 0);
      }, timeoutMs);
      const onDrained = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      this.drainWaiters.push(onDrained);
    });
  }

  /** The sweep over calls on threads (sweepRunning), every SWEEP_INTERVAL_MS on the pool's own timer. */
  sweep(): void {
    this.sweepRunning(this.clock());
  }

  // ---- internals -------------------------------------------------------------------------------------

  /** The one clock of the pool (performance.now ms); `monoAt` turns a reading into the threads' clock. */
  private clock: () => number = () => performance.now();

  private notifyDrained(): void {
    if (this.calls.size > 0 || this.drainWaiters.length === 0) return;
    for (const w of this.drainWaiters.splice(0)) w();
  }

  private cancelAt(callId: string, attempt: number, reason: string, now: number): void {
    const call = this.calls.get(attemptKey(callId, attempt));
    if (!call || call.cancelReason !== undefined) return;
    call.cancelReason = reason;
    let requeued = 0;
    if (
      call.state === 'running' &&
      !call.pickedUp &&
      !books.seqBefore(call.seq, shm.claimedUpTo(call.thread!.signals))
    )
      requeued = this.reclaim(call.thread!); // not started: take it (and the others not started) back
    if (call.state !== 'running') {
      this.finish(call);
      this.fail(call, 'deadline', true, `cancelled before it started (${reason})`);
      if (requeued > 0) this.pump(now);
      return;
    }
    const thread = call.thread!;
    thread.cancelling++;
    call.cancelledOn = thread;
    this.control(thread, { t: 'cancel', callId, attempt, reason });
    this.hardLimits.set(call, now + this.opts.cancelHardLimitMs);
  }

  /** Hard limits that passed (checked on the sweep tick): threads with overdue calls are terminated. */
  private onHardLimits(now: number): void {
    if (this.hardLimits.size === 0) return;
    for (const call of this.hardLimits.takeDue(now)) {
      const thread = call.cancelledOn;
      if (this.calls.get(call.key) !== call || !thread || call.thread !== thread || thread.dead) continue;
      call.overdue = true;
      const { callId, attempt } = call.entry;
      const limit = this.opts.cancelHardLimitMs;
      this.terminate(thread, `call ${callId} attempt ${attempt} ignored cancellation for ${limit} ms`, now);
    }
  }

  private onResolved(calls: readonly PoolCall[], r: CompiledFunction, now: number): void {
    let queued = false;
    for (const call of calls) {
      if (this.calls.get(call.key) !== call || call.state !== 'resolving') continue; // cancelled meanwhile
      if (!r.ok) {
        this.finish(call);
        this.fail(call, 'load', false, r.message, r.code);
        continue;
      }
      call.module = r;
      call.state = 'queued';
      this.queue.push(call);
      queued = true;
    }
    if (queued) this.pump(now);
  }

  /**
   * Queued calls to threads, in order, spread by free capacity, never two tenants on one thread at once
   * (core/tenant-placement.ts); a call that cannot go yet keeps its place in the queue.
   */
  private pump(now: number): void {
    if (!this.queue.pending) return;
    const mono = shm.monoAt(now);
    const beatAge = (t: ThreadUnit): number => this.silence(t, now, mono);
    const live = (c: PoolCall): boolean => c.state === 'queued' && this.calls.get(c.key) === c;
    const tenantAt = (i: number): string | undefined => {
      const c = this.queue.at(i)!;
      return live(c) ? books.tenantOf(c.task) : undefined;
    };
    const { at, to, scanned } = placeTenantCalls(
      this.set.threads,
      this.queue.length,
      tenantAt,
      this.opts.maxCallsPerThread,
      beatAge,
    );
    for (let k = 0; k < at.length; k++) this.dispatch(this.queue.at(at[k]!)!, to[k]!, now);
    this.queue.compact(scanned, live);
  }

  /** How long `t` has been silent, for stuck detection (core/pool-scheduler.ts, silenceMs). */
  private silence(t: ThreadUnit, now: number, mono: number): number {
    const busyFor = t.calls.size === 0 ? undefined : now - t.busySince;
    return scheduler.silenceMs(shm.ageMs(mono, shm.lastBeat(t.signals)), busyFor);
  }

  private dispatch(call: PoolCall, t: ThreadUnit, now: number): void {
    const mod = call.module!;
    if (t.calls.size === 0) t.busySince = now;
    books.assign(call, t, now);
    this.set.exec(t, call.task, call.entry, mod);
  }

  private control(t: ThreadUnit, c: ThreadControl): void {
    this.set.control(t, c);
  }

  /** Remove a call from the books; the caller sends its terminal frame. */
  private finish(call: PoolCall): void {
    this.calls.delete(call.key);
    if (call.cancelReason !== undefined) this.hardLimits.delete(call);
    const t = books.release<ThreadUnit, PoolCall>(call);
    if (t?.draining && t.calls.size === 0 && !t.dead) this.set.terminate(t);
    this.notifyDrained();
  }

  /**
   * Take back the calls sent to `t` that it has not started; they go to the front of the queue, in order
   * (the caller pumps). Returns how many.
   */
  private reclaim(t: ThreadUnit): number {
    const back = books.takeBack<ThreadUnit, PoolCall>(t, shm.revokeUnclaimed(t.signals, t.sentSeq));
    this.queue.pushFront(back);
    if (t.draining && t.calls.size === 0 && !t.dead) this.set.terminate(t);
    return back.length;
  }

  /** The thread has started `call`: its running time counts from the pickup its thread recorded. */
  private markPickedUp(call: PoolCall, t: ThreadUnit, now: number, mono: number): void {
    call.pickedUp = true;
    const at = shm.pickupTime(t.signals, call.seq);
    const start = scheduler.pickupStart(
      now,
      call.dispatchedAt,
      at === undefined ? undefined : shm.ageMs(mono, at),
    );
    if (call.openWaits === 0) call.runningSince = start;
  }

  private fail(
    call: PoolCall,
    kind: CallFailureKind,
    retryable: boolean,
    message: string,
    code?: string,
  ): void {
    this.opts.send(failedFrame(call.entry, { kind, retryable, message, ...(code ? { code } : {}) }));
  }

  private onThreadMessages(t: ThreadUnit, batch: ThreadToMainBatch): void {
    if (t.dead) return;
    const now = this.clock();
    let freed = false;
    if (batch.ready) {
      t.ready = true;
      freed = true;
      if (this.set.threads.every((x) => x.ready || x.draining)) {
        for (const w of this.readyWaiters.splice(0)) w();
      }
    }
    const { kinds, keys, frames } = batch;
    for (let i = 0; i < kinds.length; i++) {
      const call = this.calls.get(keys[i]!);
      if (!call || call.thread !== t) continue;
      const kind = kinds[i]! as ThreadEvent;
      switch (kind) {
        case ThreadEvent.Waiting:
          if (call.task.ioCache !== undefined) t.ioCaches.add(call.task.ioCache);
          if (!call.pickedUp) this.markPickedUp(call, t, now, shm.monoAt(now));
          if (books.startWait(call, t, now)) freed = true;
          break;
        case ThreadEvent.Done:
          call.startReported = call.pickedUp = true;
          this.finish(call);
          freed = true;
          break;
        case ThreadEvent.Completed:
          call.startReported = call.pickedUp = true;
          this.finish(call);
          freed = true;
          this.opts.sendCompleted(call.task.taskId, frames[i]!);
          continue;
        default: {
          const _exhaustive: never = kind;
          throw new Error(`unknown thread event ${String(_exhaustive)}`);
        }
      }
      this.opts.send(frames[i]!);
    }
    for (const line of batch.logs) this.opts.log(line);
    if (freed) this.pump(now);
  }

  private terminate(t: ThreadUnit, reason: string, now: number): void {
    if (t.dead) return;
    this.opts.log(logLine('warn', `terminating execution thread ${t.index}: ${reason}`));
    this.set.kill(t);
    this.onThreadLost(t, `terminated: ${reason}`, now);
  }

  private onThreadLost(t: ThreadUnit, reason: string, now: number): void {
    if (t.dead || this.closed) return;
    this.set.remove(t);
    const wasReady = t.ready;
    const requeued = this.reclaim(t); // never started: they run on another thread
    if (requeued > 0) this.opts.log(logLine('info', `re-routing ${requeued} calls from thread ${t.index}`));
    for (const call of [...t.calls]) {
      this.finish(call);
      const f = scheduler.lostCallFailure(t, call, reason);
      this.fail(call, f.kind, f.retryable, f.message, f.code);
    }
    if (!t.draining) {
      if (wasReady) {
        this.set.spawn();
      } else {
        // Died while starting: do not spin; try again shortly.
        this.opts.log(logLine('error', `execution thread ${t.index} failed to start: ${reason}`));
        setTimeout(() => !this.closed && (this.set.spawn(), undefined), 1000).unref();
      }
    }
    this.pump(now);
  }

  /**
   * Every SWEEP_INTERVAL_MS, over the threads and the calls on them (never the queue): stuck threads
   * give back what they have not started, pickups start their calls' running time, CallStarted goes out
   * for calls running STARTED_REPORT_MS without news (the thread cannot say it: a call spinning in a
   * loop never lets its thread end the turn), and the safety net cancels calls over their budget.
   */
  private sweepRunning(now: number): void {
    this.onHardLimits(now);
    const mono = shm.monoAt(now);
    let requeued = 0;
    for (const t of [...this.set.threads]) {
      if (t.dead || !t.ready) continue;
      if (scheduler.shouldTakeBack(t, this.silence(t, now, mono))) requeued += this.reclaim(t);
      const upTo = shm.claimedUpTo(t.signals);
      for (const call of t.calls) {
        if (!call.pickedUp) {
          if (!books.seqBefore(call.seq, upTo)) continue;
          this.markPickedUp(call, t, now, mono);
        }
        const elapsedMs = scheduler.startedReportDue(call, now);
        if (elapsedMs !== undefined) {
          call.startReported = true;
          const { callId, attempt } = call.entry;
          this.opts.send(JSON.stringify({ type: 'CallStarted', callId, attempt, elapsedMs }));
        }
        const overBudget = scheduler.safetyNetDue(call, now, this.opts.safetyMarginMs);
        if (overBudget !== undefined) this.cancelAt(call.entry.callId, call.entry.attempt, overBudget, now);
      }
    }
    if (++this.sweeps % scheduler.MEMORY_CHECK_EVERY === 0) this.checkMemory(now, mono);
    if (requeued > 0 || this.queue.pending) this.pump(now);
  }

  /**
   * The memory bound: the live threads' published figures and the process RSS go to memory-watch.ts,
   * and the threads it names are terminated.
   */
  private checkMemory(now: number, mono: number): void {
    const limits = this.opts.memory;
    if (limits.threadMemoryMb <= 0 && limits.maxRssMb <= 0) return;
    const live = this.set.threads.filter((t) => t.ready && !t.dead);
    const samples = live.map((t) => {
      const stuck = scheduler.isStuck(this.silence(t, now, mono));
      return { index: t.index, memoryMb: shm.lastMemoryMb(t.signals), stuck };
    });
    const rssMb = limits.maxRssMb > 0 ? Math.round(process.memoryUsage.rss() / 2 ** 20) : 0;
    for (const kill of judgeMemory(samples, rssMb, limits, now, this.lastRssKillAt)) {
      const t = live.find((x) => x.index === kill.index);
      if (t === undefined || t.dead) continue;
      if (kill.forRss) this.lastRssKillAt = now;
      t.memoryKill = kill.reason;
      this.terminate(t, `memory bound: ${kill.reason}`, now);
    }
  }
}
