// Retry decisions for storage conflicts, end to end through the pure parts: a PostgreSQL SQLSTATE →
// storage code and `retryable` (error-classify.ts) → the Result retry scope's decision with the shipped
// defaults (core/io/retry-policy.ts). A transient conflict is re-run (the IO scope re-runs the whole
// transaction callback) with jittered exponential backoff; anything else fails at once.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TOP_LEVEL_DEFAULTS } from '../../../../src/kernel/config-defaults.js';
import { classifyPostgresError, storageErrorFrom } from '../../../../src/services/storage/error-classify.js';
import {
  baseBackoffMs,
  classifyIoError,
  decideRetry,
} from '../../../../src/services/worker/core/io/index.js';

const RESULT = TOP_LEVEL_DEFAULTS.storage.retry.result;
const pgError = (code: string) => Object.assign(new Error(`pg ${code}`), { code });

function decisionFor(sqlstate: string, attempt: number, random = () => 0.5) {
  const err = storageErrorFrom(classifyPostgresError(pgError(sqlstate)), pgError(sqlstate), 'pg', 't');
  const c = classifyIoError(err);
  return decideRetry({ attempt, retryable: c.retryable, code: c.code, config: RESULT, random });
}

describe('a PostgreSQL error in a writer transaction', () => {
  it.each([
    ['40001', 'serialization_failure', true],
    ['40P01', 'deadlock_detected', true],
    ['40000', 'transaction_rollback', true],
    ['55P03', 'lock_not_available', true],
    ['57P01', 'admin_shutdown (connection)', true],
    ['40002', 'integrity violation at commit', false],
    ['40003', 'completion unknown', false],
    ['23505', 'unique_violation', false],
    ['22003', 'numeric_value_out_of_range', false],
    ['42P01', 'undefined_table', false],
  ])('%s (%s): retried %s', (sqlstate, _name, retried) => {
    expect(decisionFor(sqlstate, 1).retry).toBe(retried);
  });

  it('a conflict is retried until the budget is spent, with growing, capped, jittered delays', () => {
    const delays: number[] = [];
    for (let attempt = 1; ; attempt++) {
      const d = decisionFor('40001', attempt, () => 1);
      if (!d.retry) {
        expect(d).toEqual({ retry: false, reason: 'exhausted' });
        expect(attempt).toBe(RESULT.maxAttempts);
        break;
      }
      delays.push(d.delayMs);
    }
    expect(delays).toEqual([20, 40, 80, 160, 320]);
    expect(Math.max(...delays)).toBeLessThanOrEqual(RESULT.maxBackoffMs);
  });

  it('the shipped Result scope tolerates a conflict-rate of one in two with < 2 % of writes lost', () => {
    // Independent conflicts at rate p: a write is lost when every attempt conflicts.
    expect(RESULT.maxAttempts).toBeGreaterThanOrEqual(6);
    expect(0.5 ** RESULT.maxAttempts).toBeLessThan(0.02);
  });

  it('every delay lies in [base/2, base] whatever the random draw (failures spread out)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: RESULT.maxAttempts - 1 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (a, r) => {
          const d = decisionFor('40P01', a, () => r);
          const base = baseBackoffMs(RESULT, a);
          expect(d.retry && d.delayMs >= base / 2 && d.delayMs <= base).toBe(true);
        },
      ),
    );
  });
});
