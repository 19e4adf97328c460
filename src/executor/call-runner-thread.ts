// An execution thread: runs calls of any epoch. Entered through the bootstrap in thread-pool.ts, which
// registers tsx first (for TypeScript helpers a function imports), then imports this module.
//
// Calls come in slices (thread-messages.ts): the attempts of one task, their task-level fields once. Per
// slice the function's module instance is looked up once (thread-modules.ts); per call: claim it, build a
// context, invoke, serialise the outcome into a protocol frame, or into a CallsCompleted entry when its
// task asked for bulk results. Everything going out is batched and posted once per event-loop turn.
// Per-call allocations are what a call needs: no AbortController unless `ctx.signal` is read or a cancel
// comes (call-context.ts), no promise reaction for a function that returns a non-thenable, and a call is
// put in the table of running calls (for cancels and answers, which come in later turns) only if it is
// still running when the next message comes: a call that ends in the turn that started it never is. CallStarted is not this thread's business: a
// spinning call never ends its turn, so the main thread reports calls that stay on a thread (pool).
// What the main thread needs for that goes through shared memory (thread-messages.ts): the thread claims
// each exec before starting it (skipping execs the main thread took back) and records when, and it
// beats, so the main thread can tell a thread whose event loop is stuck.
//
// Isolation `task` (docs/security.md, "Task isolation"): before it reports ready the thread locks down
// its intrinsics and freezes its global object (task-isolation.ts), and it makes a function's module
// instance once per task that calls it here (thread-modules.ts: a call of the module's factory, not an
// import), so module-level state of a function is never seen by another task. With `none`, one instance
// per thread serves every task.
// Memory: on its idle beats the thread publishes its heap + off-heap figure (memory-watch.ts).

import { register } from 'node:module';
import { MessageChannel, parentPort, workerData } from 'node:worker_threads';
import {
  cancelRunningCall,
  cancellationError,
  completedEntryOf,
  completedFrameOf,
  failedFrameOf,
  invokeFunction,
  invokeWith,
  newSliceCall,
  PageRowContext,
  SUBCALL_IN_PAGE,
  type CallHost,
  type LogLevel,
  type RunningCall,
} from './call-context.js';
import { failedFrame, readThrown } from './call-outcome.js';
import { BUSY_BEAT_INTERVAL_MS, IDLE_BEAT_INTERVAL_MS } from './core/pool-scheduler.js';
import { ExecutorErrorCode } from './errors.js';
import { attemptKey, type CallPageInfo, type WaitRequest } from './protocol.js';
import { ReadCopies, deepFreeze, readCopyHits, readCopyKey, type IoRequest } from './read-copies.js';
import { CallWaitError, type LogFields } from './sdk.js';
import { isolateThread } from './task-isolation.js';
import { LEVELS, newBatch, ThreadOutbox } from './thread-outbox.js';
import { ThreadModules, type Fn } from './thread-modules.js';
import {
  beat,
  claimExec,
  monoAt,
  monoMs,
  publishMemory,
  signalViews,
  SEQ_MASK,
  ThreadEvent,
  type ExecSlice,
  type MainToThreadBatch,
  type ThreadControl,
  type ThreadData,
} from './thread-messages.js';

const data = workerData as ThreadData;
const isolated = data.isolation === 'task';
const port = parentPort!;
const hooks = new MessageChannel();
register(data.hooksUrl, { data: { port: hooks.port2 }, transferList: [hooks.port2] });
hooks.port1.unref();
process.setSourceMapsEnabled(true);

const minLevel = LEVELS[(process.env.BLOCKX_LOG_LEVEL ?? 'info') as LogLevel] ?? LEVELS.info;

const signals = signalViews(data.signals);
/** The sequence number of the next exec to arrive (the main thread numbers them the same way). */
let nextSeq = 0;

const modules = new ThreadModules(hooks.port1, isolated);
/** Calls that were still running when a message came (see `settleFresh`), by attempt key. */
const running = new Map<string, RunningCall>();
/** Calls started since the last message came: they join `running` then if they have not ended. */
let fresh: RunningCall[] = [];
/** Calls started here and not ended (the beat's pace). */
let live = 0;

/** Calls still running from earlier turns join `running`; those that ended are forgotten. */
function settleFresh(): void {
  if (fresh.length === 0) return;
  for (const run of fresh) {
    if (run.done) continue;
    run.listed = true;
    running.set(run.key, run);
  }
  fresh = [];
}
const outbox = new ThreadOutbox(port, signals, data.threadIndex, minLevel);
const emit = outbox.emit.bind(outbox);
const emitLog = outbox.emitLog.bind(outbox);

const copies = new ReadCopies(data.readCopyMaxEntries);

