// RequestScheduler on virtual time: tables of input sequences → commands, and properties over random
// sequences of submissions, outcomes and ticks (the invariants its theory of operation states).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  RequestScheduler,
  SchedulerInputError,
  isRetryableFailure,
  type AttemptFailure,
  type SchedulerCommand,
  type SchedulerLimits,
} from '../../../../../src/services/chain-rpc/core/request-scheduler.js';

const LIMITS: SchedulerLimits = {
  maxConcurrent: 2,
  requestsPerSecond: 0,
  burst: 1,
  timeoutMs: 1000,
  maxAttempts: 3,
  initialBackoffMs: 100,
  maxBackoffMs: 1000,
  endpoints: 1,
};

const sends = (cmds: SchedulerCommand[]) => cmds.filter((c) => c.type === 'send').map((c) => c.id);

describe('RequestScheduler: tables', () => {
  it('sends at once up to maxConcurrent, then one more each time an attempt ends', () => {
    const s = new RequestScheduler(LIMITS, () => 0.5);
    expect(sends(s.handle({ type: 'submit', id: 1, now: 0 }))).toEqual([1]);
    expect(sends(s.handle({ type: 'submit', id: 2, now: 0 }))).toEqual([2]);
    expect(sends(s.handle({ type: 'submit', id: 3, now: 0 }))).toEqual([]);
    expect(s.nextDeadline()).toBeUndefined();
    expect(s.handle({ type: 'succeeded', id: 1, now: 5 })).toEqual([
      { type: 'resolve', id: 1, attempts: 1 },
      { type: 'send', id: 3, attempt: 1, endpoint: 0, timeoutMs: 1000 },
    ]);
  });

  it('spaces sends 1000 / requestsPerSecond ms apart and says when the next may go', () => {
    const s = new RequestScheduler({ ...LIMITS, maxConcurrent: 10, requestsPerSecond: 4 }, () => 0);
    expect(sends(s.handle({ type: 'submit', id: 1, now: 0 }))).toEqual([1]);
    expect(sends(s.handle({ type: 'submit', id: 2, now: 100 }))).toEqual([]);
    expect(s.nextDeadline()).toBe(250);
    expect(sends(s.handle({ type: 'tick', now: 249 }))).toEqual([]);
    expect(sends(s.handle({ type: 'tick', now: 250 }))).toEqual([2]);
  });

  it('with a burst, lets that many go back to back after a quiet spell, then the rate', () => {
    const s = new RequestScheduler({ ...LIMITS, maxConcurrent: 10, requestsPerSecond: 4, burst: 3 }, () => 0);
    const at0 = [1, 2, 3, 4].flatMap((id) => sends(s.handle({ type: 'submit', id, now: 0 })));
    expect(at0).toEqual([1, 2, 3]);
    expect(s.nextDeadline()).toBe(250);
    expect(sends(s.handle({ type: 'tick', now: 250 }))).toEqual([4]);
    // Quiet for a second: the bucket is full again, so three go at once and the fourth waits 250 ms.
    const at2000 = [5, 6, 7, 8].flatMap((id) => sends(s.handle({ type: 'submit', id, now: 2000 })));
    expect(at2000).toEqual([5, 6, 7]);
    expect(s.nextDeadline()).toBe(2250);
  });

  it('takes new limits without losing what waits, keeping the tokens spent', () => {
    const s = new RequestScheduler({ ...LIMITS, maxConcurrent: 10, requestsPerSecond: 1 }, () => 0);
    expect([1, 2, 3].flatMap((id) => sends(s.handle({ type: 'submit', id, now: 0 })))).toEqual([1]);
    expect(s.nextDeadline()).toBe(1000);
    // A task asks for 10/s at 50 ms: 0.95 of request 1's token is still spent, 95 ms at the new rate.
    const limits = { ...LIMITS, maxConcurrent: 10, requestsPerSecond: 10 };
    expect(sends(s.reconfigure(limits, 50))).toEqual([]);
    expect(s.nextDeadline()).toBe(145);
    expect(sends(s.handle({ type: 'tick', now: 145 }))).toEqual([2]);
    expect(sends(s.handle({ type: 'tick', now: 245 }))).toEqual([3]);
    expect(s.currentLimits).toEqual(limits);
    // No limit at all: what waits goes at once.
    [4, 5].forEach((id) => s.handle({ type: 'submit', id, now: 260 }));
    expect(sends(s.reconfigure({ ...limits, requestsPerSecond: 0 }, 260))).toEqual([4, 5]);
    expect(() => s.reconfigure({ ...limits, endpoints: 2 }, 300)).toThrow(SchedulerInputError);
  });

  const retryRows: [string, AttemptFailure, boolean][] = [
    ['timeout', { kind: 'timeout' }, true],
    ['connection error', { kind: 'connection' }, true],
    ['unreadable body', { kind: 'malformed' }, true],
    ['HTTP 429', { kind: 'http', status: 429 }, true],
    ['HTTP 500', { kind: 'http', status: 500 }, true],
    ['HTTP 503', { kind: 'http', status: 503 }, true],
    ['HTTP 400', { kind: 'http', status: 400 }, false],
    ['HTTP 401', { kind: 'http', status: 401 }, false],
    ['not JSON-RPC', { kind: 'fatal' }, false],
  ];
  it.each(retryRows)('%s: retryable %s', (_name, failure, retryable) => {
    expect(isRetryableFailure(failure)).toBe(retryable);
    const s = new RequestScheduler(LIMITS, () => 0.5);
    s.handle({ type: 'submit', id: 1, now: 0 });
    const out = s.handle({ type: 'failed', id: 1, failure, now: 10 });
    if (retryable) {
      expect(out).toEqual([]);
      // Full jitter: 0.5 of min(1000, 100 · 2^0) = 50 ms.
      expect(s.nextDeadline()).toBe(60);
      expect(s.handle({ type: 'tick', now: 60 })).toEqual([
        { type: 'send', id: 1, attempt: 2, endpoint: 0, timeoutMs: 1000 },
      ]);
    } else {
      expect(out).toEqual([{ type: 'fail', id: 1, attempts: 1, failure, retryable: false }]);
      expect(s.pending).toBe(0);
    }
  });

  it('gives up after maxAttempts with the last failure, saying it was retryable', () => {
    const s = new RequestScheduler(LIMITS, () => 0);
    s.handle({ type: 'submit', id: 7, now: 0 });
    // random() = 0: no backoff, so the retry leaves with the failure's own commands.
    expect(sends(s.handle({ type: 'failed', id: 7, failure: { kind: 'timeout' }, now: 1 }))).toEqual([7]);
    expect(sends(s.handle({ type: 'failed', id: 7, failure: { kind: 'connection' }, now: 2 }))).toEqual([7]);
    expect(s.handle({ type: 'failed', id: 7, failure: { kind: 'http', status: 502 }, now: 3 })).toEqual([
      { type: 'fail', id: 7, attempts: 3, failure: { kind: 'http', status: 502 }, retryable: true },
    ]);
  });

  it('doubles the backoff ceiling per attempt up to maxBackoffMs', () => {
    const s = new RequestScheduler({ ...LIMITS, maxAttempts: 10 }, () => 0.999);
    s.handle({ type: 'submit', id: 1, now: 0 });
    const waits: number[] = [];
    let now = 0;
    for (let i = 0; i < 6; i++) {
      s.handle({ type: 'failed', id: 1, failure: { kind: 'timeout' }, now });
      const at = s.nextDeadline() as number;
      waits.push(at - now);
      now = at;
      s.handle({ type: 'tick', now });
    }
    expect(waits).toEqual([99, 199, 399, 799, 999, 999]);
  });

  it('a 429 with Retry-After waits at least that long and pauses the whole source', () => {
    const s = new RequestScheduler({ ...LIMITS, maxConcurrent: 5 }, () => 0);
    s.handle({ type: 'submit', id: 1, now: 0 });
    s.handle({ type: 'failed', id: 1, failure: { kind: 'http', status: 429, retryAfterMs: 2000 }, now: 100 });
    expect(sends(s.handle({ type: 'submit', id: 2, now: 200 }))).toEqual([]);
    expect(s.nextDeadline()).toBe(2100);
    expect(sends(s.handle({ type: 'tick', now: 2099 }))).toEqual([]);
    // The retry goes first, then the request that arrived during the pause.
    expect(sends(s.handle({ type: 'tick', now: 2100 }))).toEqual([1, 2]);
  });

  it('sends attempt k to endpoint (k − 1) mod endpoints: the fallback after the primary fails', () => {
    const s = new RequestScheduler({ ...LIMITS, endpoints: 2 }, () => 0);
    const endpoints: number[] = [];
    const collect = (cmds: SchedulerCommand[]) => {
      for (const c of cmds) if (c.type === 'send') endpoints.push(c.endpoint);
    };
    collect(s.handle({ type: 'submit', id: 1, now: 0 }));
    for (let t = 1; t <= 2; t++) {
      collect(s.handle({ type: 'failed', id: 1, failure: { kind: 'connection' }, now: t }));
      collect(s.handle({ type: 'tick', now: t }));
    }
    expect(endpoints).toEqual([0, 1, 0]);
  });

  it('throws a typed error on illegal input', () => {
    const s = new RequestScheduler(LIMITS, () => 0);
    s.handle({ type: 'submit', id: 1, now: 0 });
    expect(() => s.handle({ type: 'submit', id: 1, now: 0 })).toThrow(SchedulerInputError);
    expect(() => s.handle({ type: 'succeeded', id: 9, now: 0 })).toThrow(SchedulerInputError);
    expect(() => new RequestScheduler({ ...LIMITS, maxConcurrent: 0 }, () => 0)).toThrow(SchedulerInputError);
    expect(() => new RequestScheduler({ ...LIMITS, burst: 0 }, () => 0)).toThrow(SchedulerInputError);
  });
});

