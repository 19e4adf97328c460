// Capacity reports (docs/placement.md § Capacity from the Workers' answers): a Worker's answer to
// RequestTaskSlot(s) carries its slot counts, which replace the heartbeat's when newer and drop the local
// reservations they reflect, so placement keeps an exact view while no heartbeat arrives (etcd down).
// Scenarios on virtual time, a table of reports against one local reservation, the reservation machine's
// use of them, and a property over an outage: with reports, a fleet that has room is never refused.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CapacityReport } from '../../../../../src/services/coordinator/core/inputs.js';
import type { CoordinatorCore } from '../../../../../src/services/coordinator/core/coordinator-core.js';
import { coreWith, hb } from './fixtures.js';
import { GRANT, NO_SLOT, Rig, T0, idle } from './reservation-harness.js';

const NOW = 50_000;
const TTL = 5_000; // DEFAULT slotTtlMs

const report = (over: Partial<CapacityReport> = {}): CapacityReport => ({
  taskSlots: 2,
  reservedSlots: 0,
  runningTasks: 0,
  reclaimableSlots: 0,
  takenAtMs: NOW + 1,
  ...over,
});

const freeOf = (core: CoordinatorCore, addr: string, at: number): number | undefined =>
  core.workersSnapshot(at).find((w) => w.workerAddr === addr)?.freeSlots;

describe('a capacity report against one local reservation', () => {
  // `a` (2 slots, heartbeat at NOW - 10) got one slot at NOW; then `then`; `want` is a's free capacity.
  const cases: Array<{ name: string; then: (c: CoordinatorCore) => unknown; at?: number; want: number }> = [
    { name: 'no report: the reservation counts', then: () => {}, want: 1 },
    {
      name: 'taken after the grant, showing it reserved: counted once, not twice',
      then: (c) => c.applyCapacityReport('a', report({ reservedSlots: 1 }), NOW + 2),
      want: 1,
    },
    {
      name: 'taken after the grant, the task already done: all free again',
      then: (c) => c.applyCapacityReport('a', report(), NOW + 2),
      want: 2,
    },
    {
      name: 'taken after the grant, now running two (another client submitted directly): full',
      then: (c) => c.applyCapacityReport('a', report({ runningTasks: 2 }), NOW + 2),
      want: 0,
    },
    {
      name: 'taken before the grant, received after: the reservation stays on top of it',
      then: (c) => c.applyCapacityReport('a', report({ takenAtMs: NOW - 5 }), NOW + 2),
      want: 1,
    },
    {
      name: 'older than the heartbeat already applied: ignored',
      then: (c) => c.applyCapacityReport('a', report({ runningTasks: 2, takenAtMs: NOW - 20 }), NOW + 2),
      want: 1,
    },
    {
      name: 'a report older than the last report is ignored (answers out of order)',
      then: (c) => {
        c.applyCapacityReport('a', report({ takenAtMs: NOW + 5 }), NOW + 6);
        expect(c.applyCapacityReport('a', report({ runningTasks: 2, takenAtMs: NOW + 3 }), NOW + 7)).toBe(
          false,
        );
      },
      at: NOW + 7,
      want: 2,
    },
    {
      name: 'a heartbeat is always taken, even stamped before the last report (a clock stepped back)',
      then: (c) => {
        c.applyCapacityReport('a', report({ takenAtMs: NOW + 5 }), NOW + 6);
        c.applyWorkerUpdate(
          hb('a', { taskSlots: 2, runningTasks: 1, lastHeartbeatMs: NOW - 3_000 }),
          NOW + 7,
        );
        // ...and reports stamped by the stepped-back clock are taken again after it.
        c.applyCapacityReport('a', report({ takenAtMs: NOW - 2_990 }), NOW + 8);
      },
      at: NOW + 8,
      want: 2,
    },
    {
      name: 'a heartbeat taken after the report replaces its counts',
      then: (c) => {
        c.applyCapacityReport('a', report({ takenAtMs: NOW + 5 }), NOW + 6);
        c.applyWorkerUpdate(hb('a', { taskSlots: 2, runningTasks: 2, lastHeartbeatMs: NOW + 9 }), NOW + 10);
      },
      at: NOW + 10,
      want: 0,
    },
    {
      name: 'a report for a Worker not in the view changes nothing',
      then: (c) => expect(c.applyCapacityReport('zz', report(), NOW + 2)).toBe(false),
      want: 1,
    },
  ];
  it.each(cases)('$name', ({ then, at = NOW + 2, want }) => {
    const core = coreWith([hb('a', { taskSlots: 2, lastHeartbeatMs: NOW - 10 })], {}, NOW - 10);
    expect(core.claimCandidate('t1', [], NOW)).toEqual({ ok: true, workerAddr: 'a' });
    core.settleClaim('a', 'slot', NOW);
    then(core);
    expect(freeOf(core, 'a', at)).toBe(want);
  });

  it('keeps the heartbeat liveness: a report never makes a timed-out Worker routable', () => {
    const core = coreWith([hb('a', { taskSlots: 2, lastHeartbeatMs: NOW - 10 })], {}, NOW - 10);
    core.applyCapacityReport('a', report({ takenAtMs: NOW + 20_000 }), NOW + 20_000);
    const r = core.selectCandidate('t', [], NOW + 20_000);
    expect(r.ok ? r.workerAddr : r.error.code).toBe('Unavailable');
  });

  it.each([
    [{ runningTasks: -1 }, /runningTasks must be a non-negative integer/],
    [{ taskSlots: 1.5 }, /taskSlots must be a non-negative integer/],
    [{ takenAtMs: Number.NaN }, /takenAtMs must be finite/],
  ])('refuses an illegal report %o as InvalidArgument', (over, message) => {
    const core = coreWith([hb('a')]);
    let err: unknown;
    try {
      core.apply({ type: 'capacityReported', workerAddr: 'a', report: report(over), now: NOW });
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: 'InvalidArgument', message: expect.stringMatching(message) });
  });
});

