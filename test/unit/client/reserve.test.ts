// The client's placement retry policy (docs/coordinator.md § Errors: Unavailable → retry now; Aborted → wait
// one slot TTL and retry with the SAME task id; ResourceExhausted → back off), as a decision table and
// through the loop.
import * as grpc from '@grpc/grpc-js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BlockxClientError, ClientErrorCode } from '../../../src/client/errors.js';
import {
  decideRetry,
  initialRetryState,
  placeTask,
  type PlacementPhase,
  type RetryPolicy,
  type RetryState,
  SUBMIT_UNAVAILABLE_LIMIT,
} from '../../../src/client/reserve.js';
import { grpcStatusError } from '../../../src/grpc/status.js';

const POLICY: RetryPolicy = { maxAttempts: 20, slotTtlMs: 5_000, backoff: { initialMs: 50, maxMs: 2_000 } };
const C = ClientErrorCode;
const half = () => 0.5;

function after(code: ClientErrorCode | undefined, attempts = 1, backoffMs = 50): RetryState {
  return { attempts, backoffMs, last: code };
}

describe('decideRetry: the table', () => {
  // [phase, code, previous failure, expected]: 'fail', or `${action} ${delayMs}`. random = 0.5, base 50.
  const table: [PlacementPhase, ClientErrorCode, ClientErrorCode | undefined, string][] = [
    ['reserve', C.UNAVAILABLE, undefined, 'reserve 0'],
    ['reserve', C.UNAVAILABLE, C.UNAVAILABLE, 'reserve 38'],
    ['reserve', C.UNAVAILABLE, C.NO_CAPACITY, 'reserve 0'],
    ['reserve', C.SLOT_UNCERTAIN, undefined, 'reserve 5000'],
    ['reserve', C.SLOT_UNCERTAIN, C.SLOT_UNCERTAIN, 'reserve 5000'],
    ['reserve', C.DEADLINE, undefined, 'reserve 5000'],
    ['reserve', C.NO_CAPACITY, undefined, 'reserve 38'],
    ['reserve', C.INVALID_ARGUMENT, undefined, 'fail'],
    ['reserve', C.INTERNAL, undefined, 'fail'],
    ['reserve', C.NOT_FOUND, undefined, 'fail'],
    ['reserve', C.CANCELLED, undefined, 'fail'],
    ['reserve', C.INVALID_SLOT, undefined, 'fail'],
    ['submit', C.UNAVAILABLE, undefined, 'resubmit 0'],
    ['submit', C.UNAVAILABLE, C.UNAVAILABLE, 'resubmit 38'],
    ['submit', C.DEADLINE, undefined, 'resubmit 38'],
    ['submit', C.INVALID_SLOT, undefined, 'reserve 0'],
    ['submit', C.NO_CAPACITY, undefined, 'reserve 38'],
    ['submit', C.INVALID_ARGUMENT, undefined, 'fail'],
    ['submit', C.SLOT_UNCERTAIN, undefined, 'fail'],
    ['submit', C.NOT_FOUND, undefined, 'fail'],
    ['direct-submit', C.UNAVAILABLE, undefined, 'resubmit 0'],
    ['direct-submit', C.UNAVAILABLE, C.UNAVAILABLE, 'resubmit 38'],
    ['direct-submit', C.NO_CAPACITY, undefined, 'resubmit 38'],
    ['direct-submit', C.DEADLINE, undefined, 'resubmit 38'],
    ['direct-submit', C.INVALID_SLOT, undefined, 'fail'],
    ['direct-submit', C.INVALID_ARGUMENT, undefined, 'fail'],
  ];
  it.each(table)('%s after %s (previous %s) → %s', (phase, code, last, want) => {
    const d = decideRetry(phase, code, after(last), POLICY, half);
    expect(d.type === 'fail' ? 'fail' : `${d.action} ${d.delayMs}`).toBe(want);
  });

  it('gives up once maxAttempts calls were made, for every retryable code', () => {
    const policy = { ...POLICY, maxAttempts: 3 };
    for (const code of [C.UNAVAILABLE, C.SLOT_UNCERTAIN, C.NO_CAPACITY, C.DEADLINE]) {
      expect(decideRetry('reserve', code, after(undefined, 2), policy, half).type).toBe('retry');
      expect(decideRetry('reserve', code, after(undefined, 3), policy, half)).toEqual({
        type: 'fail',
        reason: 'attempts_exhausted',
      });
    }
    // A final code fails as final even when attempts remain.
    expect(decideRetry('reserve', C.INVALID_ARGUMENT, after(undefined, 1), policy, half)).toEqual({
      type: 'fail',
      reason: 'final',
    });
  });

  it('waits exactly one slot TTL after Aborted and leaves the backoff where it was', () => {
    const d = decideRetry('reserve', C.SLOT_UNCERTAIN, after(C.NO_CAPACITY, 4, 400), POLICY, () => 0.99);
    expect(d).toEqual({
      type: 'retry',
      action: 'reserve',
      delayMs: 5_000,
      next: { attempts: 4, backoffMs: 400, last: C.SLOT_UNCERTAIN, streak: 1 },
    });
  });

  it('backs off exponentially with jitter in [base/2, base], capped at maxMs', () => {
    const policy = { ...POLICY, backoff: { initialMs: 50, maxMs: 400 } };
    const run = (random: () => number) => {
      let state = initialRetryState(policy);
      const delays: number[] = [];
      for (let i = 1; i <= 6; i++) {
        const d = decideRetry('reserve', C.NO_CAPACITY, { ...state, attempts: i }, policy, random);
        if (d.type !== 'retry') throw new Error('expected a retry');
        delays.push(d.delayMs);
        state = d.next;
      }
      return delays;
    };
    expect(run(() => 0)).toEqual([25, 50, 100, 200, 200, 200]);
    expect(run(() => 0.999_999)).toEqual([50, 100, 200, 400, 400, 400]);
  });

  it('property: every wait is bounded and attempts never exceed the policy', () => {
    const codes = fc.constantFrom(C.UNAVAILABLE, C.SLOT_UNCERTAIN, C.NO_CAPACITY, C.DEADLINE, C.INVALID_SLOT);
    const phases = fc.constantFrom<PlacementPhase>('reserve', 'submit', 'direct-submit');
    fc.assert(
      fc.property(
        fc.array(fc.tuple(phases, codes, fc.double({ min: 0, max: 0.999_999, noNaN: true })), {
          maxLength: 40,
        }),
        fc.integer({ min: 1, max: 10 }),
        (steps, maxAttempts) => {
          const policy = { ...POLICY, maxAttempts };
          let state = initialRetryState(policy);
          for (const [phase, code, r] of steps) {
            state = { ...state, attempts: state.attempts + 1 };
            const d = decideRetry(phase, code, state, policy, () => r);
            if (d.type === 'fail') return;
            expect(state.attempts).toBeLessThan(maxAttempts);
            expect(d.delayMs).toBeGreaterThanOrEqual(0);
            expect(d.delayMs).toBeLessThanOrEqual(Math.max(policy.slotTtlMs, policy.backoff.maxMs));
            expect(d.next.backoffMs).toBeLessThanOrEqual(policy.backoff.maxMs);
            state = d.next;
          }
        },
      ),
    );
  });
});

