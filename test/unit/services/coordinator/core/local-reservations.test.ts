// The local reservation adjustment (worker-view.ts, docs/placement.md): between heartbeats the core counts
// its own claims and reservations against a Worker's free capacity, so a burst spreads, and forgets each
// one exactly when a heartbeat taken after it (or one slot TTL) has passed.
import { describe, expect, it } from 'vitest';
import type { ClaimResult } from '../../../../../src/services/coordinator/core/inputs.js';
import type { CoordinatorCore } from '../../../../../src/services/coordinator/core/coordinator-core.js';
import { coreWith, hb } from './fixtures.js';

const NOW = 50_000;
const TTL = 5_000; // DEFAULT slotTtlMs

/** Claims for `n` distinct tasks at `now`, settling each with `result` (or leaving it pending). */
function burst(core: CoordinatorCore, n: number, now: number, result?: ClaimResult): string[] {
  const got: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = core.claimCandidate(`t${i}`, [], now);
    got.push(r.ok ? r.workerAddr : `!${r.error.code}`);
    if (r.ok && result !== undefined) core.settleClaim(r.workerAddr, result, now);
  }
  return got;
}

const tally = (addrs: string[]): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const a of addrs) out[a] = (out[a] ?? 0) + 1;
  return out;
};

describe('a burst of reservations between heartbeats', () => {
  it.each([
    { name: 'pending claims', result: undefined },
    { name: 'settled with a slot', result: 'slot' as const },
    { name: 'settled uncertain', result: 'maybeSlot' as const },
  ])('$name: 64 over two idle 64-slot Workers → 32 each', ({ result }) => {
    const core = coreWith([
      hb('a', { taskSlots: 64, lastHeartbeatMs: NOW }),
      hb('b', { taskSlots: 64, lastHeartbeatMs: NOW }),
    ]);
    expect(tally(burst(core, 64, NOW + 1, result))).toEqual({ a: 32, b: 32 });
  });

  it('claims settled without a slot give the capacity back', () => {
    const core = coreWith([hb('a', { taskSlots: 2, lastHeartbeatMs: NOW })]);
    expect(burst(core, 5, NOW, 'noSlot')).toEqual(['a', 'a', 'a', 'a', 'a']);
  });

  it('never hands out more than the free capacity: then NoExecutableSlot naming the full Workers', () => {
    const core = coreWith([
      hb('a', { taskSlots: 3, runningTasks: 1, lastHeartbeatMs: NOW }),
      hb('b', { taskSlots: 1, lastHeartbeatMs: NOW }),
    ]);
    const got = burst(core, 5, NOW, 'slot');
    expect(tally(got)).toEqual({ a: 2, b: 1, '!NoExecutableSlot': 2 });
    const r = core.selectCandidate('t', [], NOW);
    expect(r.ok ? '' : r.error.message).toBe('no executable slot: 2 workers — no free slots on 2 workers');
  });

  it('a larger Worker takes more of the burst, by free capacity', () => {
    const core = coreWith([
      hb('big', { taskSlots: 30, lastHeartbeatMs: NOW }),
      hb('small', { taskSlots: 10, lastHeartbeatMs: NOW }),
    ]);
    // After 20 on big, both have 10 free; the remaining 20 alternate.
    expect(tally(burst(core, 40, NOW, 'slot'))).toEqual({ big: 30, small: 10 });
  });
});

