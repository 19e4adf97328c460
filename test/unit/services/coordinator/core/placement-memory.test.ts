// One execution per task id (placement-memory.ts, docs/placement.md § One execution per task id): a task
// id the core claimed a Worker for goes back to that Worker — whatever the policy would pick — while it is
// alive and not tried by the request; scenarios on virtual time, and a property over random fleets.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CoordinatorCore } from '../../../../../src/services/coordinator/core/coordinator-core.js';
import { ReservationMachine } from '../../../../../src/services/coordinator/core/reservation.js';
import { PlacementMemory } from '../../../../../src/services/coordinator/core/placement-memory.js';
import { coreWith, hb } from './fixtures.js';
import { GRANT, Rig, idle } from './reservation-harness.js';

const NOW = 50_000;
const RETENTION = 300_000; // DEFAULT placementMemoryMs

const claim = (core: CoordinatorCore, taskId: string, now: number, exclude: string[] = []): string => {
  const r = core.claimCandidate(taskId, exclude, now);
  return r.ok ? r.workerAddr : `!${r.error.code}`;
};

/** A heartbeat showing `addr` with two tasks running. */
const busier = (c: CoordinatorCore, addr: string): void =>
  c.applyWorkerUpdate(hb(addr, { runningTasks: 2, lastHeartbeatMs: NOW + 1 }), NOW + 1);

/** `a` and `b`, both 4 slots and idle; the policy's first pick is `a` (tie: smaller address). */
function twoWorkers(over: Parameters<typeof coreWith>[1] = {}): CoordinatorCore {
  return coreWith(
    [hb('a', { lastHeartbeatMs: NOW }), hb('b', { lastHeartbeatMs: NOW })],
    { heartbeatTimeoutMs: 400_000, watchGracePeriodMs: 400_000, ...over },
    NOW,
  );
}

describe('a task id goes back to the Worker it was placed on', () => {
  // `t` is claimed on `a` at NOW and settled with a slot; then `then`; `want` is where `t` goes at `at`.
  const cases: Array<{ name: string; then?: (c: CoordinatorCore) => void; at?: number; want: string }> = [
    { name: 'though `b` now has more free capacity', want: 'a' },
    {
      name: 'though `a` is full by its heartbeat (it answers a duplicate without a new slot)',
      then: (c) => c.applyWorkerUpdate(hb('a', { runningTasks: 4, lastHeartbeatMs: NOW + 1 }), NOW + 1),
      want: 'a',
    },
    {
      name: 'though `a` is over its cpu red line',
      then: (c) => c.applyWorkerUpdate(hb('a', { cpuPercent: 0.99, lastHeartbeatMs: NOW + 1 }), NOW + 1),
      want: 'a',
    },
    { name: 'exactly at the retention', then: (c) => busier(c, 'a'), at: NOW + RETENTION, want: 'a' },
    {
      name: 'not past the retention: the policy decides',
      then: (c) => busier(c, 'a'),
      at: NOW + RETENTION + 1,
      want: 'b',
    },
    {
      name: 'not once its breaker is open',
      then: (c) => {
        for (let i = 0; i < 3; i++) c.recordSlotRejection('a', NOW + 1);
      },
      want: 'b',
    },
    {
      name: 'not once its heartbeat timed out',
      then: (c) => c.applyWorkerUpdate(hb('b', { lastHeartbeatMs: NOW + 390_000 }), NOW + 390_000),
      at: NOW + 390_000,
      want: 'b',
    },
    {
      name: 'not once it left the registry',
      then: (c) => c.applyWorkerRemoval('a', NOW + 1),
      want: 'b',
    },
  ];
  it.each(cases)('$name', ({ then, at = NOW + 2, want }) => {
    const core = twoWorkers();
    expect(claim(core, 't', NOW)).toBe('a');
    core.settleClaim('a', 'slot', NOW);
    then?.(core);
    expect(claim(core, 't', at)).toBe(want);
  });

  it('a duplicate arriving while the first request is in flight follows it', () => {
    const core = twoWorkers();
    expect(claim(core, 't', NOW)).toBe('a'); // pending: a now looks less free than b
    expect(claim(core, 'other', NOW)).toBe('b');
    expect(claim(core, 't', NOW)).toBe('a');
  });

  it('a request that tried the Worker already moves on, and the new Worker is remembered', () => {
    const core = twoWorkers();
    expect(claim(core, 't', NOW)).toBe('a');
    core.settleClaim('a', 'noSlot', NOW);
    expect(claim(core, 't', NOW + 1, ['a'])).toBe('b');
    core.settleClaim('b', 'slot', NOW + 1);
    expect(claim(core, 't', NOW + 2)).toBe('b');
  });

  it('under affinity the remembered Worker wins over the hash too', () => {
    const core = twoWorkers({ placement: 'affinity' });
    const first = claim(core, 't', NOW);
    const other = first === 'a' ? 'b' : 'a';
    core.settleClaim(first, 'noSlot', NOW);
    expect(claim(core, 't', NOW + 1, [first])).toBe(other);
    expect(claim(core, 't', NOW + 2)).toBe(other);
  });

  it('off with placementMemoryMs 0: the policy decides every time', () => {
    const core = twoWorkers({ placementMemoryMs: 0 });
    expect(claim(core, 't', NOW)).toBe('a');
    expect(claim(core, 't', NOW)).toBe('b');
    expect(core.rememberedPlacements).toBe(0);
  });

  it('two reservations of one id through the machine land on one Worker', () => {
    const first = new Rig([idle('a', 4), idle('b', 4)], ['t1', 't2', 't3']);
    first.start();
    first.runToEnd((id) => GRANT(`s-${id}`));
    const placed = first.outcomes();
    // A second machine on the same core, as a client retrying: every id goes where it went.
    const machine2 = new ReservationMachine(first.core, ['t3', 't1', 't2'], { maxTimeoutRetries: 1 });
    const step = machine2.apply({ type: 'start', now: first.now + 1 });
    const sentTo = new Map(step.commands.flatMap((c) => c.taskIds.map((id) => [id, c.workerAddr])));
    expect(['t1', 't2', 't3'].map((id) => sentTo.get(id))).toEqual(placed);
  });
});

