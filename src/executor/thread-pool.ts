// The executor's execution units: a small pool of worker threads, fed by the main thread.
//
// Why threads: bench/executor-units.ts measures a thread pool against a child-process pool for no-op
// calls with 1,024 in flight; threads win clearly (see PROTOCOL.md § Execution units), and a thread can
// still be terminated on its own when a call will not stop.
//
// Routing: a call goes to the healthy thread with the fewest *running* calls, if that is below
// `maxCallsPerThread`; otherwise it queues here (not yet started: the Worker's budget clock has not
// begun). Calls waiting on the Worker (io, subcalls) do not count as running, so parents blocked on
// children can never starve the children of threads. Healthy: ready, not draining, no cancelled call
// still on it, and its event loop beat within STUCK_MS (a call spinning in a loop stops the beat).
//
// Started: a thread claims each call in shared memory as it starts it (thread-messages.ts), so the
// sweep knows which calls really run. Calls sent to a thread that has gone stuck (or has a cancelled call
// on it), and not started there, are taken back and routed again; they never run twice.
//
// Cancellation: CancelCall aborts the call's signal on its thread at once; if the call is still there
// `cancelHardLimitMs` later, the whole thread is terminated and replaced. Its overdue calls fail with
// kind `deadline`, every other call on it with `executor_crash`, both retryable. A local safety net
// cancels a call that has *run* (not waited) for its budget plus a margin without a CancelCall arriving.
//
// Epochs: a thread imports each (epoch, function) once; modules are never freed, so when an epoch is
// retired every thread that imported it is drained (no new calls) and replaced, and terminated once idle.
//
// Isolation `task` (docs/security.md, "Task isolation"): a thread imports each function once per task
// that calls it there, so a thread is drained and replaced the same way once it holds
// MAX_TASK_INSTANCES_PER_THREAD task instances.
//
// Memory (memory-watch.ts): each thread runs under a V8 heap limit, and every MEMORY_CHECK_EVERY sweeps
// the pool compares each thread's published heap + off-heap figure and the process RSS with their
// bounds; a thread over one is terminated, its calls fail with EXECUTOR_MEMORY_LIMIT (retryable).

import { failedFrame } from './call-outcome.js';
import { ExecutorErrorCode } from './errors.js';
import {
  bootstrapSource,
  emptyOutbox,
  startExecutionThread,
  type ExecutionThread,
} from './execution-thread.js';
import type { CompiledFunction } from './function-compiler.js';
import { judgeMemory, type MemoryLimits } from './memory-watch.js';
import {
  attemptKey,
  type CallFailureKind,
  type ExecuteCallMessage,
  type ResumeCallMessage,
} from './protocol.js';
import {
  ageMs,
  claimedUpTo,
  instanceCount,
  lastBeat,
  lastMemoryMb,
  monoMs,
  pickupTime,
  revokeUnclaimed,
  SEQ_MASK,
  seqBefore,
  ThreadEvent,
  type ThreadControl,
  type ThreadToMainBatch,
} from './thread-messages.js';

export interface ThreadPoolOptions {
  readonly threads: number;
  readonly maxCallsPerThread: number;
  readonly cancelHardLimitMs: number;
  readonly maxFrameBytes: number;
  /** Read copies each thread keeps (read-copies.ts); 0 turns them off. */
  readonly readCopyMaxEntries: number;
  /** task: threads lock down, freeze their global and import functions per task; none: no isolation. */
  readonly isolation: 'task' | 'none';
  readonly memory: MemoryLimits;
  /** Extra running time past `budgetMs` before the local safety net cancels. Default max(1000, budget). */
  readonly safetyMarginMs?: number;
  /** Resolves a call's module (compiled, cached). */
  readonly resolveModule: (epoch: string, name: string) => CompiledFunction | Promise<CompiledFunction>;
  /** One outbound protocol frame, already JSON. */
  readonly send: (json: string) => void;
  readonly log: (line: string) => void;
}

type CallState = 'resolving' | 'queued' | 'running';
type ThreadUnit = ExecutionThread<PoolCall>;