describe('when an adjustment is forgotten', () => {
  // One slot reserved on `a` at NOW (a has 2 slots, b has 1), then an event; `want` is the free capacity
  // of `a` that the core reports afterwards.
  const cases: Array<{
    name: string;
    then: (core: CoordinatorCore) => void;
    at?: number;
    want: number;
  }> = [
    { name: 'nothing happens: still counted', then: () => {}, want: 1 },
    {
      name: 'a heartbeat taken after the grant, showing it, replaces it',
      then: (c) =>
        c.applyWorkerUpdate(hb('a', { taskSlots: 2, reservedSlots: 1, lastHeartbeatMs: NOW + 1 }), NOW + 2),
      at: NOW + 2,
      want: 1,
    },
    {
      name: 'a heartbeat taken after the grant, slot already gone, clears it',
      then: (c) => c.applyWorkerUpdate(hb('a', { taskSlots: 2, lastHeartbeatMs: NOW + 1 }), NOW + 2),
      at: NOW + 2,
      want: 2,
    },
    {
      name: 'a heartbeat taken before the grant but received after it keeps it',
      then: (c) => c.applyWorkerUpdate(hb('a', { taskSlots: 2, lastHeartbeatMs: NOW - 50 }), NOW + 2),
      at: NOW + 2,
      want: 1,
    },
    {
      name: 'a heartbeat taken in the same millisecond keeps it (it may predate the grant)',
      then: (c) => c.applyWorkerUpdate(hb('a', { taskSlots: 2, lastHeartbeatMs: NOW }), NOW + 2),
      at: NOW + 2,
      want: 1,
    },
    {
      name: 'a full list taken before keeps it',
      then: (c) =>
        c.applyFullWorkerList(
          [
            hb('a', { taskSlots: 2, lastHeartbeatMs: NOW - 1 }),
            hb('b', { taskSlots: 1, lastHeartbeatMs: NOW }),
          ],
          NOW + 3,
        ),
      at: NOW + 3,
      want: 1,
    },
    {
      name: 'a full list taken after clears it',
      then: (c) =>
        c.applyFullWorkerList(
          [
            hb('a', { taskSlots: 2, lastHeartbeatMs: NOW + 1 }),
            hb('b', { taskSlots: 1, lastHeartbeatMs: NOW }),
          ],
          NOW + 3,
        ),
      at: NOW + 3,
      want: 2,
    },
    { name: 'exactly one slot TTL later: still counted', then: () => {}, at: NOW + TTL, want: 1 },
    { name: 'one millisecond past the TTL: expired', then: () => {}, at: NOW + TTL + 1, want: 2 },
    {
      name: 'removed and re-registered: starts from zero',
      then: (c) => {
        c.applyWorkerRemoval('a', NOW + 1);
        c.applyWorkerUpdate(hb('a', { taskSlots: 2, lastHeartbeatMs: NOW - 5 }), NOW + 1);
      },
      at: NOW + 1,
      want: 2,
    },
  ];
  it.each(cases)('$name', ({ then, at = NOW, want }) => {
    const core = coreWith([
      hb('a', { taskSlots: 2, lastHeartbeatMs: NOW - 10 }),
      hb('b', { taskSlots: 1, lastHeartbeatMs: NOW - 10 }),
    ]);
    const r = core.claimCandidate('t1', [], NOW);
    expect(r).toEqual({ ok: true, workerAddr: 'a' });
    core.settleClaim('a', 'slot', NOW);
    then(core);
    const row = core.workersSnapshot(at).find((w) => w.workerAddr === 'a');
    expect(row?.freeSlots).toBe(want);
  });

  it('a pending claim survives heartbeats until it is settled', () => {
    const core = coreWith([hb('a', { taskSlots: 1, lastHeartbeatMs: NOW })]);
    expect(core.claimCandidate('t1', [], NOW)).toEqual({ ok: true, workerAddr: 'a' });
    core.applyWorkerUpdate(hb('a', { taskSlots: 1, lastHeartbeatMs: NOW + 100 }), NOW + 100);
    expect(core.selectCandidate('t2', [], NOW + 100).ok).toBe(false);
    core.settleClaim('a', 'noSlot', NOW + 101);
    expect(core.selectCandidate('t2', [], NOW + 101)).toEqual({ ok: true, workerAddr: 'a' });
    // Settling twice (or for an unknown Worker) never goes below zero.
    core.settleClaim('a', 'noSlot', NOW + 102);
    core.settleClaim('zz', 'slot', NOW + 102);
    expect(core.getWorker('a')?.pendingClaims).toBe(0);
  });

  it('shows the adjustment in the status reason of a full Worker', () => {
    const core = coreWith([hb('a', { taskSlots: 2, reservedSlots: 1, lastHeartbeatMs: NOW })]);
    burst(core, 1, NOW + 1, 'slot');
    const status = core.workersSnapshot(NOW + 1)[0];
    expect(status).toMatchObject({ freeSlots: 0, usedSlots: 2 });
  });

  it('keeps the list ordered when the clock steps back', () => {
    const core = coreWith([hb('a', { taskSlots: 9, lastHeartbeatMs: NOW - 100 })]);
    for (const t of [NOW, NOW - 20, NOW + 5]) {
      core.claimCandidate('t', [], t);
      core.settleClaim('a', 'slot', t);
    }
    expect(core.getWorker('a')?.localReservedAtMs).toEqual([NOW - 20, NOW, NOW + 5]);
    core.applyWorkerUpdate(hb('a', { taskSlots: 9, lastHeartbeatMs: NOW + 1 }), NOW + 6);
    expect(core.getWorker('a')?.localReservedAtMs).toEqual([NOW + 5]);
  });
});

describe('claimSettled as an input value', () => {
  it('apply() dispatches it like settleClaim', () => {
    const core = coreWith([hb('a', { taskSlots: 1, lastHeartbeatMs: NOW })]);
    core.claimCandidate('t', [], NOW);
    core.apply({ type: 'claimSettled', workerAddr: 'a', result: 'slot', now: NOW });
    expect(core.getWorker('a')).toMatchObject({ pendingClaims: 0, localReservedAtMs: [NOW] });
    expect(() =>
      core.apply({ type: 'claimSettled', workerAddr: 'a', result: 'bogus' as ClaimResult, now: NOW }),
    ).toThrow(/unknown claim result/);
  });
});
