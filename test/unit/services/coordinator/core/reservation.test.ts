// The ReservationMachine (core/reservation.ts) on virtual time: scenarios as tables of inputs → commands,
// events and per-task results, for one id (ReserveWorkerSlot) and for batches (ReserveWorkerSlots), then
// fast-check properties over random fleets, batches, answers and answer orders.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ReservationInputError } from '../../../../../src/services/coordinator/core/errors.js';
import {
  ALL_CANDIDATES_REJECTED,
  REQUEST_CANCELLED,
  UNABLE_TO_CONFIRM,
} from '../../../../../src/services/coordinator/core/reservation.js';
import type {
  RequestSlotsCommand,
  SlotAnswer,
} from '../../../../../src/services/coordinator/core/reservation-types.js';
import {
  EMPTY_SLOT,
  GRANT,
  INVALID_SLOT,
  NO_SLOT,
  REFUSED,
  Rig,
  T0,
  UNCERTAIN,
  idle,
} from './reservation-harness.js';

const THREE = [idle('w1', 8), idle('w2', 6), idle('w3', 4)];
const ok = (taskId: string, cmd: RequestSlotsCommand): SlotAnswer => GRANT(`s-${cmd.workerAddr}-${taskId}`);

/** A world where each Worker answers every id with its scripted answers in turn (then grants). */
function scripted(script: Record<string, SlotAnswer[]>) {
  const queues = new Map(Object.entries(script).map(([k, v]) => [k, [...v]]));
  return (taskId: string, cmd: RequestSlotsCommand): SlotAnswer =>
    queues.get(cmd.workerAddr)?.shift() ?? ok(taskId, cmd);
}