describe('PlacementMemory bounds', () => {
  it('keeps at most maxEntries, forgetting the oldest first; a write refreshes an id', () => {
    const m = new PlacementMemory(1_000, 2);
    m.remember('x', 'a', 0);
    m.remember('y', 'b', 1);
    m.remember('x', 'c', 2); // refreshed: y is now the oldest
    m.remember('z', 'a', 3);
    expect([m.workerOf('x', 3), m.workerOf('y', 3), m.workerOf('z', 3), m.size]).toEqual([
      'c',
      undefined,
      'a',
      2,
    ]);
  });

  it('cuts expired entries on the next write', () => {
    const m = new PlacementMemory(10, 100);
    for (let i = 0; i < 5; i++) m.remember(`t${i}`, 'a', i);
    m.remember('late', 'b', 20);
    expect(m.size).toBe(1);
  });
});

describe('one Worker per task id (property)', () => {
  // Random ids claimed and re-claimed over a fleet whose load changes by heartbeat: while the fleet stays
  // routable, every claim of an id lands where its first claim did.
  it('a re-claimed id always lands on its first Worker while that Worker is routable', () => {
    const action = fc.oneof(
      fc.record({ kind: fc.constant('claim' as const), id: fc.integer({ min: 0, max: 20 }) }),
      fc.record({
        kind: fc.constant('load' as const),
        addr: fc.constantFrom('a', 'b', 'c'),
        running: fc.integer({ min: 0, max: 8 }),
        cpu: fc.constantFrom(0.1, 0.95),
      }),
      fc.record({ kind: fc.constant('settle' as const), result: fc.constantFrom('slot', 'noSlot') }),
    );
    fc.assert(
      fc.property(fc.array(action, { minLength: 1, maxLength: 200 }), (actions) => {
        let now = NOW;
        const core = coreWith(
          ['a', 'b', 'c'].map((addr) => hb(addr, { taskSlots: 8, lastHeartbeatMs: now })),
          {},
          now,
        );
        const first = new Map<number, string>();
        const open: string[] = [];
        for (const a of actions) {
          now += 1;
          if (a.kind === 'load') {
            core.applyWorkerUpdate(
              hb(a.addr, { taskSlots: 8, runningTasks: a.running, cpuPercent: a.cpu, lastHeartbeatMs: now }),
              now,
            );
          } else if (a.kind === 'settle') {
            const addr = open.shift();
            if (addr !== undefined) core.settleClaim(addr, a.result, now);
          } else {
            const got = claim(core, `t${a.id}`, now);
            const want = first.get(a.id);
            if (want !== undefined) expect(got).toBe(want);
            else if (!got.startsWith('!')) first.set(a.id, got);
            if (!got.startsWith('!')) open.push(got);
          }
        }
      }),
      { numRuns: 200 },
    );
  });
});
