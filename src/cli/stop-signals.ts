// The two-step stop of a long-running job command (docs/backfill.md § Resuming): the first Ctrl-C (or
// SIGTERM) is the graceful stop — nothing new starts, the tasks in flight finish — and the second cancels
// those tasks too.
import { setMaxListeners } from 'node:events';
import type { CliIo } from './io.js';

export interface StopSignals {
  /** Aborted on the first signal: start nothing new. */
  readonly stop: AbortController;
  /** Aborted on the second: cancel what is in flight. */
  readonly cancel: AbortController;
  /** Stops listening for the signals. */
  release(): void;
}

export function listenForStop(io: CliIo, command: string): StopSignals {
  const stop = new AbortController();
  const cancel = new AbortController();
  // Every task in flight listens on both (--concurrency of them, 64 by default): not a leak, and Node's
  // MaxListenersExceededWarning past 10 would only confuse the user.
  setMaxListeners(0, stop.signal, cancel.signal);
  const onSignal = (): void => {
    if (!stop.signal.aborted) {
      stop.abort();
      io.stderr(`\nblockx ${command}: stopping — the tasks in flight finish (Ctrl-C again cancels them)\n`);
    } else cancel.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    stop,
    cancel,
    release: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

/** The wall clock a job driver runs on: a sleep that an abort ends early, randomness and time. */
export const WALL_CLOCK = Object.freeze({
  sleep: (ms: number, signal?: AbortSignal): Promise<void> =>
    new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      signal?.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
    }),
  random: Math.random,
  clock: Date.now,
});
