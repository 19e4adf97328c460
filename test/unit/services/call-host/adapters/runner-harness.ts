// A fake executor link and virtual time for ExecutorCallRunner tests (one timer, no wall-clock waits).
import {
  resolveDispatcherConfig,
  type CallRetryPolicy,
} from '../../../../../src/services/call-host/core/dispatcher/index.js';
import type { CallSpec } from '../../../../../src/kernel/plugin-types.js';
import {
  ExecutorCallRunner,
  type CallIoHandler,
  type ExecutorLinkCommands,
  type RunnerTimers,
} from '../../../../../src/services/call-host/adapters/executor-call-runner.js';
import type {
  ExecuteCallCommand,
  ExecutorLinkEvent,
  ResumeOutcome,
} from '../../../../../src/services/call-host/adapters/executor-link.js';
import type { CallPhaseOutcome, CallPhaseTask } from '../../../../../src/services/call-host/index.js';

export const T0 = 1_000_000;

export class FakeLink implements ExecutorLinkCommands {
  ready = true;
  readonly executed: ExecuteCallCommand[] = [];
  readonly cancelled: { callId: string; attempt: number; reason: string | undefined }[] = [];
  readonly resumed: { callId: string; attempt: number; outcome: ResumeOutcome }[] = [];
  readonly droppedIoCaches: string[] = [];
  /** The size of each executeCalls (bulk) the runner made. */
  readonly bulks: number[] = [];
  executeCall(command: ExecuteCallCommand): void {
    this.executed.push(command);
  }
  executeCalls(commands: readonly ExecuteCallCommand[]): void {
    this.bulks.push(commands.length);
    for (const c of commands) this.executeCall(c);
  }
  cancelCall(callId: string, attempt: number, reason?: string): void {
    this.cancelled.push({ callId, attempt, reason });
  }
  resumeCall(callId: string, attempt: number, outcome: ResumeOutcome): void {
    this.resumed.push({ callId, attempt, outcome });
  }
  dropIoCache(ioCache: string): void {
    this.droppedIoCaches.push(ioCache);
  }
}

/** One virtual clock and the runner's single timer. */
export class VirtualTime implements RunnerTimers {
  now = T0;
  private pending: { fn: () => void; at: number } | undefined;
  set(fn: () => void, delayMs: number): unknown {
    const handle = { fn, at: this.now + delayMs };
    this.pending = handle;
    return handle;
  }
  clear(handle: unknown): void {
    if (this.pending === handle) this.pending = undefined;
  }
  get armedAt(): number | undefined {
    return this.pending?.at;
  }
  /** Moves the clock to `to`, firing the timer (repeatedly, as the runner re-arms it) when due. */
  async advanceTo(to: number): Promise<void> {
    for (;;) {
      await flush();
      const p = this.pending;
      if (p === undefined || p.at > to) break;
      this.pending = undefined;
      this.now = Math.max(this.now, p.at);
      p.fn();
    }
    this.now = to;
    await flush();
  }
}

/** Lets the runner's microtasks (timer re-arming) and promise callbacks run. No wall-clock wait. */
export async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

export function setup(
  opts: {
    ready?: boolean;
    io?: CallIoHandler;
    readCopies?: boolean;
    callDeadlineMs?: number;
    maxAttempts?: number;
    /** The failure kinds retried (docs/retries.md § Call level). Default: the config's. */
    retryOn?: CallRetryPolicy['retryOn'];
    maxCollectedOutputBytes?: number;
  } = {},
) {
  const link = new FakeLink();
  link.ready = opts.ready ?? true;
  const time = new VirtualTime();
  /** The runner's warnings, as `msg` lines with their fields. */
  const warnings: { fields: Record<string, unknown>; msg: string }[] = [];
  const ignore = (): void => undefined;
  const runner = new ExecutorCallRunner({
    link,
    logger: {
      debug: ignore,
      info: ignore,
      error: ignore,
      warn: (fields, msg) => warnings.push({ fields, msg }),
    },
    timers: time,
    clock: () => time.now,
    dispatcher: resolveDispatcherConfig({
      callDeadlineMs: opts.callDeadlineMs ?? 5_000,
      ...(opts.maxCollectedOutputBytes !== undefined
        ? { maxCollectedOutputBytes: opts.maxCollectedOutputBytes }
        : {}),
      callRetry: {
        maxAttempts: opts.maxAttempts ?? 3,
        initialBackoffMs: 50,
        maxBackoffMs: 1_000,
        ...(opts.retryOn ? { retryOn: opts.retryOn } : {}),
      },
    }),
    ...(opts.io ? { io: opts.io } : {}),
    ...(opts.readCopies !== undefined ? { readCopies: opts.readCopies } : {}),
  });
  return { link, time, runner, warnings };
}

export function task(taskId = 't1', signal: AbortSignal = new AbortController().signal): CallPhaseTask {
  return { taskId, codeEpoch: 'epoch-a', deadlineMs: T0 + 60_000, signal };
}

export const calls = (n: number, fn = 'noop'): CallSpec[] =>
  Array.from({ length: n }, (_, i) => ({ function: fn, args: [i] }));

/** Tracks a run's promise so tests can check it is still pending. */
export function track(p: Promise<CallPhaseOutcome>): {
  outcome: CallPhaseOutcome | undefined;
  done: Promise<void>;
} {
  const t = { outcome: undefined as CallPhaseOutcome | undefined, done: Promise.resolve() };
  t.done = p.then((o) => {
    t.outcome = o;
  });
  return t;
}

export const completed = (cmd: ExecuteCallCommand, value: unknown): ExecutorLinkEvent => ({
  type: 'callCompleted',
  taskId: cmd.taskId,
  callId: cmd.callId,
  attempt: cmd.attempt,
  value,
  durationMs: 1,
});

export const failed = (
  cmd: ExecuteCallCommand,
  kind: 'user' | 'load' | 'executor_crash' | 'deadline' | 'io',
  retryable: boolean,
  message = 'boom',
  code?: string,
): ExecutorLinkEvent => ({
  type: 'callFailed',
  taskId: cmd.taskId,
  callId: cmd.callId,
  attempt: cmd.attempt,
  kind,
  retryable,
  message,
  ...(code ? { code } : {}),
});