/**
 * An IO read through the thread's read copies (read-copies.ts): a copied answer is a hit without any
 * frame; a read another call has in flight is shared; otherwise the Worker is asked and its answer kept.
 */
function copiedRead(run: RunningCall, request: IoRequest, scope: string, key: string): Promise<unknown> {
  const copy = copies.lookup(scope, key);
  if (copy === undefined) {
    // This call leads: its read becomes the copy. If the call ends before the answer comes (it never
    // awaited the read), the answer is dropped with the call, so the read is abandoned (finish()).
    let abandon!: (reason: unknown) => void;
    const read = new Promise((resolve, reject) => {
      abandon = reject;
      ask(run, request).then(resolve, reject);
    });
    (run.copyLeads ??= []).push(abandon);
    return copies.track(scope, key, read, readCopyHits(request));
  }
  if (copy.settled) {
    run.ioHits += readCopyHits(request);
    return Promise.resolve(copy.value);
  }
  // Another call's read of the same key is in flight: wait for it as an open request of this call, so
  // cancelling this call rejects it at once. If that read fails, ask the Worker ourselves.
  const requestId = ++run.nextRequestId;
  const waits = (run.waits ??= new Map());
  const answer = new Promise((resolve, reject) => waits.set(requestId, { resolve, reject }));
  const settle = (then: (w: { resolve: (v: unknown) => void; reject: (e: unknown) => void }) => void) => {
    const waiter = run.waits?.get(requestId);
    if (waiter === undefined) return; // cancelled or finished meanwhile
    run.waits!.delete(requestId);
    then(waiter);
  };
  copy.read.then(
    (value) =>
      settle((w) => {
        run.ioHits += readCopyHits(request);
        w.resolve(value);
      }),
    () => settle((w) => host.wait(run, request).then(w.resolve, w.reject)),
  );
  return answer;
}

const host: CallHost = {
  wait(run: RunningCall, request: WaitRequest): Promise<unknown> {
    if (run.cancelReason !== undefined) return Promise.reject(cancellationError(run.cancelReason));
    if (run.done) return Promise.reject(new Error('the call has already finished'));
    if (request.kind !== 'io' || request.op === 'scan') return ask(run, request);
    // get / getMany answers are frozen whether or not they are copied: a function sees the same thing
    // with read copies on or off.
    const scope = run.task.ioCache;
    const key = scope !== undefined && copies.enabled ? readCopyKey(request) : undefined;
    return key === undefined ? ask(run, request).then(deepFreeze) : copiedRead(run, request, scope!, key);
  },
  log(run: RunningCall, level: LogLevel, message: string, fields: LogFields | undefined): void {
    if (LEVELS[level] < minLevel) return;
    const { taskId, function: fn } = run.task;
    const { callId, attempt } = run.entry;
    emitLog(level, message, { ...fields, taskId, callId, attempt, function: fn });
  },
};

/** Sends a CallWaiting for `request`; the promise settles with the Worker's ResumeCall. */
function ask(run: RunningCall, request: WaitRequest): Promise<unknown> {
  const requestId = ++run.nextRequestId;
  const { taskId } = run.task;
  const { callId, attempt } = run.entry;
  let json: string;
  try {
    json = JSON.stringify({ type: 'CallWaiting', taskId, callId, attempt, requestId, request });
  } catch (err) {
    return Promise.reject(
      new TypeError(`request arguments are not JSON-serialisable: ${(err as Error).message}`),
    );
  }
  if (json.length * 3 > data.maxFrameBytes && Buffer.byteLength(json) > data.maxFrameBytes) {
    return Promise.reject(
      new RangeError(`request too large: over the ${data.maxFrameBytes}-byte frame limit`),
    );
  }
  emit(ThreadEvent.Waiting, run.key, json);
  const waits = (run.waits ??= new Map());
  return new Promise((resolve, reject) => waits.set(requestId, { resolve, reject }));
}

function finish(run: RunningCall, kind: ThreadEvent, json: string): void {
  run.done = true;
  live--;
  if (run.listed) running.delete(run.key);
  run.waits = undefined;
  if (run.copyLeads !== undefined) {
    const ended = new Error('the call that sent this read ended before its answer came');
    for (const abandon of run.copyLeads) abandon(ended); // no-op for reads already answered
    run.copyLeads = undefined;
  }
  emit(kind, run.key, json);
}

function complete(run: RunningCall, value: unknown): void {
  if (run.done) return;
  if (run.task.bulkResults !== true) {
    finish(run, ThreadEvent.Done, completedFrameOf(run, value, data.maxFrameBytes));
    return;
  }
  const entry = completedEntryOf(run, value, data.maxFrameBytes);
  finish(run, entry.ok ? ThreadEvent.Completed : ThreadEvent.Done, entry.json);
}