// ---- Properties ------------------------------------------------------------------------------------

type Step =
  | { readonly kind: 'submit'; readonly dt: number }
  | {
      readonly kind: 'finish';
      readonly pick: number;
      readonly outcome: AttemptFailure | 'ok';
      readonly dt: number;
    }
  | { readonly kind: 'tick'; readonly dt: number }
  /** A task of the process asks for other limits (the endpoints stay). */
  | {
      readonly kind: 'reconfigure';
      readonly limits: Omit<SchedulerLimits, 'endpoints'>;
      readonly dt: number;
    };

const outcome = fc.oneof(
  fc.constant('ok' as const),
  fc.constant<AttemptFailure>({ kind: 'timeout' }),
  fc.constant<AttemptFailure>({ kind: 'connection' }),
  fc.constant<AttemptFailure>({ kind: 'malformed' }),
  fc.constant<AttemptFailure>({ kind: 'fatal' }),
  fc
    .integer({ min: 0, max: 3000 })
    .map((ms): AttemptFailure => ({ kind: 'http', status: 429, retryAfterMs: ms })),
  fc.constantFrom(400, 404, 500, 502, 503).map((status): AttemptFailure => ({ kind: 'http', status })),
);
const dt = fc.integer({ min: 0, max: 400 });
const limitsButEndpoints = fc.record({
  maxConcurrent: fc.integer({ min: 1, max: 4 }),
  requestsPerSecond: fc.constantFrom(0, 2, 10, 1000),
  burst: fc.integer({ min: 1, max: 4 }),
  timeoutMs: fc.constant(1000),
  maxAttempts: fc.integer({ min: 1, max: 4 }),
  initialBackoffMs: fc.integer({ min: 1, max: 200 }),
  maxBackoffMs: fc.integer({ min: 200, max: 2000 }),
});
const step: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: dt.map((d) => ({ kind: 'submit' as const, dt: d })), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('finish' as const), pick: fc.nat(), outcome, dt }), weight: 4 },
  { arbitrary: dt.map((d) => ({ kind: 'tick' as const, dt: d })), weight: 2 },
  {
    arbitrary: fc.record({ kind: fc.constant('reconfigure' as const), limits: limitsButEndpoints, dt }),
    weight: 1,
  },
);
const limits = fc
  .tuple(limitsButEndpoints, fc.integer({ min: 1, max: 2 }))
  .map(([l, endpoints]): SchedulerLimits => ({ ...l, endpoints }));