describe('ReservationMachine: one task (ReserveWorkerSlot)', () => {
  it('asks the best candidate for the slot with ttl = slotTtlMs, and answers the grant', () => {
    const rig = new Rig(THREE, ['t'], { core: { slotTtlMs: 4_321 } });
    expect(rig.start()).toEqual([
      { type: 'requestSlots', requestId: 1, workerAddr: 'w1', taskIds: ['t'], ttlMs: 4_321, attempt: 0 },
    ]);
    expect(rig.worker('w1').pendingClaims).toBe(1);
    rig.runToEnd(ok);
    expect(rig.results()).toEqual([{ ok: true, taskId: 't', workerAddr: 'w1', slotId: 's-w1-t' }]);
    expect(rig.worker('w1')).toMatchObject({ pendingClaims: 0, localReservedAtMs: [T0 + 2] });
    expect(rig.events.at(-1)).toMatchObject({ type: 'finished', taskId: 't', candidatesTried: 1 });
  });

  it.each<{
    name: string;
    script: Record<string, SlotAnswer[]>;
    retries?: number;
    trace: [string, string[], number][];
    outcome: string;
    message?: string;
    failures: Record<string, number>;
  }>([
    {
      name: 'explicit rejection → next candidate, counted against the worker',
      script: { w1: [INVALID_SLOT] },
      trace: [
        ['w1', ['t'], 0],
        ['w2', ['t'], 0],
      ],
      outcome: 'w2',
      failures: { w1: 1, w2: 0 },
    },
    {
      name: 'full pool → next candidate, backpressure counts for nothing',
      script: { w1: [NO_SLOT] },
      trace: [
        ['w1', ['t'], 0],
        ['w2', ['t'], 0],
      ],
      outcome: 'w2',
      failures: { w1: 0 },
    },
    {
      name: 'connection refused → next candidate, counted',
      script: { w1: [REFUSED] },
      trace: [
        ['w1', ['t'], 0],
        ['w2', ['t'], 0],
      ],
      outcome: 'w2',
      failures: { w1: 1 },
    },
    {
      name: 'uncertain → same worker, same id, then granted',
      script: { w1: [UNCERTAIN] },
      trace: [
        ['w1', ['t'], 0],
        ['w1', ['t'], 1],
      ],
      outcome: 'w1',
      failures: { w1: 0 },
    },
    {
      name: 'a grant without slot id is uncertain',
      script: { w1: [EMPTY_SLOT] },
      trace: [
        ['w1', ['t'], 0],
        ['w1', ['t'], 1],
      ],
      outcome: 'w1',
      failures: { w1: 0 },
    },
    {
      name: 'still uncertain after the retries → SlotUncertain, never another worker',
      script: { w1: [UNCERTAIN, EMPTY_SLOT, UNCERTAIN] },
      retries: 2,
      trace: [
        ['w1', ['t'], 0],
        ['w1', ['t'], 1],
        ['w1', ['t'], 2],
      ],
      outcome: '!SlotUncertain',
      message: UNABLE_TO_CONFIRM,
      failures: { w1: 1 },
    },
    {
      name: 'maxTimeoutRetries 0: uncertain is final at once',
      script: { w1: [UNCERTAIN] },
      retries: 0,
      trace: [['w1', ['t'], 0]],
      outcome: '!SlotUncertain',
      failures: { w1: 1 },
    },
    {
      name: 'explicit rejection during the retries → next candidate',
      script: { w1: [UNCERTAIN, NO_SLOT] },
      trace: [
        ['w1', ['t'], 0],
        ['w1', ['t'], 1],
        ['w2', ['t'], 0],
      ],
      outcome: 'w2',
      failures: { w1: 0 },
    },
    {
      name: 'every candidate rejects → AllCandidatesRejected',
      script: { w1: [NO_SLOT], w2: [INVALID_SLOT], w3: [REFUSED] },
      trace: [
        ['w1', ['t'], 0],
        ['w2', ['t'], 0],
        ['w3', ['t'], 0],
      ],
      outcome: '!AllCandidatesRejected',
      message: ALL_CANDIDATES_REJECTED,
      failures: { w1: 0, w2: 1, w3: 1 },
    },
  ])('$name', ({ script, retries, trace, outcome, message, failures }) => {
    const rig = new Rig(THREE, ['t'], { maxTimeoutRetries: retries ?? 1 });
    rig.start();
    rig.runToEnd(scripted(script));
    expect(rig.trace()).toEqual(trace);
    expect(rig.outcomes()).toEqual([outcome]);
    const r = rig.results()[0]!;
    if (message !== undefined && !r.ok) expect(r.error.message).toBe(message);
    for (const [w, n] of Object.entries(failures)) expect(rig.worker(w).recentFailureCount, w).toBe(n);
    expect(Object.values(rig.unsettled()).every((n) => n === 0)).toBe(true);
  });

  it('tries at most maxCandidates workers', () => {
    const rig = new Rig(THREE, ['t'], { core: { maxCandidates: 2 } });
    rig.start();
    rig.runToEnd(() => NO_SLOT);
    expect(rig.trace().map(([w]) => w)).toEqual(['w1', 'w2']);
    expect(rig.outcomes()).toEqual(['!AllCandidatesRejected']);
  });

  it.each([
    ['an empty id', [idle('w1')], '', {}, '!InvalidArgument'],
    ['a 257-byte id', [idle('w1')], 'x'.repeat(257), {}, '!InvalidArgument'],
    ['no view yet', [idle('w1')], 't', { ready: false }, '!Unavailable'],
    ['every heartbeat stale', [idle('w1', 4, { lastHeartbeatMs: T0 - 60_000 })], 't', {}, '!Unavailable'],
    ['no free capacity', [idle('w1', 1, { runningTasks: 1 })], 't', {}, '!NoExecutableSlot'],
  ] as const)('%s: the error at once, no worker asked', (_n, workers, id, opts, outcome) => {
    const rig = new Rig(workers, [id], opts);
    expect(rig.start()).toEqual([]);
    expect(rig.machine.done).toBe(true);
    expect(rig.outcomes()).toEqual([outcome]);
  });

  it('a retained terminal result routes the task there (empty slot id), no new slot counted', () => {
    const rig = new Rig(THREE, ['t']);
    rig.start();
    rig.runToEnd(() => GRANT('', 'TASK_STATE_SUCCEEDED'));
    expect(rig.results()).toEqual([{ ok: true, taskId: 't', workerAddr: 'w1', slotId: '' }]);
    expect(rig.settled.get('w1')).toEqual(['noSlot']);
  });

  it('a grant for a task already RUNNING there is no new slot', () => {
    const rig = new Rig(THREE, ['t']);
    rig.start();
    rig.runToEnd(() => GRANT('s', 'TASK_STATE_RUNNING'));
    expect(rig.settled.get('w1')).toEqual(['noSlot']);
  });

  it('cancelled before sending: the claim is released, SlotUncertain "request cancelled", nobody blamed', () => {
    const rig = new Rig(THREE, ['t']);
    const [cmd] = rig.start();
    rig.feed({ type: 'cancelled', unsent: [cmd!.requestId] });
    expect(rig.outcomes()).toEqual(['!SlotUncertain']);
    const [r] = rig.results();
    expect(!r!.ok && r!.error.message).toBe(REQUEST_CANCELLED);
    expect(rig.settled.get('w1')).toEqual(['noSlot']);
    expect(rig.worker('w1').recentFailureCount).toBe(0);
  });

  it('cancelled with the request in flight: its uncertain answer is not counted, the slot may exist', () => {
    const rig = new Rig(THREE, ['t']);
    const [cmd] = rig.start();
    rig.feed({ type: 'cancelled', unsent: [] });
    expect(rig.machine.done).toBe(false);
    expect(rig.fail(cmd!, UNCERTAIN)).toEqual([]);
    expect(rig.outcomes()).toEqual(['!SlotUncertain']);
    expect(rig.settled.get('w1')).toEqual(['maybeSlot']);
    expect(rig.worker('w1').recentFailureCount).toBe(0);
  });

  it('cancelled: a retry not sent still settles as maybeSlot (the first attempt was sent)', () => {
    const rig = new Rig(THREE, ['t']);
    const [cmd] = rig.start();
    const [retry] = rig.fail(cmd!, UNCERTAIN);
    rig.feed({ type: 'cancelled', unsent: [retry!.requestId] });
    expect(rig.settled.get('w1')).toEqual(['maybeSlot']);
  });

  it('cancelled: a rejection in flight is still recorded, but no further candidate is claimed', () => {
    const rig = new Rig(THREE, ['t']);
    const [cmd] = rig.start();
    rig.feed({ type: 'cancelled', unsent: [] });
    expect(rig.fail(cmd!, INVALID_SLOT)).toEqual([]);
    expect(rig.outcomes()).toEqual(['!SlotUncertain']);
    expect(rig.worker('w1').recentFailureCount).toBe(1);
    expect(rig.claims.get('w2')).toBeUndefined();
  });

  it('internalError: Internal, the slot may exist, the worker is not blamed', () => {
    const rig = new Rig(THREE, ['t']);
    const [cmd] = rig.start();
    rig.feed({ type: 'internalError', requestId: cmd!.requestId });
    expect(rig.outcomes()).toEqual(['!Internal']);
    expect(rig.settled.get('w1')).toEqual(['maybeSlot']);
    expect(rig.worker('w1').recentFailureCount).toBe(0);
  });

  it('abandoned settles every open claim', () => {
    const rig = new Rig(THREE, ['a', 'b', 'c']);
    rig.start();
    rig.feed({ type: 'abandoned' });
    for (const w of ['w1', 'w2', 'w3']) expect(rig.worker(w).pendingClaims).toBe(0);
    expect(Object.values(rig.unsettled()).every((n) => n === 0)).toBe(true);
    expect(() => rig.feed({ type: 'start' })).toThrow(ReservationInputError);
  });

  it('illegal inputs throw ReservationInputError', () => {
    const rig = new Rig(THREE, ['t', 'u']);
    expect(() => rig.feed({ type: 'callFailed', requestId: 1, answer: UNCERTAIN })).toThrow(
      ReservationInputError,
    );
    const [cmd] = rig.start();
    expect(() => rig.start()).toThrow(/start fed twice/);
    expect(() => rig.feed({ type: 'answered', requestId: cmd!.requestId, answers: [GRANT('s')] })).toThrow(
      /asked for 2 ids, got 1 answers/,
    );
    expect(() => rig.feed({ type: 'callFailed', requestId: 99, answer: UNCERTAIN })).toThrow(
      /unknown or already answered request 99/,
    );
    expect(() => new Rig(THREE, ['t']).machine.results()).toThrow(ReservationInputError);
  });
});