// ---- the loop -----------------------------------------------------------------------------------------

const err = (status: grpc.status, business?: string) => grpcStatusError(status, 'scripted', business);

/** Fake ports: each reserve/submit call takes the next scripted outcome (an error or 'ok'). */
function ports(script: { reserve?: (grpc.ServiceError | 'ok')[]; submit?: (grpc.ServiceError | 'ok')[] }) {
  const calls: string[] = [];
  const sleeps: number[] = [];
  let slot = 0;
  const reserveScript = [...(script.reserve ?? [])];
  const submitScript = [...(script.submit ?? [])];
  return {
    calls,
    sleeps,
    reserve: async (taskId: string) => {
      calls.push(`reserve ${taskId}`);
      const next = reserveScript.shift() ?? 'ok';
      if (next !== 'ok') throw next;
      return { workerAddr: 'w1:9090', slotId: `s${++slot}` };
    },
    submit: async (workerAddr: string, slotId: string) => {
      calls.push(`submit ${workerAddr} ${slotId || '-'}`);
      const next = submitScript.shift() ?? 'ok';
      if (next !== 'ok') throw next;
      return { state: 'RUNNING' };
    },
    sleep: async (ms: number) => void sleeps.push(ms),
    random: () => 0,
  };
}

describe('placeTask', () => {
  it('Unavailable → at once, Aborted → one slot TTL, then reserves with the same task id and submits', async () => {
    const p = ports({
      reserve: [err(grpc.status.UNAVAILABLE), err(grpc.status.ABORTED, 'SlotUncertain'), 'ok'],
    });
    const placed = await placeTask('t-1', p, POLICY);
    expect(p.calls).toEqual(['reserve t-1', 'reserve t-1', 'reserve t-1', 'submit w1:9090 s1']);
    expect(p.sleeps).toEqual([5_000]);
    expect(placed).toEqual({ workerAddr: 'w1:9090', submitted: { state: 'RUNNING' }, attempts: 4 });
  });

  it('backs off on no capacity', async () => {
    const exhausted = err(grpc.status.RESOURCE_EXHAUSTED, 'NoExecutableSlot');
    const p = ports({ reserve: [exhausted, exhausted, exhausted] });
    await placeTask('t', p, POLICY);
    expect(p.sleeps).toEqual([25, 50, 100]);
  });

  it('InvalidSlot on submit reserves again; Unavailable on submit resubmits to the same slot', async () => {
    const p = ports({
      submit: [err(grpc.status.FAILED_PRECONDITION, 'InvalidSlot'), err(grpc.status.UNAVAILABLE), 'ok'],
    });
    await placeTask('t', p, POLICY);
    expect(p.calls).toEqual([
      'reserve t',
      'submit w1:9090 s1',
      'reserve t',
      'submit w1:9090 s2',
      'submit w1:9090 s2',
    ]);
  });

  it('after SUBMIT_UNAVAILABLE_LIMIT Unavailable answers in a row from one Worker, reserves again (same id)', async () => {
    const down = err(grpc.status.UNAVAILABLE);
    const p = ports({ submit: [down, down, down, 'ok'] });
    const placed = await placeTask('t', p, POLICY);
    expect(SUBMIT_UNAVAILABLE_LIMIT).toBe(3);
    expect(p.calls).toEqual([
      'reserve t',
      'submit w1:9090 s1',
      'submit w1:9090 s1',
      'submit w1:9090 s1',
      'reserve t',
      'submit w1:9090 s2',
    ]);
    // The first retry goes out at once, the later ones back off.
    expect(p.sleeps).toEqual([25, 50]);
    expect(placed.attempts).toBe(6);
  });

  it('direct mode submits without a slot and retries NoSlot there', async () => {
    const p = ports({ submit: [err(grpc.status.RESOURCE_EXHAUSTED, 'NoSlot'), 'ok'] });
    const placed = await placeTask('t', { ...p, reserve: undefined, directWorker: 'w9:1' }, POLICY);
    expect(p.calls).toEqual(['submit w9:1 -', 'submit w9:1 -']);
    expect(placed.workerAddr).toBe('w9:1');
  });

  it('throws the last error with its codes and the attempt count once attempts run out', async () => {
    const exhausted = err(grpc.status.RESOURCE_EXHAUSTED, 'NoExecutableSlot');
    const p = ports({ reserve: [exhausted, exhausted, exhausted, exhausted] });
    const e = await placeTask('t', p, { ...POLICY, maxAttempts: 3 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(BlockxClientError);
    expect(e).toMatchObject({
      code: C.NO_CAPACITY,
      grpcStatus: grpc.status.RESOURCE_EXHAUSTED,
      businessCode: 'NoExecutableSlot',
      attempts: 3,
      taskId: 't',
    });
    expect(p.calls).toHaveLength(3);
    expect(p.sleeps).toHaveLength(2);
  });

  it('a final error is thrown at once', async () => {
    const p = ports({ reserve: [err(grpc.status.INVALID_ARGUMENT, 'InvalidArgument')] });
    await expect(placeTask('t', p, POLICY)).rejects.toMatchObject({ code: C.INVALID_ARGUMENT, attempts: 1 });
    expect(p.sleeps).toEqual([]);
  });

  it('stops with CANCELLED when the signal aborts during a wait', async () => {
    const abort = new AbortController();
    const p = ports({ reserve: [err(grpc.status.ABORTED, 'SlotUncertain')] });
    const sleep = async () => abort.abort();
    await expect(placeTask('t', { ...p, sleep }, POLICY, abort.signal)).rejects.toMatchObject({
      code: C.CANCELLED,
    });
    expect(p.calls).toEqual(['reserve t']);
  });
});
