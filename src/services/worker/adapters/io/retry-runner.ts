// Runs IO operations inside one retry scope of a task (builder, calls or result): asks the pure
// retry policy after each failed attempt, sleeps the backoff (cancellable), and shapes the error that
// finally leaves the scope:
//   - the scope closed while the operation was pending (admission, query, backoff) → CANCELLED, at once;
//   - not retryable and already classified (StorageError, TaskIoError) → rethrown unchanged;
//   - not retryable and unclassified → TaskIoError with its code (or IO_FAILED), retryable false;
//   - retries exhausted → TaskIoError with the same code, retryable true, "gave up after N attempts".

import type { IoRetryConfig } from '../../../../kernel/config-types.js';
import {
  TaskIoError,
  TaskIoErrorCode,
  classifyIoError,
  decideRetry,
  exhaustedMessage,
} from '../../core/io/index.js';
import type { IoPhase } from '../orchestration/ports.js';

export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>;

/** Everything a retry scope needs; one per (task, phase). */
export interface RetryScope {
  readonly taskId: string;
  readonly phase: IoPhase;
  readonly config: IoRetryConfig;
  readonly signal: AbortSignal;
  readonly sleep: Sleep;
  readonly random: () => number;
  /** Called once per retry (before its backoff), for the scope's and the factory's counters. */
  readonly onRetry: () => void;
}

/** A real timer sleep that rejects when `signal` aborts. */
export const abortableSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });

/** `promise`, or a rejection with `onAbort()` as soon as `signal` aborts (whichever comes first). */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal, onAbort: () => Error): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(onAbort());
  }
  return new Promise<T>((resolve, reject) => {
    const abort = (): void => reject(onAbort());
    signal.addEventListener('abort', abort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', abort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', abort);
        reject(err);
      },
    );
  });
}

export function cancelledError(
  scope: RetryScope,
  operation: string,
  table?: string,
  cause?: unknown,
): TaskIoError {
  return new TaskIoError(
    TaskIoErrorCode.CANCELLED,
    `task ${scope.taskId}: io.${operation}${table === undefined ? '' : ` on "${table}"`} cancelled: the task's IO scope was closed`,
    { retryable: false, taskId: scope.taskId, phase: scope.phase, operation, table, cause },
  );
}

/**
 * The retry state of one operation. `failed(err)` either resolves after the backoff (try again) or
 * throws the error that leaves the scope. `progressed()` resets the attempt count (a scan that got a
 * page since its last failure starts a fresh budget).
 */
export class RetryAttempts {
  private attempt = 1;

  constructor(
    private readonly scope: RetryScope,
    private readonly operation: string,
    private readonly table?: string,
  ) {}

  progressed(): void {
    this.attempt = 1;
  }

  cancelled(cause?: unknown): TaskIoError {
    return cancelledError(this.scope, this.operation, this.table, cause);
  }

  async failed(err: unknown): Promise<void> {
    const { scope } = this;
    if (scope.signal.aborted) throw this.cancelled(err);
    const c = classifyIoError(err);
    const decision = decideRetry({
      attempt: this.attempt,
      retryable: c.retryable,
      code: c.code,
      config: scope.config,
      random: scope.random,
    });
    const fields = { taskId: scope.taskId, phase: scope.phase, operation: this.operation, table: this.table };
    if (!decision.retry) {
      if (decision.reason === 'exhausted')
        throw new TaskIoError(c.code, exhaustedMessage(c.message, this.attempt, scope.phase), {
          ...fields,
          retryable: true,
          attempts: this.attempt,
          cause: err,
        });
      if (c.classified) throw err;
      throw new TaskIoError(c.code, c.message, { ...fields, retryable: false, cause: err });
    }
    scope.onRetry();
    this.attempt++;
    try {
      await raceAbort(scope.sleep(decision.delayMs, scope.signal), scope.signal, () => this.cancelled(err));
    } catch {
      throw this.cancelled(err);
    }
  }
}

/** Runs `attempt` until it succeeds or the retry scope gives up. */
export async function withRetries<T>(
  scope: RetryScope,
  operation: string,
  table: string | undefined,
  attempt: () => Promise<T>,
  /** Errors rethrown unchanged without a retry (a writer's own error from inside its transaction). */
  passThrough: (err: unknown) => boolean = () => false,
): Promise<T> {
  const attempts = new RetryAttempts(scope, operation, table);
  for (;;) {
    if (scope.signal.aborted) throw attempts.cancelled();
    try {
      return await attempt();
    } catch (err) {
      if (scope.signal.aborted) throw attempts.cancelled(err);
      if (passThrough(err)) throw err;
      await attempts.failed(err);
    }
  }
}
