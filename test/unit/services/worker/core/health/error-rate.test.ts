// The heartbeat errorRate core (core/health/error-rate.ts) on virtual time: tables for the formula,
// fast-check properties for decay, bounds, recovery and user errors.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  WorkerErrorRate,
  type ErrorRateInput,
} from '../../../../../../src/services/worker/core/health/error-rate.js';
import type { TerminalOutcome } from '../../../../../../src/services/worker/core/health/responsibility.js';

const H = 30_000;
const OK: TerminalOutcome = { succeeded: true, failureCode: '', retryable: false, failureMessage: '' };
const WORKER_FAULT: TerminalOutcome = {
  succeeded: false,
  failureCode: 'IO_SCOPE_FAILED',
  retryable: true,
  failureMessage: 'storage down',
};
const USER_FAULT: TerminalOutcome = {
  succeeded: false,
  failureCode: 'CALL_FAILED',
  retryable: false,
  failureMessage: 'call t/0 (typo) failed after 1 attempt(s): load: function "typo" not found',
};
const BAD_OUTPUT: TerminalOutcome = {
  succeeded: false,
  failureCode: 'PLUGIN_FAILED',
  retryable: false,
  failureMessage: 'BAD_OUTPUT: output 0 is not an upsert',
};

const at = (now: number, outcome: TerminalOutcome): ErrorRateInput => ({
  type: 'TaskTerminal',
  now,
  outcome,
});

function rateAfter(inputs: readonly ErrorRateInput[], now: number): number {
  const r = new WorkerErrorRate();
  for (const i of inputs) r.step(i);
  return r.rateAt(now);
}

describe('WorkerErrorRate: the formula', () => {
  it.each<[string, ErrorRateInput[], number, number]>([
    ['no tasks', [], 0, 0],
    ['one worker fault on an idle worker: 1 / floor 4', [at(0, WORKER_FAULT)], 0, 0.25],
    ['… one half-life later, no traffic', [at(0, WORKER_FAULT)], H, 0.125],
    ['… two half-lives later', [at(0, WORKER_FAULT)], 2 * H, 0.0625],
    ['4 faults at once: 4 / 4', Array.from({ length: 4 }, () => at(0, WORKER_FAULT)), 0, 1],
    ['8 faults: F = N = 8 ≥ floor → 1', Array.from({ length: 8 }, () => at(0, WORKER_FAULT)), 0, 1],
    [
      '8 faults, one half-life later: 4 / 4 still',
      Array.from({ length: 8 }, () => at(0, WORKER_FAULT)),
      H,
      1,
    ],
    [
      '8 faults, two half-lives later: 2 / 4',
      Array.from({ length: 8 }, () => at(0, WORKER_FAULT)),
      2 * H,
      0.5,
    ],
    [
      '5 faults among 10 tasks: 5 / 10',
      [
        ...Array.from({ length: 5 }, () => at(0, WORKER_FAULT)),
        ...Array.from({ length: 5 }, () => at(0, OK)),
      ],
      0,
      0.5,
    ],
    ['an old fault weighs half next to a new success', [at(0, WORKER_FAULT), at(H, OK)], H, 0.5 / 4],
    [
      'user errors and BAD_OUTPUT do not count',
      [at(0, USER_FAULT), at(0, USER_FAULT), at(0, BAD_OUTPUT)],
      0,
      0,
    ],
    // The measured incident: two typo'd functions put both workers of a cluster over 0.5.
    ['two user failures on an idle worker', [at(0, USER_FAULT), at(1, USER_FAULT)], 1, 0],
  ])('%s', (_name, inputs, now, expected) => {
    expect(rateAfter(inputs, now)).toBeCloseTo(expected, 10);
  });

  it('treats a clock going backwards as no time passing', () => {
    const r = new WorkerErrorRate();
    r.step(at(10_000, WORKER_FAULT));
    r.step(at(5_000, OK));
    expect(r.rateAt(0)).toBeCloseTo(1 / 4);
    expect(r.weightsAt(10_000)).toEqual({ failures: 1, tasks: 2 });
  });

  it('rejects a non-positive half-life and a floor below 1', () => {
    expect(() => new WorkerErrorRate({ halfLifeMs: 0 })).toThrow(RangeError);
    expect(() => new WorkerErrorRate({ minTasks: 0.5 })).toThrow(RangeError);
  });
});

// ---- properties -----------------------------------------------------------------------------------

const outcome = fc.constantFrom(OK, WORKER_FAULT, USER_FAULT, BAD_OUTPUT);
/** Inputs at non-decreasing times: each step waits 0..2 half-lives. */
const history = fc
  .array(fc.tuple(fc.integer({ min: 0, max: 2 * H }), outcome), { maxLength: 200 })
  .map((steps) => {
    let now = 0;
    return steps.map(([dt, o]) => at((now += dt), o));
  });
const lastAt = (inputs: readonly ErrorRateInput[]): number => inputs.at(-1)?.now ?? 0;

describe('WorkerErrorRate: properties on virtual time', () => {
  it('is a fraction in [0, 1] at every time', () => {
    fc.assert(
      fc.property(history, fc.integer({ min: 0, max: 100 * H }), (inputs, later) => {
        const r = new WorkerErrorRate();
        for (const i of inputs) {
          r.step(i);
          const v = r.rateAt(i.now);
          expect(v).toBeGreaterThanOrEqual(0);
          expect(v).toBeLessThanOrEqual(1);
        }
        const v = r.rateAt(lastAt(inputs) + later);
        expect(v >= 0 && v <= 1).toBe(true);
      }),
    );
  });

  it('never rises without input (monotone decay)', () => {
    fc.assert(
      fc.property(
        history,
        fc.array(fc.integer({ min: 0, max: 5 * H }), { minLength: 2, maxLength: 20 }),
        (inputs, gaps) => {
          const r = new WorkerErrorRate();
          for (const i of inputs) r.step(i);
          let t = lastAt(inputs);
          let prev = r.rateAt(t);
          for (const g of gaps) {
            t += g;
            const v = r.rateAt(t);
            // F and N decay by the same factor, so F/N holds exactly in the reals while N is above the
            // floor; in doubles the quotient of two decayed values may round one ulp up. Rising means
            // more than rounding.
            expect(v).toBeLessThanOrEqual(prev + 4 * Number.EPSILON * Math.max(prev, 1e-300));
            prev = v;
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('falls below any red line once failures stop, with no traffic at all', () => {
    fc.assert(
      fc.property(history, fc.double({ min: 0.001, max: 0.99, noNaN: true }), (inputs, line) => {
        const r = new WorkerErrorRate();
        for (const i of inputs) r.step(i);
        // N ≤ number of tasks; below the floor the rate halves per half-life: this bound always suffices.
        const n = Math.max(inputs.length, 1);
        const wait = H * (Math.log2(n / 4) + Math.log2(1 / line) + 2);
        expect(r.rateAt(lastAt(inputs) + Math.max(0, wait))).toBeLessThan(line);
      }),
    );
  });

  it('user errors never move it: a user failure reads exactly like a success', () => {
    fc.assert(
      fc.property(history, (inputs) => {
        const asSuccess = inputs.map((i) =>
          i.outcome === USER_FAULT || i.outcome === BAD_OUTPUT ? at(i.now, OK) : i,
        );
        const t = lastAt(inputs) + 1_000;
        expect(rateAfter(inputs, t)).toBe(rateAfter(asSuccess, t));
        const onlyUsers = inputs.filter((i) => i.outcome !== WORKER_FAULT);
        expect(rateAfter(onlyUsers, t)).toBe(0);
      }),
    );
  });
});
