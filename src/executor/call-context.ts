// The `ctx` a function receives, implemented on an execution thread. Built per call, so it is a class
// with lazily created parts: most calls never touch `signal`, `io` or `log`, and a no-op call should
// not pay for an AbortController and three closures.

import { classifyError, completedEntry, completedFrame, failedFrame } from './call-outcome.js';
import type { BatchedCall, CallBlock, CallTask, ExecuteCallMessage, WaitRequest } from './protocol.js';
import { rowScan } from '../kernel/row-scan.js';
import type { CallContext, CallIo, CallLogger, CallScan, IoScanOptions, LogFields } from './sdk.js';

/** One running attempt on a thread (or in the Worker's in-process link). */
export interface RunningCall {
  /** The task-level fields, shared by the attempts of a slice (thread-messages.ts). */
  readonly task: CallTask;
  readonly entry: BatchedCall;
  /** The attempt as one ExecuteCall message (made on first read: a thread never needs it). */
  readonly call: ExecuteCallMessage;
  readonly key: string;
  readonly startedAt: number;
  done: boolean;
  /** In its thread's table of running calls (only a call still running when the next message came). */
  listed: boolean;
  cancelReason: string | undefined;
  controller: AbortController | undefined;
  nextRequestId: number;
  /** Reads answered from the thread's read copies (reported in the terminal frame). */
  ioHits: number;
  /**
   * Reads this call sent that other calls may be waiting on (read copies): abandoned when the call ends
   * first (a read it never awaited), so that those calls ask the Worker themselves instead of waiting for
   * an answer that will never be delivered.
   */
  copyLeads: ((reason: unknown) => void)[] | undefined;
  /** Open requests to the Worker; created on the first one (most calls never wait). */
  waits: Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }> | undefined;
  /** A page (docs/executor.md § Pages) one of whose calls asked for a subcall: it must fail, to be split. */
  subcallInPage: boolean;
}

class RunningCallRecord implements RunningCall {
  done = false;
  listed = false;
  cancelReason: string | undefined = undefined;
  controller: AbortController | undefined = undefined;
  nextRequestId = 0;
  ioHits = 0;
  copyLeads: ((reason: unknown) => void)[] | undefined = undefined;
  waits: Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }> | undefined = undefined;
  subcallInPage = false;

  constructor(
    readonly task: CallTask,
    readonly entry: BatchedCall,
    readonly key: string,
    readonly startedAt: number,
    private whole: ExecuteCallMessage | undefined,
  ) {}

  get call(): ExecuteCallMessage {
    const { callId, attempt, args } = this.entry;
    return (this.whole ??= { type: 'ExecuteCall', ...this.task, callId, attempt, args });
  }
}

/** What a context needs from its thread: a way to wait on the Worker, and to log. */
export interface CallHost {
  wait(run: RunningCall, request: WaitRequest): Promise<unknown>;
  log(run: RunningCall, level: LogLevel, message: string, fields: LogFields | undefined): void;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** The abort reason a cancelled call sees on `ctx.signal` and in rejected waits. */
export function cancellationError(reason: string): Error {
  return new DOMException(`call cancelled: ${reason}`, 'AbortError');
}

/** The record of an attempt of one ExecuteCall that starts now (`startedAt`: performance.now()). */
export function newRunningCall(call: ExecuteCallMessage, key: string, startedAt: number): RunningCall {
  return new RunningCallRecord(call, call, key, startedAt, call);
}

/** The record of an attempt of a slice (its task's fields shared) that starts now. */
export function newSliceCall(
  task: CallTask,
  entry: BatchedCall,
  key: string,
  startedAt: number,
): RunningCall {
  return new RunningCallRecord(task, entry, key, startedAt, undefined);
}

/** CancelCall of a running attempt: `ctx.signal` aborts and every open request rejects, once. */
export function cancelRunningCall(run: RunningCall, reason: string): void {
  if (run.cancelReason !== undefined) return;
  run.cancelReason = reason;
  const error = cancellationError(reason);
  run.controller?.abort(error);
  const waits = run.waits;
  run.waits = undefined;
  if (waits) for (const w of waits.values()) w.reject(error);
}

/**
 * Calls `fn` with the attempt's `ctx` and arguments and reports how it ended, exactly once: `completed`
 * with the value (awaited when it is a thenable) or `failed` with what was thrown. Reading `then` and
 * calling it can run the function's code (a Proxy, a getter): both are guarded.
 */
export function invokeFunction(
  run: RunningCall,
  host: CallHost,
  fn: (...args: unknown[]) => unknown,
  completed: (value: unknown) => void,
  failed: (err: unknown) => void,
): void {
  invokeWith(new CallContextImpl(run, host), fn, run.entry.args, completed, failed);
}

/** `invokeFunction` with a given context and arguments (a call of a page: docs/executor.md § Pages). */
export function invokeWith(
  ctx: CallContext,
  fn: (...args: unknown[]) => unknown,
  args: readonly unknown[],
  completed: (value: unknown) => void,
  failed: (err: unknown) => void,
): void {
  let result: unknown;
  try {
    // One argument (a builder's row) is the common call: no spread for it.
    result = args.length === 1 ? fn(ctx, args[0]) : fn(ctx, ...args);
  } catch (err) {
    failed(err);
    return;
  }
  let then: unknown;
  try {
    then = result !== null && result !== undefined ? (result as { then?: unknown }).then : undefined;
  } catch (err) {
    failed(err);
    return;
  }
  if (typeof then !== 'function') {
    completed(result);
    return;
  }
  try {
    (then as PromiseLike<unknown>['then']).call(result, completed, failed);
  } catch (err) {
    failed(err);
  }
}

/**
 * The terminal frame of `run` returning `value`: CallCompleted, or CallFailed when the value cannot travel
 * (call-outcome.ts). Never throws.
 */
export function completedFrameOf(run: RunningCall, value: unknown, maxFrameBytes: number): string {
  try {
    return completedFrame(run.entry, value, performance.now() - run.startedAt, maxFrameBytes, run.ioHits);
  } catch (err) {
    return failedFrameOf(run, err);
  }
}

/**
 * The CallsCompleted entry of `run` returning `value` (`ok`), or its CallFailed frame when the value
 * cannot travel (call-outcome.ts, completedEntry). Never throws.
 */
export function completedEntryOf(
  run: RunningCall,
  value: unknown,
  maxFrameBytes: number,
): { readonly ok: boolean; readonly json: string } {
  try {
    return completedEntry(run.entry, value, performance.now() - run.startedAt, maxFrameBytes, run.ioHits);
  } catch (err) {
    return { ok: false, json: failedFrameOf(run, err) };
  }
}

/** The CallFailed frame of `run` having thrown `err`, classified (call-outcome.ts). Never throws. */
export function failedFrameOf(run: RunningCall, err: unknown): string {
  let f: ReturnType<typeof classifyError>;
  try {
    f = classifyError(err, run.cancelReason);
  } catch {
    // classifyError reads thrown values defensively; this is the last line: a call must always end
    // with a frame, never hang to its budget.
    f = { kind: 'user', retryable: false, message: 'the function threw a value that cannot be described' };
  }
  return failedFrame(run.entry, { ...f, durationMs: performance.now() - run.startedAt, ioHits: run.ioHits });
}

export class CallContextImpl implements CallContext {
  private ioImpl: CallIo | undefined;
  private logImpl: CallLogger | undefined;

