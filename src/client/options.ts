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
  reuseSlots: 0,
} as const;

/**
 * Slot reuse of `blockx submit` and `blockx backfill` (docs/batched-protocol.md § Slot reuse): one task in
 * 17 reserves through the Coordinator, so it still places every slot's work at least that often.
 */
export const CLI_REUSE_SLOTS = 16;

export interface ResolvedClientOptions {
  readonly policy: RetryPolicy;
  readonly rpcTimeoutMs: number;
  readonly maxWatchAttempts: number;
  readonly reuseSlots: number;
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
    reuseSlots: count('reuseSlots', opts.reuseSlots ?? d.reuseSlots),
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

function count(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new BlockxClientError(
      ClientErrorCode.INVALID_ARGUMENT,
      `${name} must be a non-negative integer, got ${value}`,
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