describe('ReservationMachine: a batch (ReserveWorkerSlots)', () => {
  it('spreads the batch by free capacity: one request per chosen worker', () => {
    const rig = new Rig([idle('w1', 4), idle('w2', 2)], ['t1', 't2', 't3', 't4', 't5', 't6']);
    // Claims count against free capacity: 4/2 → w1, 3/2 → w1, 2/2 → w1 (tie: smaller address), 1/2 → w2, ...
    expect(rig.start().map((c) => [c.workerAddr, c.taskIds])).toEqual([
      ['w1', ['t1', 't2', 't3', 't5']],
      ['w2', ['t4', 't6']],
    ]);
    rig.runToEnd(ok);
    expect(rig.outcomes()).toEqual(['w1', 'w1', 'w1', 'w2', 'w1', 'w2']);
    expect(rig.worker('w1')).toMatchObject({ pendingClaims: 0 });
    expect(rig.worker('w1').localReservedAtMs).toHaveLength(4);
    expect(rig.worker('w2').localReservedAtMs).toHaveLength(2);
  });

  it('more ids than free slots: the surplus gets NoExecutableSlot without asking anyone', () => {
    const rig = new Rig([idle('w1', 2), idle('w2', 1)], ['a', 'b', 'c', 'd']);
    expect(rig.start()).toHaveLength(2);
    rig.runToEnd(ok);
    // 2/1 free → w1, 1/1 (tie: smaller address) → w1, then w2; nothing is left for d.
    expect(rig.outcomes()).toEqual(['w1', 'w1', 'w2', '!NoExecutableSlot']);
  });

  it('reserves a repeated id once and answers every copy the same', () => {
    const rig = new Rig(THREE, ['a', 'b', 'a', 'a']);
    expect(
      rig
        .start()
        .flatMap((c) => c.taskIds)
        .sort(),
    ).toEqual(['a', 'b']);
    rig.runToEnd(ok);
    const [a1, b, a2, a3] = rig.results();
    expect(a2).toBe(a1);
    expect(a3).toBe(a1);
    expect(b).toMatchObject({ ok: true, taskId: 'b' });
    expect(rig.events.filter((e) => e.type === 'finished')).toHaveLength(2);
  });

  it('validates each id on its own: a bad id is InvalidArgument, the rest are reserved', () => {
    const rig = new Rig(THREE, ['good', '', 'x'.repeat(300)]);
    rig.start();
    rig.runToEnd(ok);
    expect(rig.outcomes()).toEqual(['w1', '!InvalidArgument', '!InvalidArgument']);
  });

  it('not ready: every valid id Unavailable, invalid ones InvalidArgument, nobody asked', () => {
    const rig = new Rig(THREE, ['a', '', 'b'], { ready: false });
    expect(rig.start()).toEqual([]);
    expect(rig.outcomes()).toEqual(['!Unavailable', '!InvalidArgument', '!Unavailable']);
  });

  it('a worker that refuses its ids: they move on to the next candidates in the same step', () => {
    const rig = new Rig([idle('w1', 3), idle('w2', 2), idle('w3', 2)], ['a', 'b', 'c']);
    const first = rig.start();
    expect(first.map((c) => [c.workerAddr, c.taskIds])).toEqual([
      ['w1', ['a', 'b']],
      ['w2', ['c']],
    ]);
    const next = rig.answer(first[0]!, () => NO_SLOT);
    // a and b exclude w1 and spread over w3 (2 free) and w2 (1 free: c's claim is pending).
    expect(next.map((c) => [c.workerAddr, c.taskIds])).toEqual([
      ['w3', ['a']],
      ['w2', ['b']],
    ]);
    rig.runToEnd(ok);
    expect(rig.outcomes()).toEqual(['w3', 'w2', 'w2']);
  });

  it('a hanging worker: its ids are retried there only, then SlotUncertain; the others are reserved', () => {
    const rig = new Rig([idle('w1', 2), idle('w2', 2)], ['a', 'b', 'c', 'd']);
    rig.start();
    rig.runToEnd((id, cmd) => (cmd.workerAddr === 'w1' ? UNCERTAIN : ok(id, cmd)));
    expect(rig.trace()).toEqual([
      ['w1', ['a', 'c'], 0],
      ['w2', ['b', 'd'], 0],
      ['w1', ['a', 'c'], 1],
    ]);
    expect(rig.outcomes()).toEqual(['!SlotUncertain', 'w2', '!SlotUncertain', 'w2']);
    // One failure for the request given up, not one per id.
    expect(rig.worker('w1').recentFailureCount).toBe(1);
    expect(rig.events.filter((e) => e.type === 'gaveUp')).toEqual([
      expect.objectContaining({ workerAddr: 'w1', taskIds: ['a', 'c'], retries: 1 }),
    ]);
  });

  it('breaker accounting: a batch of rejections counts as one failure per request', () => {
    const ids = Array.from({ length: 50 }, (_, i) => `t${i}`);
    const rig = new Rig([idle('w1', 100), idle('w2', 100)], ids, {
      core: { circuitBreakerThreshold: 3, maxCandidates: 1 },
    });
    rig.start();
    rig.runToEnd(() => INVALID_SLOT);
    expect(rig.worker('w1').recentFailureCount).toBe(1);
    expect(rig.worker('w1').circuitBreakerDeadlineMs).toBe(0);
    expect(rig.events.filter((e) => e.type === 'rejected')).toHaveLength(50);
  });

  it('breaker accounting: a request with at least one grant is a success', () => {
    const rig = new Rig([idle('w1', 10)], ['a', 'b', 'c'], { core: { maxCandidates: 1 } });
    rig.core.recordSlotRejection('w1', T0);
    rig.start();
    rig.runToEnd((id) => (id === 'b' ? GRANT('s-b') : INVALID_SLOT));
    expect(rig.outcomes()).toEqual(['!AllCandidatesRejected', 'w1', '!AllCandidatesRejected']);
    expect(rig.worker('w1').recentFailureCount).toBe(0);
  });

  it('a whole-call failure is that outcome for every id: refused → next candidates, one failure', () => {
    const rig = new Rig([idle('w1', 4), idle('w2', 2)], ['a', 'b', 'c']);
    const [toW1] = rig.start();
    expect(toW1!.workerAddr).toBe('w1');
    expect(toW1!.taskIds).toEqual(['a', 'b', 'c']);
    const next = rig.fail(toW1!, REFUSED);
    // w2 has room for two; c finds no other candidate after w1 refused it: all candidates rejected.
    expect(next.map((c) => [c.workerAddr, c.taskIds])).toEqual([['w2', ['a', 'b']]]);
    expect(rig.worker('w1').recentFailureCount).toBe(1);
    rig.runToEnd(ok);
    expect(rig.outcomes()).toEqual(['w2', 'w2', '!AllCandidatesRejected']);
  });

  it('a batch can open the breaker once, and reports it', () => {
    const rig = new Rig([idle('w1', 10), idle('w2', 10)], ['a', 'b'], {
      core: { circuitBreakerThreshold: 1, maxCandidates: 1 },
      maxTimeoutRetries: 0,
    });
    const [cmd] = rig.start();
    rig.fail(cmd!, UNCERTAIN);
    expect(rig.events.filter((e) => e.type === 'breakerOpened')).toEqual([
      { type: 'breakerOpened', workerAddr: 'w1', cause: 'timeout' },
    ]);
  });

  it('cancel mid-batch: pending ids end cancelled, requests in flight are still awaited', () => {
    const rig = new Rig([idle('w1', 2), idle('w2', 2)], ['a', 'b', 'c', 'd']);
    const [toW1, toW2] = rig.start();
    rig.answer(toW1!, ok);
    rig.feed({ type: 'cancelled', unsent: [] });
    expect(rig.machine.done).toBe(false);
    rig.fail(toW2!, UNCERTAIN);
    expect(rig.outcomes()).toEqual(['w1', '!SlotUncertain', 'w1', '!SlotUncertain']);
    expect(rig.worker('w2').recentFailureCount).toBe(0);
    expect(rig.open.size).toBe(0);
  });
});