/**
 * The rate bound over every window of the sends made under one set of limits: n sends from t_i to t_j may
 * not exceed burst + requestsPerSecond · (t_j − t_i) / 1000 (a per-task limiter, or one that forgot the
 * tokens spent before a reconfigure, breaks it).
 */
function expectRateBound(times: readonly number[], l: SchedulerLimits): void {
  if (l.requestsPerSecond === 0) return;
  for (let i = 0; i < times.length; i++) {
    for (let j = i; j < times.length; j++) {
      const allowed = l.burst + (l.requestsPerSecond * ((times[j] as number) - (times[i] as number))) / 1000;
      expect(j - i + 1).toBeLessThanOrEqual(allowed + 1e-9);
    }
  }
}

describe('RequestScheduler: properties', () => {
  it('bounds concurrency, the rate over every window, pauses and attempts, and ends every request exactly once', () => {
    fc.assert(
      fc.property(
        limits,
        fc.array(step, { maxLength: 120 }),
        fc.double({ min: 0, max: 0.999, noNaN: true }),
        (initial, steps, r) => {
          const s = new RequestScheduler(initial, () => r);
          let l = initial;
          let mostAttempts = initial.maxAttempts;
          /** Send times under the limits in force (a reconfigure starts a new segment). */
          let segment: number[] = [];
          let now = 0;
          let nextId = 1;
          const inFlight = new Set<number>();
          const ended = new Map<number, number>();
          const attempts = new Map<number, number>();
          let pausedUntil = -Infinity;
          const apply = (cmds: SchedulerCommand[]) => {
            for (const c of cmds) {
              if (c.type === 'send') {
                expect(inFlight.has(c.id)).toBe(false);
                inFlight.add(c.id);
                expect(inFlight.size).toBeLessThanOrEqual(l.maxConcurrent);
                expect(now).toBeGreaterThanOrEqual(pausedUntil);
                segment.push(now);
                attempts.set(c.id, c.attempt);
                // A retry decided before a reconfigure keeps the attempts it was given then.
                expect(c.attempt).toBeLessThanOrEqual(mostAttempts);
                expect(c.endpoint).toBe((c.attempt - 1) % l.endpoints);
              } else {
                expect(ended.has(c.id)).toBe(false);
                ended.set(c.id, c.attempts);
                expect(c.attempts).toBe(attempts.get(c.id));
              }
            }
          };
          for (const st of steps) {
            now += st.dt;
            if (st.kind === 'submit') apply(s.handle({ type: 'submit', id: nextId++, now }));
            else if (st.kind === 'tick') apply(s.handle({ type: 'tick', now }));
            else if (st.kind === 'reconfigure') {
              expectRateBound(segment, l);
              l = { ...st.limits, endpoints: l.endpoints };
              mostAttempts = Math.max(mostAttempts, l.maxAttempts);
              segment = [];
              apply(s.reconfigure(l, now));
            } else if (inFlight.size > 0) {
              const id = [...inFlight][st.pick % inFlight.size] as number;
              inFlight.delete(id);
              if (st.outcome === 'ok') apply(s.handle({ type: 'succeeded', id, now }));
              else {
                const f = st.outcome;
                if (f.kind === 'http' && f.retryAfterMs !== undefined && isRetryableFailure(f)) {
                  pausedUntil = Math.max(pausedUntil, now + f.retryAfterMs);
                }
                apply(s.handle({ type: 'failed', id, failure: f, now }));
              }
            }
          }
          // Drain: answer every attempt with success and follow the deadlines; everything ends.
          for (let guard = 0; s.pending > 0 && guard < 10_000; guard++) {
            if (inFlight.size > 0) {
              const id = [...inFlight][0] as number;
              inFlight.delete(id);
              apply(s.handle({ type: 'succeeded', id, now }));
            } else {
              const at = s.nextDeadline();
              expect(at).toBeDefined();
              now = Math.max(now, at as number);
              apply(s.handle({ type: 'tick', now }));
            }
          }
          expect(s.pending).toBe(0);
          expect(ended.size).toBe(nextId - 1);
          expectRateBound(segment, l);
        },
      ),
    );
  });
});