  constructor(
    protected readonly run: RunningCall,
    protected readonly host: CallHost,
  ) {}

  get taskId(): string {
    return this.run.task.taskId;
  }
  get callId(): string {
    return this.run.entry.callId;
  }
  get attempt(): number {
    return this.run.entry.attempt;
  }
  get block(): CallBlock | undefined {
    return this.run.task.block ?? undefined;
  }

  get signal(): AbortSignal {
    const run = this.run;
    if (!run.controller) {
      run.controller = new AbortController();
      if (run.cancelReason !== undefined) run.controller.abort(cancellationError(run.cancelReason));
    }
    return run.controller.signal;
  }

  get io(): CallIo {
    if (!this.ioImpl) {
      const { run, host } = this;
      this.ioImpl = {
        get: (table, key) => host.wait(run, { kind: 'io', op: 'get', table, key }) as Promise<never>,
        getMany: (table, keys) =>
          host.wait(run, { kind: 'io', op: 'getMany', table, keys }) as Promise<never>,
        scan: <Row>(table: string, options?: IoScanOptions) =>
          callScan<Row>(
            () => host.wait(run, { kind: 'io', op: 'scan', table, options: options ?? {} }) as Promise<Row[]>,
          ),
      };
    }
    return this.ioImpl;
  }

  get log(): CallLogger {
    if (!this.logImpl) {
      const { run, host } = this;
      this.logImpl = {
        debug: (m, f) => host.log(run, 'debug', m, f),
        info: (m, f) => host.log(run, 'info', m, f),
        warn: (m, f) => host.log(run, 'warn', m, f),
        error: (m, f) => host.log(run, 'error', m, f),
      };
    }
    return this.logImpl;
  }

  call<Result = unknown>(name: string, ...args: unknown[]): Promise<Result> {
    return this.host.wait(this.run, { kind: 'subcall', function: name, args }) as Promise<Result>;
  }
}

/** Why a call of a page may not ask for a subcall: the page fails and its calls run on their own. */
export const SUBCALL_IN_PAGE = 'calls that ask for subcalls run outside pages (the page is split)';

/**
 * The `ctx` of one call of a page (docs/executor.md § Pages): the page's attempt (signal, io, log), with
 * the call's own id and block. A subcall is refused and fails the page, whose calls then run on their own,
 * where subcalls work, whatever the function does with the refusal.
 */
export class PageRowContext extends CallContextImpl {
  constructor(
    run: RunningCall,
    host: CallHost,
    private readonly rowCallId: string,
    private readonly rowBlock: CallBlock | null,
  ) {
    super(run, host);
  }

  override get callId(): string {
    return this.rowCallId;
  }
  override get block(): CallBlock | undefined {
    return this.rowBlock ?? undefined;
  }

  override call<Result = unknown>(_name: string, ..._args: unknown[]): Promise<Result> {
    this.run.subcallInPage = true;
    return Promise.reject(new Error(SUBCALL_IN_PAGE));
  }
}

/**
 * A function's scan: one IO request, sent when the scan is first awaited or iterated (never twice),
 * whose rows are then iterated, collected or awaited (docs/functions.md § Reading storage).
 */
function callScan<Row>(fetch: () => Promise<Row[]>): CallScan<Row> {
  let rows: Promise<Row[]> | undefined;
  const once = (): Promise<Row[]> => (rows ??= fetch());
  const scan = rowScan<Row>(() => {
    let i = 0;
    return {
      next: async () => {
        const all = await once();
        return i < all.length ? { done: false, value: all[i++]! } : { done: true, value: undefined };
      },
    };
  });
  return Object.assign(scan, {
    toArray: async () => [...(await once())],
    then: <A = Row[], B = never>(
      onFulfilled?: ((value: Row[]) => A | PromiseLike<A>) | null,
      onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
    ): PromiseLike<A | B> => once().then(onFulfilled, onRejected),
  });
}
