import { describe, expect, it } from 'vitest';
import { classifyError, completedFrame, failedFrame } from '../../../src/executor/call-outcome.js';
import { CallWaitError, RetryableError } from '../../../src/executor/sdk.js';

const id = { callId: 'c1', attempt: 2 };

describe('classifyError', () => {
  it.each([
    ['a plain error', new Error('boom'), undefined, { kind: 'user', retryable: false, message: 'boom' }],
    [
      'a RetryableError',
      new RetryableError('later'),
      undefined,
      { kind: 'user', retryable: true, message: 'later' },
    ],
    [
      'any error flagged retryable, with its code',
      Object.assign(new Error('x'), { retryable: true, code: 'E1' }),
      undefined,
      { kind: 'user', retryable: true, code: 'E1' },
    ],
    ['a thrown string', 'just text', undefined, { kind: 'user', retryable: false, message: 'just text' }],
    [
      'an IO failure that escaped',
      new CallWaitError('db down', { kind: 'io', retryable: true, code: 'IO' }),
      undefined,
      { kind: 'io', retryable: true, code: 'IO' },
    ],
    [
      'a failed subcall that escaped',
      new CallWaitError('child failed', { kind: 'user', retryable: false }),
      undefined,
      { kind: 'user', retryable: false },
    ],
    [
      'anything after a cancellation',
      new Error('aborted'),
      'deadline',
      { kind: 'deadline', retryable: true, message: 'cancelled (deadline): aborted' },
    ],
  ])('%s', (_name, err, cancelReason, expected) => {
    expect(classifyError(err, cancelReason)).toMatchObject(expected);
  });
});

describe('outcome frames', () => {
  it('serialises a completed value', () => {
    expect(JSON.parse(completedFrame(id, { a: [1, 'x'] }, 1.5, 1 << 20))).toEqual({
      type: 'CallCompleted',
      callId: 'c1',
      attempt: 2,
      value: { a: [1, 'x'] },
      durationMs: 1.5,
    });
  });

  it('turns a value JSON cannot carry into a user failure', () => {
    const f = JSON.parse(completedFrame(id, { n: 10n }, 0, 1 << 20));
    expect(f).toMatchObject({ type: 'CallFailed', kind: 'user', retryable: false });
    expect(f.message).toMatch(/^the return value is not JSON-serialisable/);
  });

  it('turns a value over the frame limit into a user failure', () => {
    const f = JSON.parse(completedFrame(id, 'x'.repeat(2000), 0, 1000));
    expect(f).toMatchObject({ type: 'CallFailed', kind: 'user', retryable: false });
    expect(f.message).toMatch(/too large: \d+ bytes serialised, the frame limit is 1000/);
  });

  it('truncates huge messages and stacks', () => {
    const f = JSON.parse(failedFrame(id, { kind: 'user', retryable: false, message: 'm'.repeat(40_000) }));
    expect(f.message.length).toBeLessThan(17_000);
    expect(f.message).toMatch(/more characters\)$/);
  });
});
