import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  baseBackoffMs,
  decideRetry,
  exhaustedMessage,
  jitteredBackoffMs,
  type IoRetryConfig,
} from '../../../../../../src/services/worker/core/io/index.js';

const config: IoRetryConfig = { maxAttempts: 5, initialBackoffMs: 20, maxBackoffMs: 100 };

describe('decideRetry', () => {
  const cases: {
    name: string;
    attempt: number;
    retryable: boolean;
    code?: string;
    random?: number;
    cfg?: IoRetryConfig;
    expected: ReturnType<typeof decideRetry>;
  }[] = [
    {
      name: 'first retry waits half the base at random 0',
      attempt: 1,
      retryable: true,
      expected: { retry: true, delayMs: 10 },
    },
    {
      name: 'backoff doubles',
      attempt: 2,
      retryable: true,
      random: 0.999999,
      expected: { retry: true, delayMs: 40 },
    },
    {
      name: 'third failure: 80 ms base, jitter 0.5 → 60',
      attempt: 3,
      retryable: true,
      random: 0.5,
      expected: { retry: true, delayMs: 60 },
    },
    {
      name: 'capped at maxBackoffMs',
      attempt: 4,
      retryable: true,
      random: 0.999999,
      expected: { retry: true, delayMs: 100 },
    },
    {
      name: 'attempts exhausted',
      attempt: 5,
      retryable: true,
      expected: { retry: false, reason: 'exhausted' },
    },
    {
      name: 'not retryable: no retry at all',
      attempt: 1,
      retryable: false,
      expected: { retry: false, reason: 'not_retryable' },
    },
    {
      name: 'CANCELLED never, even when marked retryable',
      attempt: 1,
      retryable: true,
      code: 'CANCELLED',
      expected: { retry: false, reason: 'cancelled' },
    },
    {
      name: 'maxAttempts 1 means no retry',
      attempt: 1,
      retryable: true,
      cfg: { ...config, maxAttempts: 1 },
      expected: { retry: false, reason: 'exhausted' },
    },
    {
      name: 'maxAttempts 0 is treated as 1',
      attempt: 1,
      retryable: true,
      cfg: { ...config, maxAttempts: 0 },
      expected: { retry: false, reason: 'exhausted' },
    },
  ];
  it.each(cases)('$name', ({ attempt, retryable, code, random, cfg, expected }) => {
    expect(
      decideRetry({ attempt, retryable, code, config: cfg ?? config, random: () => random ?? 0 }),
    ).toEqual(expected);
  });

  it('exhaustedMessage says how many attempts were made and where', () => {
    expect(exhaustedMessage('busy', 3, 'builder')).toBe(
      'busy (gave up after 3 attempts in the builder retry scope)',
    );
    expect(exhaustedMessage('busy', 1, 'calls')).toContain('after 1 attempt in');
  });

  it('base backoff grows 20, 40, 80 then stays at the cap', () => {
    expect([1, 2, 3, 4, 5, 60].map((n) => baseBackoffMs(config, n))).toEqual([20, 40, 80, 100, 100, 100]);
  });
});

describe('retry policy properties', () => {
  const configArb = fc.record({
    maxAttempts: fc.integer({ min: 0, max: 10 }),
    initialBackoffMs: fc.integer({ min: 0, max: 1000 }),
    maxBackoffMs: fc.integer({ min: 0, max: 5000 }),
  });

  it('a delay is within [base/2, base] and never above maxBackoffMs', () => {
    fc.assert(
      fc.property(
        configArb,
        fc.integer({ min: 1, max: 100 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (cfg, n, r) => {
          const delay = jitteredBackoffMs(cfg, n, () => r);
          const base = baseBackoffMs(cfg, n);
          expect(Number.isInteger(delay)).toBe(true);
          expect(delay).toBeLessThanOrEqual(base);
          expect(delay).toBeLessThanOrEqual(cfg.maxBackoffMs);
          expect(delay).toBeGreaterThanOrEqual(base / 2);
        },
      ),
    );
  });

  it('an operation that always fails retryably is attempted exactly max(1, maxAttempts) times', () => {
    fc.assert(
      fc.property(
        configArb,
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1 }),
        (cfg, rs) => {
          let attempts = 0;
          let i = 0;
          const random = (): number => rs[i++ % rs.length] ?? 0;
          for (;;) {
            attempts++;
            const d = decideRetry({ attempt: attempts, retryable: true, config: cfg, random });
            if (!d.retry) {
              expect(d.reason).toBe('exhausted');
              break;
            }
            expect(d.delayMs).toBeLessThanOrEqual(cfg.maxBackoffMs);
          }
          expect(attempts).toBe(Math.max(1, cfg.maxAttempts));
        },
      ),
    );
  });
});
