// The one polling helper of the test tiers that run on real time (integration, process, e2e; see
// test/README.md). Unit tests run on virtual time and never poll.
//
//   await eventually(() => worker.runTasks.size === 0, { message: 'the stream forgotten' });
//   await eventually(() => expect(view()).toEqual({ a: 1 }), { timeoutMs: 5_000 });
//   const key = await eventually(async () => present(await kv.get(k).string(), 'the key'));

export interface EventuallyOptions {
  /** Give up this long after the first attempt started. Default 5 s. */
  readonly timeoutMs?: number;
  /** Pause between the end of one attempt and the start of the next. Default 10 ms. */
  readonly intervalMs?: number;
  /** What is being waited for; the timeout error starts with it. */
  readonly message?: string;
}

/** Thrown by eventually() when time runs out; `cause` is the last attempt's error. */
export class EventuallyTimeoutError extends Error {
  constructor(
    readonly what: string,
    readonly timeoutMs: number,
    readonly attempts: number,
    cause: unknown,
  ) {
    super(`${what}: still failing after ${timeoutMs} ms (${attempts} attempts): ${describe(cause)}`, {
      cause,
    });
    this.name = 'EventuallyTimeoutError';
  }
}

const DEFAULT_TIMEOUT_MS = 5_000;
const DEFAULT_INTERVAL_MS = 10;

/**
 * Calls `fn` until it passes and returns what it returned. An attempt passes when it neither throws
 * (or rejects) nor returns `false`, so `fn` may be a predicate or a block of `expect(...)`s. On timeout
 * it throws an EventuallyTimeoutError carrying the last failure. It never hangs: an attempt that does
 * not settle in the time left counts as a failure at the deadline.
 */
export async function eventually<T>(
  fn: () => T | Promise<T>,
  options: EventuallyOptions = {},
): Promise<Exclude<T, false>> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS;
  const what = options.message ?? 'eventually()';
  const deadline = performance.now() + timeoutMs;
  let last: unknown;
  for (let attempts = 1; ; attempts++) {
    try {
      const result = await settleBy(fn, deadline);
      if (result !== false) return result as Exclude<T, false>;
      last = new Error('returned false');
    } catch (err) {
      last = err;
    }
    const left = deadline - performance.now();
    if (left <= 0) throw new EventuallyTimeoutError(what, timeoutMs, attempts, last);
    await sleep(Math.min(intervalMs, left));
  }
}

/** `value`, or an error (so eventually() tries again) while it is undefined or null. */
export function present<T>(value: T | undefined | null, what = 'a value'): T {
  if (value === undefined || value === null) throw new Error(`no ${what} yet`);
  return value;
}

/** fn's outcome, or a rejection at `deadline` if it has not settled by then. */
function settleBy<T>(fn: () => T | Promise<T>, deadline: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const attempt = new Promise<T>((resolve) => resolve(fn()));
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error('the attempt did not settle before the deadline')),
      Math.max(0, deadline - performance.now()),
    );
  });
  return Promise.race([attempt, late]).finally(() => clearTimeout(timer));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