describe('the reservation machine with reports', () => {
  it('grants answered with a report leave no local reservation; the report holds them', () => {
    const rig = new Rig([idle('a', 4), idle('b', 4)], ['t1', 't2', 't3', 't4']);
    const [toA, toB] = rig.start();
    expect([toA!.taskIds.length, toB!.taskIds.length]).toEqual([2, 2]);
    rig.open.delete(toA!.requestId);
    rig.feed({
      type: 'answered',
      requestId: toA!.requestId,
      answers: toA!.taskIds.map((id) => GRANT(`s-${id}`)),
      capacity: { taskSlots: 4, reservedSlots: 2, runningTasks: 1, reclaimableSlots: 0, takenAtMs: T0 + 2 },
    });
    expect(rig.worker('a')).toMatchObject({ reservedSlots: 2, runningTasks: 1, localReservedAtMs: [] });
    expect(rig.settled.get('a')).toEqual(['noSlot', 'noSlot']);
    // Without a report the grants count as local reservations, as before.
    rig.answer(toB!, (id) => GRANT(`s-${id}`));
    expect(rig.worker('b').localReservedAtMs).toHaveLength(2);
    expect(rig.outcomes()).toEqual(['a', 'b', 'a', 'b']);
    expect(rig.unsettled()).toEqual({ a: 0, b: 0 });
  });

  it('a refused batch still brings its report: a Worker freed since looks free again', () => {
    const rig = new Rig([idle('a', 2, { runningTasks: 1 })], ['t1', 't2']);
    const [cmd] = rig.start();
    expect(cmd!.taskIds).toEqual(['t1']);
    rig.open.delete(cmd!.requestId);
    rig.feed({
      type: 'answered',
      requestId: cmd!.requestId,
      answers: [NO_SLOT],
      capacity: { taskSlots: 2, reservedSlots: 0, runningTasks: 0, reclaimableSlots: 0, takenAtMs: T0 + 2 },
    });
    expect(rig.core.workersSnapshot(rig.now)[0]?.freeSlots).toBe(2);
  });
});