function fail(run: RunningCall, err: unknown): void {
  if (run.done) return;
  finish(run, ThreadEvent.Done, failedFrameOf(run, err));
}

function failLoad(run: RunningCall, message: string): void {
  if (run.done) return;
  finish(
    run,
    ThreadEvent.Done,
    failedFrame(run.entry, {
      kind: 'load',
      retryable: false,
      code: ExecutorErrorCode.FUNCTION_LOAD_FAILED,
      message,
    }),
  );
}

function invoke(run: RunningCall, fn: Fn): void {
  if (run.done) return;
  invokeFunction(
    run,
    host,
    fn,
    (v) => complete(run, v),
    (e) => fail(run, e),
  );
}

/** Decodes the UTF-8 of `argsAt` arguments; refuses bytes that are not UTF-8. */
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * An attempt's arguments: as they came, or its `argsJson` text (ArgsJson) or `argsAt` bytes (ArgsBytes)
 * parsed here, or why they are not the JSON of an array.
 */
function argsOf(args: readonly unknown[] | string | Uint8Array): readonly unknown[] | string {
  if (Array.isArray(args)) return args;
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof args === 'string' ? args : utf8.decode(args as Uint8Array));
  } catch (err) {
    return `the arguments' text is not JSON: ${(err as Error).message}`;
  }
  return Array.isArray(parsed) ? parsed : "the arguments' text is not the JSON of an array";
}

/** Start the attempts of a slice in order, each one it can claim (the others were taken back). */
function runSlice(slice: ExecSlice): void {
  const { task, moduleKey, callIds, attempts } = slice;
  const entry = modules.get(moduleKey);
  const fn = entry === undefined ? undefined : modules.fnFor(entry, task.taskId);
  for (let i = 0; i < callIds.length; i++) {
    const seq = nextSeq;
    nextSeq = (nextSeq + 1) & SEQ_MASK;
    const now = performance.now();
    if (!claimExec(signals, seq, monoAt(now))) continue; // taken back: the main thread runs it elsewhere
    const callId = callIds[i]!;
    const attempt = attempts[i]!;
    const page = slice.pages?.[i];
    const args = page === undefined ? argsOf(slice.args[i]!) : pageRowsOf(slice.args[i]!, page);
    const run = newSliceCall(
      task,
      { callId, attempt, args: typeof args === 'string' ? [] : args },
      attemptKey(callId, attempt),
      now,
    );
    live++;
    fresh.push(run);
    if (typeof args === 'string') {
      finish(
        run,
        ThreadEvent.Done,
        failedFrame(run.entry, {
          kind: 'user',
          retryable: false,
          code: ExecutorErrorCode.FRAME_INVALID,
          message: args,
        }),
      );
    } else if (fn === undefined) {
      failLoad(run, `internal: module ${moduleKey} was not announced to this thread`);
    } else if (page !== undefined) {
      const rows = args as readonly (readonly unknown[])[];
      if (typeof fn === 'function') runPage(run, fn, rows, page);
      else
        fn.then(
          (f) => runPage(run, f, rows, page),
          (err: Error) => failLoad(run, err.message),
        );
    } else if (typeof fn === 'function') {
      invoke(run, fn);
    } else {
      fn.then(
        (f) => invoke(run, f),
        (err: Error) => failLoad(run, err.message),
      );
    }
  }
}

/**
 * A page's rows (docs/executor.md § Pages): its arguments parsed, a list of argument arrays as many as
 * its block runs count; or why not.
 */
function pageRowsOf(
  args: readonly unknown[] | string | Uint8Array,
  page: CallPageInfo,
): readonly (readonly unknown[])[] | string {
  const rows = argsOf(args);
  if (typeof rows === 'string') return rows;
  let count = 0;
  for (const run of page.blocks) count += run[0];
  if (rows.length !== count) return `a page of ${rows.length} calls has blocks for ${count}`;
  for (const row of rows)
    if (!Array.isArray(row)) return "a page's arguments must be a list of argument lists";
  return rows as readonly (readonly unknown[])[];
}

/**
 * Runs the calls of a page, each with its own context (its call id and block), starting them one after
 * the other, and answers the list of their values; the first call that throws fails the page (the Worker
 * then runs its calls on their own, so this error is not the call's last word), as does a call that asked
 * for a subcall. Once half the page's budget has passed no further call is started: the page answers the
 * values of the calls it started, a shorter list, and the Worker runs the rest on their own
 * (docs/executor.md § Pages), so a slow function never spends a whole budget before its page is split.
 */