interface PoolCall {
  readonly msg: ExecuteCallMessage;
  /** The ExecuteCall frame as received; the thread parses it itself. */
  readonly raw: string;
  readonly key: string;
  state: CallState;
  module: Extract<CompiledFunction, { ok: true }> | undefined;
  thread: ThreadUnit | undefined;
  openWaits: number;
  runningMs: number;
  /** When the current running stretch began: the pickup on its thread, then each resume. */
  runningSince: number;
  /** When the call was sent to its thread. */
  dispatchedAt: number;
  /** Its exec sequence number on its thread (see ThreadSignals). */
  seq: number;
  /** The thread has started it (claimed in shared memory); until then it may be taken back. */
  pickedUp: boolean;
  /** CallStarted sent, or implied by a CallWaiting / terminal frame. */
  startReported: boolean;
  cancelReason: string | undefined;
  /** Counted in its thread's `cancelling`. */
  cancelCounted: boolean;
  overdue: boolean;
  hardLimitTimer: NodeJS.Timeout | undefined;
}

/** How often calls on threads are looked at: pickups, CallStarted reports, stuck threads, safety net. */
const SWEEP_INTERVAL_MS = 25;
/** A call still running this long after its thread picked it up gets a CallStarted. */
const STARTED_REPORT_MS = 25;
/** A thread whose event loop has not beaten for this long is stuck: no new calls, unstarted ones go back. */
const STUCK_MS = 50;
/** Memory is looked at every this many sweeps (100 ms). */
const MEMORY_CHECK_EVERY = 4;
/** Task module instances a thread may hold (isolation `task`) before it is drained and replaced. */
export const MAX_TASK_INSTANCES_PER_THREAD = 1024;

export class ThreadPool {
  private readonly opts: ThreadPoolOptions;
  private readonly calls = new Map<string, PoolCall>();
  private threads: ThreadUnit[] = [];
  private queue: PoolCall[] = [];
  private queueHead = 0;
  private nextThreadIndex = 0;
  private outboxScheduled = false;
  private closed = false;
  private readonly sweep: NodeJS.Timeout;
  private readyWaiters: (() => void)[] = [];
  private readonly bootstrap: string;
  private sweeps = 0;
  private lastRssKillAt: number | undefined;

  constructor(options: ThreadPoolOptions) {
    this.opts = options;
    this.bootstrap = bootstrapSource();
    for (let i = 0; i < Math.max(1, options.threads); i++) this.spawn();
    this.sweep = setInterval(() => this.sweepRunning(), SWEEP_INTERVAL_MS);
    this.sweep.unref();
  }

