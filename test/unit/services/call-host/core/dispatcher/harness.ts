// Test helpers for the dispatcher core: a core with small, explicit settings, and a fake executor
// that records which attempts the core believes are at the executor.

import { DispatcherCore } from '../../../../../../src/services/call-host/core/dispatcher/dispatcher-core.js';
import {
  resolveDispatcherConfig,
  type CallRetryPolicy,
  type DispatcherConfig,
} from '../../../../../../src/services/call-host/core/dispatcher/config.js';
import type {
  CancelCall,
  ConvergeTaskCalls,
  DispatcherCommand,
  ExecuteAttempt,
  ResumeCall,
} from '../../../../../../src/services/call-host/core/dispatcher/commands.js';
import type { CallSpec } from '../../../../../../src/services/call-host/core/dispatcher/types.js';

export type ConfigOverrides = Partial<Omit<DispatcherConfig, 'callRetry'>> & {
  callRetry?: Partial<CallRetryPolicy>;
};

/** Overrides that retry every failure kind, a call that spent its budget too (by default it is not). */
export const RETRY_DEADLINES = {
  callRetry: { retryOn: ['executor_crash', 'deadline', 'io', 'user'] },
} as const satisfies ConfigOverrides;

/** A ready core (executor up) with the given config overrides. */
export function coreWith(overrides: ConfigOverrides = {}, executorReady = true): DispatcherCore {
  return new DispatcherCore(resolveDispatcherConfig(overrides), { executorReady });
}

/** `n` calls of `fn`, call i has args [i]. */
export function callList(n: number, fn = 'f'): CallSpec[] {
  return Array.from({ length: n }, (_, i) => ({ function: fn, args: [i] }));
}

export const FAR = 1_000_000_000; // a task deadline that never matters

/** One attempt of an ExecuteCalls command, with its command's task and budget. */
export type SentAttempt = ExecuteAttempt & { readonly taskId: string; readonly budgetMs: number };

/** Every attempt the commands send, in order (ExecuteCalls commands flattened). */
export const executes = (cmds: readonly DispatcherCommand[]): SentAttempt[] =>
  cmds.flatMap((c) =>
    c.type === 'ExecuteCalls'
      ? c.attempts.map((a) => ({ ...a, taskId: c.taskId, budgetMs: c.budgetMs }))
      : [],
  );
export const cancels = (cmds: readonly DispatcherCommand[]): CancelCall[] =>
  cmds.filter((c): c is CancelCall => c.type === 'CancelCall');
export const resumes = (cmds: readonly DispatcherCommand[]): ResumeCall[] =>
  cmds.filter((c): c is ResumeCall => c.type === 'ResumeCall');
export const converges = (cmds: readonly DispatcherCommand[]): ConvergeTaskCalls[] =>
  cmds.filter((c): c is ConvergeTaskCalls => c.type === 'ConvergeTaskCalls');

/**
 * Compact view of commands for table assertions: `X t/0#1` per attempt sent (an ExecuteCalls command is
 * one line per attempt), `C t/0#1 deadline`, `R t/0#1 ok`, `DONE ok`.
 */
export function brief(cmds: readonly DispatcherCommand[]): string[] {
  return cmds.flatMap((c) => {
    switch (c.type) {
      case 'ExecuteCalls':
        return c.attempts.map((a) => `X ${a.callId}#${a.attempt}`);
      case 'CancelCall':
        return `C ${c.callId}#${c.attempt} ${c.reason}`;
      case 'ResumeCall':
        return `R ${c.callId}#${c.attempt} ${c.ok ? 'ok' : 'err'}`;
      case 'ConvergeTaskCalls':
        return c.success ? `DONE ${c.taskId} ok` : `DONE ${c.taskId} ${c.failureCode}`;
      default: {
        const _exhaustive: never = c;
        return _exhaustive;
      }
    }
  });
}

/**
 * A fake executor: applies commands to a model of what runs at the executor and answers through the
 * core. `live` maps callId → attempt for every attempt the core sent and has not written off.
 */
export class FakeExecutor {
  readonly live = new Map<string, number>();
  readonly log: DispatcherCommand[] = [];
  readonly converged = new Map<string, ConvergeTaskCalls>();

  constructor(readonly core: DispatcherCore) {}

  /** Records commands and returns them. */
  take(cmds: readonly DispatcherCommand[]): readonly DispatcherCommand[] {
    for (const c of cmds) {
      this.log.push(c);
      if (c.type === 'ExecuteCalls') for (const a of c.attempts) this.live.set(a.callId, a.attempt);
      else if (c.type === 'CancelCall') this.live.delete(c.callId);
      else if (c.type === 'ConvergeTaskCalls') this.converged.set(c.taskId, c);
    }
    return cmds;
  }

  /** Starts and completes every live attempt (value = `v:${callId}`), repeatedly, until none is left. */
  drain(now: number, bytes = 1): void {
    for (let guard = 0; this.live.size > 0 && guard < 1_000_000; guard++) {
      const [callId, attempt] = this.live.entries().next().value as [string, number];
      this.live.delete(callId);
      this.take(this.core.callStarted(callId, attempt, now));
      this.take(this.core.callCompleted(callId, attempt, `v:${callId}`, bytes, now));
    }
  }

  complete(
    callId: string,
    now: number,
    value: unknown = `v:${callId}`,
    bytes = 1,
  ): readonly DispatcherCommand[] {
    const attempt = this.attemptOf(callId);
    this.live.delete(callId);
    return this.take(this.core.callCompleted(callId, attempt, value, bytes, now));
  }

  start(callId: string, now: number): readonly DispatcherCommand[] {
    return this.take(this.core.callStarted(callId, this.attemptOf(callId), now));
  }

  attemptOf(callId: string): number {
    const attempt = this.live.get(callId);
    if (attempt === undefined) throw new Error(`FakeExecutor: ${callId} is not live`);
    return attempt;
  }
}