// ---- properties --------------------------------------------------------------------------------------

type Behaviour = 'grant' | 'running' | 'retained' | 'noSlot' | 'invalid' | 'uncertain' | 'empty';
const answerOf = (b: Behaviour, id: string, w: string): SlotAnswer => {
  switch (b) {
    case 'grant':
      return GRANT(`s-${w}-${id}`);
    case 'running':
      return GRANT(`s-${w}-${id}`, 'TASK_STATE_RUNNING');
    case 'retained':
      return GRANT('', 'TASK_STATE_FAILED');
    case 'noSlot':
      return NO_SLOT;
    case 'invalid':
      return INVALID_SLOT;
    case 'uncertain':
      return UNCERTAIN;
    case 'empty':
      return EMPTY_SLOT;
  }
};
const behaviour = fc.constantFrom<Behaviour>(
  'grant',
  'grant',
  'grant',
  'running',
  'retained',
  'noSlot',
  'invalid',
  'uncertain',
  'empty',
);

/** How the world answers one request. */
const reply = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('perId' as const), answers: fc.array(behaviour) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('callFailed' as const),
      answer: fc.constantFrom(UNCERTAIN, REFUSED, NO_SLOT),
    }),
  },
);

const scenario = fc.record({
  workers: fc.array(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 5 }),
  ids: fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', ''), { minLength: 1, maxLength: 16 }),
  maxCandidates: fc.integer({ min: 1, max: 4 }),
  retries: fc.integer({ min: 0, max: 2 }),
  replies: fc.array(reply, { maxLength: 60 }),
  /** Which open request is answered next. */
  order: fc.array(fc.nat(), { maxLength: 60 }),
  /** After how many answers the Client goes away (undefined: never), and whether the next batch is unsent. */
  cancelAt: fc.option(fc.nat({ max: 30 }), { nil: undefined }),
  cancelUnsent: fc.boolean(),
});

