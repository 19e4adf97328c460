// Client option defaults and their validation (a bad value is INVALID_ARGUMENT at construction, not a
// surprise mid-run).
import { BlockxClientError, ClientErrorCode } from './errors.js';
import type { RetryPolicy } from './reserve.js';
import type { BlockxClientOptions } from './types.js';

export const CLIENT_DEFAULTS = {
  slotTtlMs: 5_000,
  rpcTimeoutMs: 10_000,
  maxReserveAttempts: 20,
  backoff: { initialMs: 50, maxMs: 2_000 },
  maxWatchAttempts: 5,
} as const;

export interface ResolvedClientOptions {
  readonly policy: RetryPolicy;
  readonly rpcTimeoutMs: number;
  readonly maxWatchAttempts: number;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly random: () => number;
  readonly clock: () => number;
}

export function resolveClientOptions(opts: BlockxClientOptions): ResolvedClientOptions {
  const d = CLIENT_DEFAULTS;
  return {
    policy: {
      maxAttempts: positive('maxReserveAttempts', opts.maxReserveAttempts ?? d.maxReserveAttempts),
      slotTtlMs: positive('slotTtlMs', opts.slotTtlMs ?? d.slotTtlMs),
      backoff: {
        initialMs: positive('backoff.initialMs', opts.backoff?.initialMs ?? d.backoff.initialMs),
        maxMs: positive('backoff.maxMs', opts.backoff?.maxMs ?? d.backoff.maxMs),
      },
    },
    rpcTimeoutMs: positive('rpcTimeoutMs', opts.rpcTimeoutMs ?? d.rpcTimeoutMs),
    maxWatchAttempts: positive('maxWatchAttempts', opts.maxWatchAttempts ?? d.maxWatchAttempts),
    sleep: opts.sleep ?? abortableSleep,
    random: opts.random ?? Math.random,
    clock: opts.clock ?? Date.now,
  };
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new BlockxClientError(
      ClientErrorCode.INVALID_ARGUMENT,
      `${name} must be a positive number, got ${value}`,
    );
  }
  return value;
}

/** setTimeout as a promise that resolves early (never rejects) when `signal` aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