function runPage(run: RunningCall, fn: Fn, rows: readonly (readonly unknown[])[], page: CallPageInfo): void {
  if (run.done) return;
  const n = rows.length;
  const values = new Array<unknown>(n);
  const cutoff = run.task.budgetMs > 0 ? run.startedAt + run.task.budgetMs / 2 : Infinity;
  let started = 0;
  let left = 0;
  let startedAll = false;
  const answer = () => {
    if (run.subcallInPage) fail(run, new Error(SUBCALL_IN_PAGE));
    else complete(run, started === n ? values : values.slice(0, started));
  };
  const failed = (err: unknown) => fail(run, err);
  const prefix = `${run.task.taskId}/`;
  let j = 0;
  runs: for (const [count, block] of page.blocks) {
    for (let k = 0; k < count; k++, j++) {
      if (run.done) return;
      if (j > 0 && performance.now() > cutoff) break runs;
      const row = j;
      started += 1;
      left += 1;
      invokeWith(
        new PageRowContext(run, host, `${prefix}${page.first + row}`, block),
        fn,
        rows[row]!,
        (v) => {
          values[row] = v === undefined ? null : v;
          if (--left === 0 && startedAll) answer();
        },
        failed,
      );
    }
  }
  startedAll = true;
  if (left === 0 && !run.done) answer();
}

function control(m: ThreadControl): void {
  switch (m.t) {
    case 'cancel': {
      const run = running.get(attemptKey(m.callId, m.attempt));
      if (run) cancelRunningCall(run, m.reason);
      return;
    }
    case 'resume': {
      const run = running.get(attemptKey(m.callId, m.attempt));
      const waiter = run?.waits?.get(m.requestId);
      if (!run || !waiter) return;
      run.waits!.delete(m.requestId);
      if (m.ok) {
        waiter.resolve(m.value ?? null);
      } else {
        const e = m.error ?? { message: 'request failed' };
        waiter.reject(
          new CallWaitError(e.message, {
            kind: e.kind ?? 'io',
            retryable: e.retryable ?? false,
            code: e.code,
          }),
        );
      }
      return;
    }
    case 'dropIoCache':
      copies.drop(m.ioCache);
      return;
    default: {
      const _exhaustive: never = m;
      throw new Error(`unknown thread control ${JSON.stringify(_exhaustive)}`);
    }
  }
}

port.on('message', (batch: MainToThreadBatch) => {
  beat(signals, monoMs());
  settleFresh();
  for (const m of batch.modules) modules.add(m);
  for (const slice of batch.slices) runSlice(slice);
  if (batch.controls.length > 0) {
    settleFresh(); // a control may name a call of this very batch
    for (const c of batch.controls) control(c);
  }
  if (!beatingFast && live > 0) scheduleBeat();
});

// A function's stray error (a throwing timer callback, an unobserved rejection) must not take down the
// thread and every other call on it: log it and carry on.
// The value can be anything a function threw: read it defensively (call-outcome.ts, readThrown).
const describeStray = (v: unknown): string => {
  const t = readThrown(v);
  return t.stack ?? t.message;
};
process.on('uncaughtException', (err) => {
  emitLog('error', 'uncaught exception in function code (ignored)', { error: describeStray(err) });
});
process.on('unhandledRejection', (reason) => {
  emitLog('warn', 'unhandled rejection in function code (ignored)', { error: describeStray(reason) });
});

/** A fast beat publishes memory every this many beats (process.memoryUsage costs ~10-20 µs); a slow one always. */
const MEMORY_EVERY_BEATS = 5;
let beats = 0;
// The beat (core/pool-scheduler.ts): every BUSY_BEAT_INTERVAL_MS while calls run or wait here, so the
// main thread can tell a call that keeps the event loop from running; every IDLE_BEAT_INTERVAL_MS when
// none do (the main thread does not read an idle thread's beat).
let beatTimer: NodeJS.Timeout | undefined;
let beatingFast = false;
function scheduleBeat(): void {
  if (beatTimer !== undefined) clearTimeout(beatTimer);
  beatingFast = live > 0;
  beatTimer = setTimeout(onBeat, beatingFast ? BUSY_BEAT_INTERVAL_MS : IDLE_BEAT_INTERVAL_MS).unref();
}
function onBeat(): void {
  beat(signals, monoMs());
  if (!beatingFast || ++beats % MEMORY_EVERY_BEATS === 0) publishMemoryNow();
  scheduleBeat();
}
// Taken now, before any function runs: `process` stays mutable (docs/security.md, "Task isolation"), and
// a function replacing process.memoryUsage must not hide its thread from the memory bound.
const memoryUsage = process.memoryUsage.bind(process);
const publishMemoryNow = () => {
  const m = memoryUsage();
  publishMemory(signals, (m.heapUsed + m.external) / 2 ** 20);
};

if (isolated) await isolateThread();
beat(signals, monoMs());
publishMemoryNow();
scheduleBeat();
port.postMessage(newBatch(true));
