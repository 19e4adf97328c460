// LocalCallRunner: an in-process CallPhaseRunner FOR TESTS AND DEVELOPMENT ONLY.
//
// It runs user functions inside the Worker process, which the real design forbids: functions belong in
// the separate Executor process (crash and CPU isolation, code epochs per thread, CancelCall that can
// kill a hot loop, the per-call CPU budget). It exists so that a Worker runs end to end over gRPC
// (hello_world → ReturnValueResultHandler) before the dispatcher + executor link path is wired, and so
// that adapter tests have a real runner. `blockx worker` uses it only when no executor runner is given,
// and says so in its log.
//
// What it does do, the same way the real path does:
//   - loads `functions/<name>.{ts,mjs,js}` by the executor's resolver (function-loader.ts), cached per
//     code epoch;
//   - runs every call of the task in parallel, at most `maxInflightCalls` at once;
//   - fastFail: the first call that fails for good stops the rest (their signal aborts) → CALL_FAILED;
//   - a thrown error with `retryable: true` (RetryableError; read as the executor reads it) is retried up to `callRetry.maxAttempts`
//     with exponential backoff; a call past `callDeadlineMs` is aborted and counts as retryable;
//   - return values must be JSON (undefined becomes null) and are passed through JSON, as the wire
//     would; their total size is capped by `maxCollectedOutputBytes` → OUTPUT_BYTES_EXCEEDED;
//   - the task's AbortSignal (timeout, shutdown) aborts every call;
//   - `ctx.call(name, ...args)` runs the subfunction in-process; `ctx.io.*` rejects (no IO scope here).
// What it cannot do: interrupt a function that ignores `ctx.signal` (a hot loop blocks the Worker).

import path from 'node:path';
import { readThrown } from '../../../executor/call-outcome.js';
import type { CallSpec } from '../../../kernel/plugin-types.js';
import { FailureCode } from '../core/index.js';
import { CallDeadlineError, NoStorageError } from './errors.js';
import { FunctionLoader, type UserFunction } from './function-loader.js';
import { silentWorkerLogger, type WorkerLogger } from './worker-logger.js';
import { describeError } from './phase-results.js';
import type { CallPhaseOutcome, CallPhaseRunner, CallPhaseTask } from './ports.js';

export interface LocalCallRunnerOptions {
  /** Absolute folder of the function files (`config.functions.dir`). */
  readonly functionsDir: string;
  /** Calls of one task in flight at once (worker `taskMaxInflightCalls`). Default 1024. */
  readonly maxInflightCalls?: number;
  /** Budget of one attempt in ms; 0 = none. Default 5000 (worker `callDeadlineMs`). */
  readonly callDeadlineMs?: number;
  /** Cap of the serialised outputs of one task. Default 64 MiB. */
  readonly maxCollectedOutputBytes?: number;
  readonly callRetry?: {
    readonly maxAttempts: number;
    readonly initialBackoffMs: number;
    readonly maxBackoffMs: number;
  };
  readonly logger?: WorkerLogger;
}

type CallResult =
  | { readonly ok: true; readonly value: unknown; readonly json: string }
  | { readonly ok: false; readonly retryable: boolean; readonly message: string };

class OutputLimitError extends Error {}

export class LocalCallRunner implements CallPhaseRunner {
  private readonly dir: string;
  private readonly maxInflight: number;
  private readonly callDeadlineMs: number;
  private readonly maxOutputBytes: number;
  private readonly retry: { maxAttempts: number; initialBackoffMs: number; maxBackoffMs: number };
  private readonly logger: WorkerLogger;
  private readonly functions: FunctionLoader;

  constructor(options: LocalCallRunnerOptions) {
    this.dir = path.resolve(options.functionsDir);
    this.maxInflight = Math.max(1, options.maxInflightCalls ?? 1024);
    this.callDeadlineMs = options.callDeadlineMs ?? 5_000;
    this.maxOutputBytes = options.maxCollectedOutputBytes ?? 64 * 1024 * 1024;
    this.retry = { maxAttempts: 3, initialBackoffMs: 50, maxBackoffMs: 1_000, ...options.callRetry };
    this.logger = options.logger ?? silentWorkerLogger;
    this.functions = new FunctionLoader(this.dir);
  }

  async run(task: CallPhaseTask, calls: readonly CallSpec[]): Promise<CallPhaseOutcome> {
    const phase = new AbortController();
    const onTaskAbort = (): void => phase.abort(task.signal.reason);
    if (task.signal.aborted) onTaskAbort();
    else task.signal.addEventListener('abort', onTaskAbort, { once: true });

    const outputs = new Array<unknown>(calls.length);
    let failed: CallPhaseOutcome | undefined;
    let bytes = 0;
    let next = 0;
    const lane = async (): Promise<void> => {
      while (failed === undefined && !phase.signal.aborted && next < calls.length) {
        const index = next++;
        const call = calls[index] as CallSpec;
        const result = await this.runCall(task, call, `${index}`, phase.signal);
        if (failed !== undefined || phase.signal.aborted) return;
        if (!result.ok) {
          failed = {
            success: false,
            failureCode: FailureCode.CALL_FAILED,
            retryable: false,
            outputs: [],
            message: `call ${index} (${call.function}): ${result.message}`,
          };
          phase.abort(new Error('fastFail'));
          return;
        }
        bytes += Buffer.byteLength(result.json);
        if (bytes > this.maxOutputBytes) {
          const message = `the outputs exceed maxCollectedOutputBytes (${this.maxOutputBytes})`;
          failed = {
            success: false,
            failureCode: FailureCode.OUTPUT_BYTES_EXCEEDED,
            retryable: false,
            outputs: [],
            message,
          };
          phase.abort(new OutputLimitError(message));
          return;
        }
        outputs[index] = result.value;
      }
    };
    try {
      await Promise.all(Array.from({ length: Math.min(this.maxInflight, calls.length) }, lane));
    } finally {
      task.signal.removeEventListener('abort', onTaskAbort);
    }
    if (failed !== undefined) return failed;
    if (task.signal.aborted) {
      return {
        success: false,
        failureCode: FailureCode.CANCELLED,
        retryable: true,
        outputs: [],
        message: `calls cancelled: ${describeError(task.signal.reason)}`,
      };
    }
    return { success: true, retryable: false, outputs };
  }