  /** Resolves once every initial thread is ready. */
  ready(): Promise<void> {
    if (this.threads.every((t) => t.ready)) return Promise.resolve();
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  stats(): { inflight: number; queued: number; threads: number; epochs: number } {
    const epochs = new Set<string>();
    let live = 0;
    for (const t of this.threads) {
      if (!t.draining) live++;
      for (const e of t.epochs) epochs.add(e);
    }
    let queued = 0;
    for (const c of this.calls.values()) if (c.state !== 'running') queued++;
    return { inflight: this.calls.size, queued, threads: live, epochs: epochs.size };
  }

  /** Run an attempt; `raw` is the frame's JSON text, forwarded to the thread as is. */
  execute(msg: ExecuteCallMessage, raw: string): void {
    if (this.closed) return;
    const key = attemptKey(msg.callId, msg.attempt);
    if (this.calls.has(key)) {
      this.opts.log(logLine('warn', `duplicate ExecuteCall for ${key} ignored`));
      return;
    }
    const call: PoolCall = {
      msg,
      raw,
      key,
      state: 'resolving',
      module: undefined,
      thread: undefined,
      openWaits: 0,
      runningMs: 0,
      runningSince: 0,
      dispatchedAt: 0,
      seq: 0,
      pickedUp: false,
      startReported: false,
      cancelReason: undefined,
      cancelCounted: false,
      overdue: false,
      hardLimitTimer: undefined,
    };
    this.calls.set(key, call);
    const resolved = this.opts.resolveModule(msg.codeEpoch, msg.function);
    if (resolved instanceof Promise) {
      resolved.then(
        (r) => this.onResolved(call, r),
        (err: Error) =>
          this.onResolved(call, { ok: false, code: 'FUNCTION_LOAD_FAILED', message: err.message }),
      );
    } else {
      this.onResolved(call, resolved);
    }
  }

  cancel(callId: string, attempt: number, reason: string): void {
    const call = this.calls.get(attemptKey(callId, attempt));
    if (!call || call.cancelReason !== undefined) return;
    call.cancelReason = reason;
    let requeued = 0;
    if (call.state === 'running' && !call.pickedUp && !seqBefore(call.seq, claimedUpTo(call.thread!.signals)))
      requeued = this.reclaim(call.thread!); // not started: take it (and the others not started) back
    if (call.state !== 'running') {
      this.finish(call);
      this.fail(call, 'deadline', true, `cancelled before it started (${reason})`);
      if (requeued > 0) this.pump();
      return;
    }
    const thread = call.thread!;
    thread.cancelling++;
    call.cancelCounted = true;
    this.control(thread, { t: 'cancel', callId, attempt, reason });
    call.hardLimitTimer = setTimeout(() => {
      if (this.calls.get(call.key) !== call || call.thread !== thread || thread.dead) return;
      call.overdue = true;
      this.terminate(
        thread,
        `call ${callId} attempt ${attempt} ignored cancellation for ${this.opts.cancelHardLimitMs} ms`,
      );
    }, this.opts.cancelHardLimitMs);
    call.hardLimitTimer.unref();
  }

  resume(msg: ResumeCallMessage): void {
    const call = this.calls.get(attemptKey(msg.callId, msg.attempt));
    if (!call || call.state !== 'running' || !call.thread) return;
    if (call.openWaits > 0 && --call.openWaits === 0) {
      call.thread.running++;
      call.runningSince = performance.now();
    }
    const { callId, attempt, requestId } = msg;
    this.control(
      call.thread,
      msg.ok
        ? { t: 'resume', callId, attempt, requestId, ok: true, value: msg.value }
        : { t: 'resume', callId, attempt, requestId, ok: false, error: msg.error },
    );
  }

  /** Every thread forgets its read copies of the Calls phase `ioCache`. */
  dropIoCache(ioCache: string): void {
    for (const t of this.threads) if (!t.dead) this.control(t, { t: 'dropIoCache', ioCache });
  }

  /** Drain and replace every thread that imported `epoch`. */
  retireEpoch(epoch: string): void {
    for (const t of [...this.threads]) {
      if (t.draining || t.dead || !t.epochs.has(epoch)) continue;
      t.draining = true;
      this.spawn();
      if (t.calls.size === 0) this.retireThread(t);
    }
  }

  /** Stop every thread. In-flight calls are dropped without frames (the connection is gone or closing). */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweep);
    for (const c of this.calls.values()) if (c.hardLimitTimer) clearTimeout(c.hardLimitTimer);
    this.calls.clear();
    const threads = this.threads;
    this.threads = [];
    await Promise.all(threads.map((t) => ((t.dead = true), t.worker.terminate().catch(() => 0))));
  }

  /** Resolves when no call is in flight (for a graceful shutdown), or after `timeoutMs`. */
  async drained(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.calls.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return this.calls.size === 0;
  }

  // ---- internals -------------------------------------------------------------------------------------

  private onResolved(call: PoolCall, r: CompiledFunction): void {
    if (this.calls.get(call.key) !== call || call.state !== 'resolving') return; // cancelled meanwhile
    if (!r.ok) {
      this.finish(call);
      this.fail(call, 'load', false, r.message, r.code);
      return;
    }
    call.module = r;
    call.state = 'queued';
    this.queue.push(call);
    this.pump();
  }

  private pump(): void {
    if (this.queueHead >= this.queue.length) return;
    const max = this.opts.maxCallsPerThread;
    const now = monoMs();
    while (this.queueHead < this.queue.length) {
      const call = this.queue[this.queueHead]!;
      if (call.state !== 'queued' || this.calls.get(call.key) !== call) {
        this.queueHead++;
        continue;
      }
      let best: ThreadUnit | undefined;
      for (const t of this.threads) {
        if (
          t.ready &&
          !t.draining &&
          !t.dead &&
          t.running < max &&
          t.cancelling === 0 &&
          (!best || t.running < best.running) &&
          ageMs(now, lastBeat(t.signals)) <= STUCK_MS
        )
          best = t;
      }
      if (!best) break;
      this.queueHead++;
      this.dispatch(call, best);
    }
    if (this.queueHead > 1024 && this.queueHead * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.queueHead);
      this.queueHead = 0;
    }
  }

  private dispatch(call: PoolCall, t: ThreadUnit): void {
    const mod = call.module!;
    call.state = 'running';
    call.thread = t;
    call.runningSince = call.dispatchedAt = performance.now();
    call.seq = t.sentSeq;
    t.sentSeq = (t.sentSeq + 1) & SEQ_MASK;
    t.calls.add(call);
    t.running++;
    if (!t.modules.has(mod.moduleKey)) {
      t.modules.add(mod.moduleKey);
      t.epochs.add(call.msg.codeEpoch);
      t.outbox.modules.push({ moduleKey: mod.moduleKey, url: mod.url, code: mod.code, path: mod.path });
    }
    t.outbox.execRaw.push(call.raw);
    t.outbox.execModule.push(mod.moduleKey);
    this.scheduleOutbox(t);
  }

  private control(t: ThreadUnit, c: ThreadControl): void {
    t.outbox.controls.push(c);
    this.scheduleOutbox(t);
  }

  private scheduleOutbox(t: ThreadUnit): void {
    t.outboxPending = true;
    if (this.outboxScheduled) return;
    this.outboxScheduled = true;
    setImmediate(() => {
      this.outboxScheduled = false;
      for (const th of this.threads) {
        if (!th.outboxPending) continue;
        const batch = th.outbox;
        th.outbox = emptyOutbox();
        th.outboxPending = false;
        if (!th.dead) th.worker.postMessage(batch);
      }
    });
  }

  /** Remove a call from the books; the caller sends its terminal frame. */
  private finish(call: PoolCall): void {
    this.calls.delete(call.key);
    if (call.hardLimitTimer) clearTimeout(call.hardLimitTimer);
    const t = call.thread;
    if (t && t.calls.delete(call)) {
      if (call.openWaits === 0) t.running--;
      if (call.cancelCounted) t.cancelling--;
    }
    if (t?.draining && t.calls.size === 0 && !t.dead) this.retireThread(t);
  }

  /**
   * Take back the calls sent to `t` that it has not started; they go to the front of the queue, in order
   * (the caller pumps). Returns how many.
   */
  private reclaim(t: ThreadUnit): number {
    const from = revokeUnclaimed(t.signals, t.sentSeq);
    if (from === t.sentSeq) return 0;
    const back: PoolCall[] = [];
    for (const call of t.calls) if (!call.pickedUp && !seqBefore(call.seq, from)) back.push(call);
    back.sort((a, b) => ((a.seq - from) & SEQ_MASK) - ((b.seq - from) & SEQ_MASK));
    for (const call of back) {
      t.calls.delete(call);
      t.running--;
      call.state = 'queued';
      call.thread = undefined;
    }
    this.queue = [...back, ...this.queue.slice(this.queueHead)];
    this.queueHead = 0;
    if (t.draining && t.calls.size === 0 && !t.dead) this.retireThread(t);
    return back.length;
  }

  /** The thread has started `call`: its running time counts from the pickup its thread recorded. */
  private markPickedUp(call: PoolCall, t: ThreadUnit, now: number, mono: number): void {
    call.pickedUp = true;
    const onThread = now - call.dispatchedAt;
    const at = pickupTime(t.signals, call.seq);
    const ran = at === undefined ? onThread : Math.min(Math.max(0, ageMs(mono, at)), onThread);
    if (call.openWaits === 0) call.runningSince = now - ran;
  }

  private fail(
    call: PoolCall,
    kind: CallFailureKind,
    retryable: boolean,
    message: string,
    code?: string,
  ): void {
    this.opts.send(failedFrame(call.msg, { kind, retryable, message, ...(code ? { code } : {}) }));
  }

  private onThreadMessages(t: ThreadUnit, batch: ThreadToMainBatch): void {
    if (t.dead) return;
    let freed = false;
    if (batch.ready) {
      t.ready = true;
      freed = true;
      if (this.threads.every((x) => x.ready || x.draining)) for (const w of this.readyWaiters.splice(0)) w();
    }
    const { kinds, keys, frames } = batch;
    for (let i = 0; i < kinds.length; i++) {
      const call = this.calls.get(keys[i]!);
      if (!call || call.thread !== t) continue;
      const kind = kinds[i]! as ThreadEvent;
      switch (kind) {
        case ThreadEvent.Waiting:
          if (!call.pickedUp) this.markPickedUp(call, t, performance.now(), monoMs());
          call.startReported = true;
          if (call.openWaits++ === 0) {
            t.running--;
            call.runningMs += performance.now() - call.runningSince;
            freed = true;
          }
          break;
        case ThreadEvent.Done:
          call.startReported = call.pickedUp = true;
          this.finish(call);
          freed = true;
          break;
        default: {
          const _exhaustive: never = kind;
          throw new Error(`unknown thread event ${String(_exhaustive)}`);
        }
      }
      this.opts.send(frames[i]!);
    }
    for (const line of batch.logs) this.opts.log(line);
    if (freed) this.pump();
  }

  private spawn(): ThreadUnit {
    const { maxFrameBytes, readCopyMaxEntries, isolation } = this.opts;
    const t = startExecutionThread<PoolCall>(
      this.nextThreadIndex++,
      { maxFrameBytes, readCopyMaxEntries, isolation, threadHeapMb: this.opts.memory.threadHeapMb },
      this.bootstrap,
    );
    t.worker.on('message', (batch: ThreadToMainBatch) => this.onThreadMessages(t, batch));
    t.worker.on('error', (err: Error & { code?: string }) => {
      if (err?.code === 'ERR_WORKER_OUT_OF_MEMORY')
        t.memoryKill ??= `it ran out of its heap (executor.threadHeapMb ${this.opts.memory.threadHeapMb})`;
      this.onThreadLost(t, `crashed: ${err?.message ?? String(err)}`);
    });
    t.worker.on('exit', (code) => this.onThreadLost(t, `exited with code ${code}`));
    this.threads.push(t);
    return t;
  }

  private retireThread(t: ThreadUnit): void {
    t.dead = true;
    this.threads = this.threads.filter((x) => x !== t);
    void t.worker.terminate().catch(() => 0);
  }

  private terminate(t: ThreadUnit, reason: string): void {
    if (t.dead) return;
    this.opts.log(logLine('warn', `terminating execution thread ${t.index}: ${reason}`));
    void t.worker.terminate().catch(() => 0);
    this.onThreadLost(t, `terminated: ${reason}`);
  }

  private onThreadLost(t: ThreadUnit, reason: string): void {
    if (t.dead || this.closed) return;
    t.dead = true;
    this.threads = this.threads.filter((x) => x !== t);
    const wasReady = t.ready;
    const requeued = this.reclaim(t); // never started: they run on another thread
    if (requeued > 0) this.opts.log(logLine('info', `re-routing ${requeued} calls from thread ${t.index}`));
    for (const call of [...t.calls]) {
      this.finish(call);
      if (t.memoryKill !== undefined) {
        this.fail(
          call,
          'executor_crash',
          true,
          `${ExecutorErrorCode.EXECUTOR_MEMORY_LIMIT}: execution thread ${t.index} was terminated: ${t.memoryKill}`,
          ExecutorErrorCode.EXECUTOR_MEMORY_LIMIT,
        );
      } else if (call.overdue) {
        this.fail(
          call,
          'deadline',
          true,
          `cancelled (${call.cancelReason}) and its execution thread ${reason}`,
        );
      } else {
        this.fail(call, 'executor_crash', true, `execution thread ${t.index} ${reason}`);
      }
    }
    if (!t.draining) {
      if (wasReady) {
        this.spawn();
      } else {
        // Died while starting: do not spin; try again shortly.
        this.opts.log(logLine('error', `execution thread ${t.index} failed to start: ${reason}`));
        setTimeout(() => !this.closed && (this.spawn(), undefined), 1000).unref();
      }
    }
    this.pump();
  }

  /**
   * Every SWEEP_INTERVAL_MS, over the threads and the calls on them (never the queue):
   *  - a stuck thread (no beat for STUCK_MS) or one with a cancelled call on it gives back the calls it
   *    has not started; they are routed again (pump skips such threads).
   *  - pickups: calls the thread has claimed start their running time when the thread picked them up.
   *  - CallStarted for calls running STARTED_REPORT_MS without news. The thread cannot say it: a call
   *    spinning in a loop never lets its thread end the turn. A call not picked up gets none.
   *  - the safety net: cancel a call that has run (not waited) for its budget plus a margin.
   */
  private sweepRunning(): void {
    const now = performance.now();
    const mono = monoMs();
    let requeued = 0;
    for (const t of [...this.threads]) {
      if (t.dead || !t.ready) continue;
      if (t.cancelling > 0 || ageMs(mono, lastBeat(t.signals)) > STUCK_MS) requeued += this.reclaim(t);
      if (!t.draining && instanceCount(t.signals) >= MAX_TASK_INSTANCES_PER_THREAD) {
        // Module instances are never freed: a thread that made this many is replaced (like a retired
        // epoch). The thread counts them in shared memory, so the routing path pays nothing per call.
        t.draining = true;
        this.spawn();
        requeued += this.reclaim(t);
        if (t.calls.size === 0 && !t.dead) this.retireThread(t);
        if (t.dead) continue;
      }
      const upTo = claimedUpTo(t.signals);
      for (const call of t.calls) {
        if (!call.pickedUp) {
          if (!seqBefore(call.seq, upTo)) continue;
          this.markPickedUp(call, t, now, mono);
        }
        // Not reported yet means it has not waited either: runningSince is its pickup.
        if (!call.startReported && now - call.runningSince >= STARTED_REPORT_MS) {
          call.startReported = true;
          const { callId, attempt } = call.msg;
          this.opts.send(
            JSON.stringify({
              type: 'CallStarted',
              callId,
              attempt,
              elapsedMs: Math.round(now - call.runningSince),
            }),
          );
        }
        if (call.cancelReason !== undefined || call.msg.budgetMs <= 0) continue;
        const ran = call.runningMs + (call.openWaits === 0 ? now - call.runningSince : 0);
        const limit = call.msg.budgetMs + (this.opts.safetyMarginMs ?? Math.max(1000, call.msg.budgetMs));
        if (ran > limit) {
          this.cancel(
            call.msg.callId,
            call.msg.attempt,
            `executor safety net: ran ${Math.round(ran)} ms against a budget of ${call.msg.budgetMs} ms`,
          );
        }
      }
    }
    if (++this.sweeps % MEMORY_CHECK_EVERY === 0) this.checkMemory(mono);
    if (requeued > 0 || this.queueHead < this.queue.length) this.pump();
  }

  /** The memory bound (memory-watch.ts): terminate the threads it names. */
  private checkMemory(mono: number): void {
    const { threadMemoryMb, maxRssMb } = this.opts.memory;
    if (threadMemoryMb <= 0 && maxRssMb <= 0) return;
    const live = this.threads.filter((t) => t.ready && !t.dead);
    const samples = live.map((t) => ({
      index: t.index,
      memoryMb: lastMemoryMb(t.signals),
      stuck: ageMs(mono, lastBeat(t.signals)) > STUCK_MS,
    }));
    const rssMb = maxRssMb > 0 ? Math.round(process.memoryUsage.rss() / 2 ** 20) : 0;
    const now = performance.now();
    for (const kill of judgeMemory(samples, rssMb, this.opts.memory, now, this.lastRssKillAt)) {
      const t = live.find((x) => x.index === kill.index);
      if (!t || t.dead) continue;
      if (kill.forRss) this.lastRssKillAt = now;
      t.memoryKill = kill.reason;
      this.terminate(t, `memory bound: ${kill.reason}`);
    }
  }
}

function logLine(level: string, msg: string): string {
  return JSON.stringify({ level, time: Date.now(), component: 'executor', msg });
}