// An etcd outage on virtual time: Workers with real slot tables, one Coordinator core, no heartbeat after
// the first. Tasks take a slot when granted and end after a random time. Each reservation asks the
// chosen Worker, which grants if it has room and answers with its counts (or, `withReports: false`,
// without them: the behaviour before). Property: with reports the core never answers NoExecutableSlot
// while the fleet has a free slot; without them it does within a few hundred reservations (the bug).
interface SimWorker {
  readonly addr: string;
  readonly slots: number;
  readonly endsAt: number[];
}

function simulateOutage(
  ops: ReadonlyArray<{ readonly advanceMs: number; readonly durationMs: number }>,
  withReports: boolean,
): { refusedWithRoom: number; placed: number } {
  const workers: SimWorker[] = ['a', 'b', 'c'].map((addr) => ({ addr, slots: 4, endsAt: [] }));
  let now = NOW;
  const core = coreWith(
    workers.map((w) => hb(w.addr, { taskSlots: w.slots, lastHeartbeatMs: now })),
    {},
    now,
  );
  core.markWatchDisconnected(now);
  let refusedWithRoom = 0;
  let placed = 0;
  let seq = 0;
  for (const op of ops) {
    now += op.advanceMs;
    for (const w of workers) w.endsAt.splice(0, w.endsAt.length, ...w.endsAt.filter((t) => t > now));
    const fleetHasRoom = workers.some((w) => w.endsAt.length < w.slots);
    const tried: string[] = [];
    for (;;) {
      const pick = core.claimCandidate(`t${seq++}`, tried, now);
      if (!pick.ok) {
        if (fleetHasRoom) refusedWithRoom++;
        break;
      }
      const w = workers.find((x) => x.addr === pick.workerAddr)!;
      const granted = w.endsAt.length < w.slots;
      if (granted) w.endsAt.push(now + op.durationMs);
      // The grant is submitted at once: it is a running task by the time the report is read.
      core.settleClaim(w.addr, granted && !withReports ? 'slot' : 'noSlot', now);
      if (withReports) {
        const counts = { taskSlots: w.slots, reservedSlots: 0, runningTasks: w.endsAt.length };
        core.applyCapacityReport(w.addr, { ...counts, reclaimableSlots: 0, takenAtMs: now }, now);
      }
      if (granted) {
        placed++;
        break;
      }
      tried.push(w.addr);
    }
  }
  return { refusedWithRoom, placed };
}

describe('an etcd outage shorter than the grace (property)', () => {
  const op = fc.record({
    advanceMs: fc.integer({ min: 0, max: 40 }),
    durationMs: fc.integer({ min: 1, max: 400 }),
  });

  it('with reports, a fleet with a free slot is never refused', () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 300 }), (ops) => {
        // The whole run stays within the watch grace (10 s by default): at most 300 × 40 ms.
        expect(simulateOutage(ops, true).refusedWithRoom).toBe(0);
      }),
      { numRuns: 200 },
    );
  });

  it('without reports the same load is refused while the fleet has room (the regression)', () => {
    const ops = Array.from({ length: 300 }, () => ({ advanceMs: 10, durationMs: 50 }));
    const { refusedWithRoom, placed } = simulateOutage(ops, false);
    expect(refusedWithRoom).toBeGreaterThan(100);
    expect(placed).toBeLessThan(300 - 100);
    expect(simulateOutage(ops, true)).toEqual({ refusedWithRoom: 0, placed: 300 });
  });

  it('a grant is forgotten after one TTL without reports, as before', () => {
    const core = coreWith([hb('a', { taskSlots: 1, lastHeartbeatMs: NOW })], {}, NOW);
    core.claimCandidate('t', [], NOW);
    core.settleClaim('a', 'slot', NOW);
    expect(freeOf(core, 'a', NOW + TTL)).toBe(0);
    expect(freeOf(core, 'a', NOW + TTL + 1)).toBe(1);
  });
});
