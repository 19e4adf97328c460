// The circuit breaker's rules (src/services/coordinator/core/circuit-breaker.ts) as scenarios on virtual
// time: a list of feedback steps, each at its `now`, and the fields and state expected after each.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  breakerState,
  isBreakerOpen,
  recordBreakerFailure,
  recordBreakerSuccess,
  type BreakerFields,
  type BreakerState,
} from '../../../../../src/services/coordinator/core/circuit-breaker.js';

const LIMITS = { circuitBreakerThreshold: 3, circuitBreakerCooldownMs: 10_000 } as const;

/**
 * One step: at `now`, feed a failure ('fail', and whether it opens the breaker), a success ('ok') or
 * nothing ('look'); then the failure count, the deadline and the state expected.
 */
type Row = readonly [
  now: number,
  feed: 'fail' | 'ok' | 'look',
  opens: boolean,
  count: number,
  deadline: number,
  state: BreakerState,
];

const fresh = (): BreakerFields => ({ circuitBreakerDeadlineMs: 0, recentFailureCount: 0, penalty: 0 });

/** Three failures at `at`: the third opens the breaker until `at + cooldown`. */
const opened = (at: number): Row[] => [
  [at, 'fail', false, 1, 0, 'closed'],
  [at, 'fail', false, 2, 0, 'closed'],
  [at, 'fail', true, 3, at + 10_000, 'open'],
];

const SCENARIOS: readonly (readonly [string, readonly Row[]])[] = [
  [
    'failures below the threshold only count',
    [
      [100, 'fail', false, 1, 0, 'closed'],
      [200, 'fail', false, 2, 0, 'closed'],
      [90_000, 'look', false, 2, 0, 'closed'],
    ],
  ],
  [
    'the threshold-th failure opens it for the cooldown; at the deadline it is half-open',
    [
      ...opened(300),
      [10_299, 'look', false, 3, 10_300, 'open'],
      [10_300, 'look', false, 3, 10_300, 'half-open'],
    ],
  ],
  [
    'half-open: one more failure re-opens it at once',
    [...opened(0), [12_000, 'fail', true, 4, 22_000, 'open']],
  ],
  ['a failure while open pushes the deadline out', [...opened(0), [5_000, 'fail', true, 4, 15_000, 'open']]],
  [
    'a success closes it, open or half-open, and the count starts again',
    [
      ...opened(0),
      [1_000, 'ok', false, 0, 0, 'closed'],
      [2_000, 'fail', false, 1, 0, 'closed'],
      ...opened(20_000).slice(1),
      [31_000, 'look', false, 3, 30_000, 'half-open'],
      [31_000, 'ok', false, 0, 0, 'closed'],
    ],
  ],
];

describe('circuit breaker', () => {
  it.each(SCENARIOS)('%s', (_name, rows) => {
    const b = fresh();
    for (const [now, feed, opens, count, deadline, state] of rows) {
      if (feed === 'fail') expect(recordBreakerFailure(b, now, LIMITS)).toBe(opens);
      if (feed === 'ok') recordBreakerSuccess(b);
      expect([b.recentFailureCount, b.circuitBreakerDeadlineMs, breakerState(b, now, LIMITS)]).toEqual([
        count,
        deadline,
        state,
      ]);
      expect(b.penalty).toBe(count);
      expect(isBreakerOpen(b, now)).toBe(state === 'open');
    }
  });

  it('a threshold of 1 opens on the first failure', () => {
    const b = fresh();
    expect(recordBreakerFailure(b, 50, { ...LIMITS, circuitBreakerThreshold: 1 })).toBe(true);
    expect(breakerState(b, 50, LIMITS)).toBe('open');
  });

  it('over any feedback sequence: open iff a failure at the threshold happened within the cooldown and no success since', () => {
    const feedback = fc.array(fc.record({ gap: fc.integer({ min: 0, max: 15_000 }), ok: fc.boolean() }), {
      maxLength: 30,
    });
    fc.assert(
      fc.property(feedback, fc.integer({ min: 0, max: 30_000 }), (steps, lookAfter) => {
        const b = fresh();
        let now = 0;
        let streak = 0;
        let lastOpenedAt: number | undefined;
        for (const { gap, ok } of steps) {
          now += gap;
          if (ok) {
            recordBreakerSuccess(b);
            streak = 0;
            lastOpenedAt = undefined;
          } else {
            streak += 1;
            const opened = recordBreakerFailure(b, now, LIMITS);
            expect(opened).toBe(streak >= LIMITS.circuitBreakerThreshold);
            if (opened) lastOpenedAt = now;
          }
        }
        const at = now + lookAfter;
        const open = lastOpenedAt !== undefined && at < lastOpenedAt + LIMITS.circuitBreakerCooldownMs;
        expect(isBreakerOpen(b, at)).toBe(open);
        expect(breakerState(b, at, LIMITS)).toBe(
          open ? 'open' : lastOpenedAt !== undefined ? 'half-open' : 'closed',
        );
      }),
    );
  });
});