  /** One call with its retries. Never throws. */
  private async runCall(
    task: CallPhaseTask,
    call: CallSpec,
    callId: string,
    signal: AbortSignal,
  ): Promise<CallResult> {
    let fn: UserFunction;
    try {
      fn = await this.functions.load(task.codeEpoch, call.function);
    } catch (err) {
      return { ok: false, retryable: false, message: describeError(err) };
    }
    let backoff = this.retry.initialBackoffMs;
    for (let attempt = 1; ; attempt++) {
      const result = await this.attempt(task, fn, call, callId, attempt, signal);
      if (result.ok || !result.retryable || attempt >= this.retry.maxAttempts || signal.aborted)
        return result;
      this.logger.debug(
        { task_id: task.taskId, call_id: callId, attempt, err: result.message },
        'retrying call',
      );
      await delay(backoff, signal);
      backoff = Math.min(backoff * 2, this.retry.maxBackoffMs);
    }
  }

  private async attempt(
    task: CallPhaseTask,
    fn: UserFunction,
    call: CallSpec,
    callId: string,
    attempt: number,
    phaseSignal: AbortSignal,
  ): Promise<CallResult> {
    // The phase may have ended (fastFail, task abort) while the function was loading: do not start.
    if (phaseSignal.aborted)
      return { ok: false, retryable: false, message: 'not started: the call phase ended' };
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(phaseSignal.reason);
    phaseSignal.addEventListener('abort', onAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    try {
      const ctx = this.context(task, call, callId, attempt, controller.signal);
      const running = Promise.resolve().then(() => fn(ctx, ...call.args));
      const value =
        this.callDeadlineMs > 0
          ? await Promise.race([
              running,
              new Promise<never>((_, reject) => {
                timer = setTimeout(() => {
                  const err = new CallDeadlineError(call.function, this.callDeadlineMs);
                  controller.abort(err);
                  reject(err);
                }, this.callDeadlineMs);
              }),
            ])
          : await running;
      let json: string;
      try {
        json = JSON.stringify(value === undefined ? null : value);
      } catch (err) {
        return {
          ok: false,
          retryable: false,
          message: `the return value is not JSON-serialisable: ${describeError(err)}`,
        };
      }
      if (json === undefined)
        return { ok: false, retryable: false, message: `the return value (${typeof value}) is not JSON` };
      return { ok: true, value: JSON.parse(json) as unknown, json };
    } catch (err) {
      // The executor's reading of a thrown value (call-outcome.ts): guarded against hostile throws, and
      // retryable only when the error says so, the same rule on both paths.
      const thrown = readThrown(err);
      const retryable = err instanceof CallDeadlineError || thrown.retryable;
      return { ok: false, retryable, message: thrown.message };
    } finally {
      if (timer !== undefined) clearTimeout(timer);
      phaseSignal.removeEventListener('abort', onAbort);
    }
  }

  /** The `ctx` a function sees (src/executor/sdk.ts `CallContext`), minus IO. */
  private context(
    task: CallPhaseTask,
    call: CallSpec,
    callId: string,
    attempt: number,
    signal: AbortSignal,
  ): unknown {
    const fields = { task_id: task.taskId, call_id: callId, function: call.function };
    const noStorage = (op: string) => (): Promise<never> =>
      Promise.reject(new NoStorageError(task.taskId, op));
    let subcalls = 0;
    return {
      taskId: task.taskId,
      callId,
      attempt,
      block: call.block,
      signal,
      log: {
        debug: (m: string, f?: object) => this.logger.debug({ ...fields, ...f }, m),
        info: (m: string, f?: object) => this.logger.info({ ...fields, ...f }, m),
        warn: (m: string, f?: object) => this.logger.warn({ ...fields, ...f }, m),
        error: (m: string, f?: object) => this.logger.error({ ...fields, ...f }, m),
      },
      io: { get: noStorage('get'), getMany: noStorage('getMany'), scan: noStorage('scan') },
      call: async (name: string, ...args: unknown[]): Promise<unknown> => {
        const sub: CallSpec = {
          function: name,
          args,
          ...(call.block === undefined ? {} : { block: call.block }),
        };
        const result = await this.runCall(task, sub, `${callId}.${++subcalls}`, signal);
        if (!result.ok)
          throw Object.assign(new Error(`subcall ${name} failed: ${result.message}`), {
            retryable: result.retryable,
          });
        return result.value;
      },
    };
  }
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