describe('ReservationMachine (properties)', () => {
  it('claims are settled exactly once, no task is granted on two workers or moved after an uncertain answer', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const fleet = s.workers.map((slots, i) => idle(`w${i}`, slots));
        const rig = new Rig(fleet, s.ids, {
          core: { maxCandidates: s.maxCandidates },
          maxTimeoutRetries: s.retries,
        });
        let fresh = rig.start();
        const grantedOn = new Map<string, Set<string>>();
        const uncertainOn = new Map<string, string>();
        let answered = 0;
        for (let step = 0; rig.open.size > 0; step++) {
          expect(step).toBeLessThan(1_000);
          // Each id is in at most one open request, and a request names each id once.
          const openIds = [...rig.open.values()].flatMap((c) => [...c.taskIds]);
          expect(new Set(openIds).size).toBe(openIds.length);
          if (s.cancelAt === answered && !rig.machine.cancelled) {
            const unsent = s.cancelUnsent ? fresh.map((c) => c.requestId) : [];
            for (const id of unsent) rig.open.delete(id);
            fresh = rig.feed({ type: 'cancelled', unsent });
            expect(fresh).toEqual([]);
            continue;
          }
          const list = [...rig.open.values()];
          const cmd = list[(s.order[step] ?? 0) % list.length]!;
          const r = s.replies[step] ?? { kind: 'perId' as const, answers: [] };
          const answerFor = (id: string, i: number): SlotAnswer =>
            r.kind === 'callFailed' ? r.answer : answerOf(r.answers[i] ?? 'grant', id, cmd.workerAddr);
          cmd.taskIds.forEach((id, i) => {
            const prev = uncertainOn.get(id);
            if (prev !== undefined) expect(cmd.workerAddr, `${id} moved after uncertain`).toBe(prev);
            const a = answerFor(id, i);
            if (a.type === 'granted' && (a.slotId !== '' || a.state === 'TASK_STATE_FAILED')) {
              grantedOn.set(id, new Set([...(grantedOn.get(id) ?? []), cmd.workerAddr]));
            }
            if (
              a.type === 'uncertain' ||
              (a.type === 'granted' && a.slotId === '' && a.state !== 'TASK_STATE_FAILED')
            ) {
              uncertainOn.set(id, cmd.workerAddr);
            } else if (a.type === 'rejected') {
              uncertainOn.delete(id); // an explicit rejection during retries frees the task again
            }
          });
          fresh =
            r.kind === 'callFailed'
              ? rig.fail(cmd, r.answer)
              : rig.answer(cmd, (id) => answerFor(id, cmd.taskIds.indexOf(id)));
          answered++;
        }
        expect(rig.machine.done).toBe(true);
        // Every claim settled exactly once, nothing pending anywhere.
        for (const [w, n] of Object.entries(rig.unsettled())) expect(n, w).toBe(0);
        for (const w of fleet) expect(rig.worker(w.workerAddr).pendingClaims).toBe(0);
        const results = rig.results();
        expect(results).toHaveLength(s.ids.length);
        s.ids.forEach((id, i) => {
          const res = results[i]!;
          expect(results[s.ids.indexOf(id)]).toBe(res); // duplicates answered the same
          if (id === '') expect(!res.ok && res.error.code).toBe('InvalidArgument');
          expect(rig.machine.candidatesTriedOf(id)).toBeLessThanOrEqual(s.maxCandidates);
          const granted = grantedOn.get(id) ?? new Set<string>();
          expect(granted.size, `${id} granted on ${[...granted].join(',')}`).toBeLessThanOrEqual(1);
          if (res.ok) expect(granted.has(res.workerAddr)).toBe(true);
        });
      }),
      { numRuns: 400 },
    );
  });

  it('a batch over idle equal workers that all grant spreads within ±1 and never past free capacity', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 60 }),
        (k, slots, n) => {
          const fleet = Array.from({ length: k }, (_, i) => idle(`w${i}`, slots));
          const ids = Array.from({ length: n }, (_, i) => `t${i}`);
          const rig = new Rig(fleet, ids);
          const cmds = rig.start();
          expect(cmds.length).toBeLessThanOrEqual(k); // one request per chosen Worker
          rig.runToEnd(ok);
          const per = fleet.map(
            (w) => rig.results().filter((r) => r.ok && r.workerAddr === w.workerAddr).length,
          );
          expect(Math.max(...per) - Math.min(...per)).toBeLessThanOrEqual(1);
          expect(Math.max(...per)).toBeLessThanOrEqual(slots);
          expect(per.reduce((a, b) => a + b, 0)).toBe(Math.min(n, k * slots));
        },
      ),
      { numRuns: 300 },
    );
  });
});
