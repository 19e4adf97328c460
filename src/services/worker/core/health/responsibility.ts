// Which terminal task outcomes the worker is responsible for (the numerator of the heartbeat's
// `errorRate`, docs/health.md). The Coordinator stops routing to a worker whose rate is
// above its red line, so only a failure that another worker would likely NOT have had may count:
// infrastructure of this process (activation, IO scope, storage connection, the Executor it
// supervises, a slot it let expire). A user function's error, a bad task config, a task timing out on
// the user's code and a writer refusing the outputs (BAD_OUTPUT) would fail on every worker alike;
// counting them made whole clusters unroutable (issue 14).
//
// One rule per FailureCode, next to FAILURE_RETRYABLE_RULES in spirit; the table is pinned by
// test/unit/services/worker/core/health/responsibility.test.ts.

import type { FailureCode } from '../errors.js';

/**
 * How one failure code is attributed:
 * `worker` — always the worker's fault; `not-worker` — never (user code, task config, the client);
 * `when-retryable` — the worker's fault when the failure was transient (`retryable`: a storage error
 *   after the IO scope's retries, an unclassified plugin error), not when it was deterministic;
 * `by-failed-call` — CALL_FAILED: decided by the kind of the root call's last failure (see below).
 */
export type ResponsibilityRule =
  | { readonly kind: 'worker' }
  | { readonly kind: 'not-worker' }
  | { readonly kind: 'when-retryable' }
  | { readonly kind: 'by-failed-call' };

const WORKER: ResponsibilityRule = Object.freeze({ kind: 'worker' });
const NOT_WORKER: ResponsibilityRule = Object.freeze({ kind: 'not-worker' });

export const FAILURE_RESPONSIBILITY_RULES: Readonly<Record<FailureCode, ResponsibilityRule>> = Object.freeze({
  // Code epoch resolution and IO scope creation are this worker's infrastructure.
  ACTIVATION_FAILED: WORKER,
  IO_SCOPE_FAILED: WORKER,
  // The slot lease ran out while the task was still preparing: this worker was too slow to activate.
  SLOT_LOST: WORKER,
  // An unknown builder / writer type is a bad task config.
  BUILDER_NOT_FOUND: NOT_WORKER,
  PLUGIN_NOT_FOUND: NOT_WORKER,
  // Retryable: storage trouble after retries, or a plugin bug (plugins are the deployment's code).
  // Not retryable: the plugin refused the task's config or outputs (e.g. a writer's BAD_OUTPUT).
  BUILDER_FAILED: Object.freeze({ kind: 'when-retryable' }),
  PLUGIN_FAILED: Object.freeze({ kind: 'when-retryable' }),
  CALL_FAILED: Object.freeze({ kind: 'by-failed-call' }),
  // The same outputs would exceed the limit anywhere.
  OUTPUT_BYTES_EXCEEDED: NOT_WORKER,
  // The task's own functions spent the call budget.
  CALL_BUDGET_EXCEEDED: NOT_WORKER,
  // The client or a shutdown ended the task; nothing failed.
  CANCELLED: NOT_WORKER,
  // The task's own timeout, spent by the user's code (a stalled worker shows up as SLOT_LOST or
  // executor losses long before a whole task deadline).
  TIMED_OUT: NOT_WORKER,
  WATCH_DISCONNECTED: NOT_WORKER,
});

/** What the error rate needs of a terminal task (a slice of `TaskResult.executeResult`). */
export interface TerminalOutcome {
  readonly succeeded: boolean;
  /** '' when the task succeeded. */
  readonly failureCode: FailureCode | '';
  readonly retryable: boolean;
  readonly failureMessage: string;
}

/** Kinds a call attempt can fail with (dispatcher and executor protocol; `load`: the module did not load). */
const CALL_FAILURE_KINDS = ['user', 'executor_crash', 'deadline', 'io', 'load'] as const;
export type FailedCallKind = (typeof CALL_FAILURE_KINDS)[number];

/**
 * The failing root call of a CALL_FAILED task, read from its failure message. The dispatcher core
 * writes it as `call <id> (<fn>) failed after <n> attempt(s): <kind>: <message>`
 * (core/dispatcher/call-events.ts `settleFailure`); the TaskResult carries no structured copy, and a
 * test drives the real dispatcher to pin this format. Undefined when the message has another shape.
 */
export function failedCallOf(message: string): { kind: FailedCallKind; attempts: number } | undefined {
  const m = /^call .* failed after (\d+) attempt\(s\): ([a-z_]+): /s.exec(message);
  if (m === null) return undefined;
  const kind = CALL_FAILURE_KINDS.find((k) => k === m[2]);
  return kind === undefined ? undefined : { kind, attempts: Number(m[1]) };
}

/**
 * CALL_FAILED is the worker's fault when the Executor kept dying under the call (`executor_crash` is
 * retried regardless, so a terminal one means every attempt lost its Executor), or when an IO read was
 * retried and still failed (a retryable IO error is storage trouble; a non-retryable one — unknown
 * table, bad scan option — fails at its first attempt and is the function's). A function that threw,
 * ran past its budget (`deadline`) or did not load is the user's.
 */
function callFailedByWorker(message: string): boolean {
  const call = failedCallOf(message);
  if (call === undefined) return false;
  return call.kind === 'executor_crash' || (call.kind === 'io' && call.attempts > 1);
}

/** True when a terminal task failed through the worker's fault (see FAILURE_RESPONSIBILITY_RULES). */
export function isWorkerResponsible(outcome: TerminalOutcome): boolean {
  if (outcome.succeeded || outcome.failureCode === '') return false;
  const rule = FAILURE_RESPONSIBILITY_RULES[outcome.failureCode] as ResponsibilityRule | undefined;
  // Only reachable from an untyped caller with an unknown code: not evidence against the worker.
  if (rule === undefined) return false;
  switch (rule.kind) {
    case 'worker':
      return true;
    case 'not-worker':
      return false;
    case 'when-retryable':
      return outcome.retryable;
    case 'by-failed-call':
      return callFailedByWorker(outcome.failureMessage);
    default: {
      const unreachable: never = rule;
      throw new Error(`unknown responsibility rule ${JSON.stringify(unreachable)}`);
    }
  }
}
