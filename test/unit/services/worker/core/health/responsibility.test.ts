// Which terminal outcomes count against the worker (core/health/responsibility.ts): one row per
// FailureCode, and the CALL_FAILED message format pinned against the real dispatcher core.
import { describe, expect, it } from 'vitest';
import { FailureCode } from '../../../../../../src/services/worker/core/errors.js';
import {
  FAILURE_RESPONSIBILITY_RULES,
  failedCallOf,
  isWorkerResponsible,
  type TerminalOutcome,
} from '../../../../../../src/services/worker/core/health/responsibility.js';
import type { CallFailureKind } from '../../../../../../src/services/call-host/core/dispatcher/types.js';
import { FAR, callList, converges, coreWith } from '../../../call-host/core/dispatcher/harness.js';

const failed = (failureCode: FailureCode, retryable: boolean, failureMessage = 'x'): TerminalOutcome => ({
  succeeded: false,
  failureCode,
  retryable,
  failureMessage,
});

/** The failure message the dispatcher core writes when call 0 fails terminally with `kind`. */
function dispatcherMessage(kind: CallFailureKind, retryable: boolean, maxAttempts: number): string {
  const core = coreWith({ callRetry: { maxAttempts, initialBackoffMs: 1, maxBackoffMs: 1 } });
  core.startCallPhase('t', callList(1), { deadlineMs: FAR, fastFail: true }, 0);
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const now = attempt * 100;
    const done = converges(core.callFailed('t/0', attempt, { kind, retryable, message: 'boom' }, now))[0];
    if (done !== undefined) return done.message ?? '';
    core.tick(now + 50); // the retry backoff has passed: the next attempt goes out
  }
  throw new Error('the task did not converge');
}

describe('FAILURE_RESPONSIBILITY_RULES', () => {
  it('has a rule for every FailureCode', () => {
    expect(Object.keys(FAILURE_RESPONSIBILITY_RULES).sort()).toEqual(Object.keys(FailureCode).sort());
  });

  it.each<[FailureCode, boolean, boolean]>([
    // code, retryable flag of the result, counts against the worker
    ['ACTIVATION_FAILED', true, true],
    ['IO_SCOPE_FAILED', true, true],
    ['SLOT_LOST', true, true],
    ['BUILDER_NOT_FOUND', false, false],
    ['PLUGIN_NOT_FOUND', false, false],
    ['BUILDER_FAILED', true, true], // storage error after retries, unclassified builder error
    ['BUILDER_FAILED', false, false], // the builder refused the task config
    ['PLUGIN_FAILED', true, true], // storage connection error while writing
    ['PLUGIN_FAILED', false, false], // BAD_OUTPUT and other non-retryable writer errors
    ['OUTPUT_BYTES_EXCEEDED', false, false],
    ['CALL_BUDGET_EXCEEDED', false, false],
    ['CANCELLED', true, false],
    ['TIMED_OUT', true, false],
    ['WATCH_DISCONNECTED', false, false],
  ])('%s (retryable=%s) → worker responsible: %s', (code, retryable, expected) => {
    expect(isWorkerResponsible(failed(code, retryable))).toBe(expected);
  });

  it('never counts a success', () => {
    expect(
      isWorkerResponsible({ succeeded: true, failureCode: '', retryable: false, failureMessage: '' }),
    ).toBe(false);
  });
});

describe('CALL_FAILED is attributed by the failing call', () => {
  it.each<[CallFailureKind, boolean, number, boolean]>([
    // kind, the call error's retryable, maxAttempts, counts against the worker
    ['user', false, 3, false], // the function threw (a typo, a bug)
    ['user', true, 3, false], // a RetryableError that kept failing
    ['deadline', true, 3, false], // the function ran past its budget every time
    ['executor_crash', true, 3, true], // the executor died under every attempt
    ['io', true, 3, true], // a retryable read (storage) failed after the retries
    ['io', false, 3, false], // a bad read (unknown table, bad option): first attempt, the function's
  ])('%s (retryable=%s, maxAttempts %s) → %s', (kind, retryable, maxAttempts, expected) => {
    const message = dispatcherMessage(kind, retryable, maxAttempts);
    expect(failedCallOf(message)?.kind).toBe(kind);
    expect(isWorkerResponsible(failed(FailureCode.CALL_FAILED, false, message))).toBe(expected);
  });

  it.each([
    'the call runner failed: TypeError: x',
    'a call failed',
    'call t/0 (f) failed after 1 attempt(s): martian: x',
  ])('an unrecognised message (%s) is not the worker’s', (message) => {
    expect(isWorkerResponsible(failed(FailureCode.CALL_FAILED, false, message))).toBe(false);
  });
});
