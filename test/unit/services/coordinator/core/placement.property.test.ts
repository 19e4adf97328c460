// Properties of the local reservation adjustment (worker-view.ts, docs/placement.md), on virtual time:
//   1. N reservations against k idle Workers with equal slots spread within ±1, however they interleave
//      with settling and with heartbeats taken before them (which must not erase the adjustment);
//   2. against Workers whose heartbeats are exact snapshots delivered late, the view never hands out a
//      claim that the Worker would have to refuse for want of a slot (held + in flight <= taskSlots);
//   3. affinity: the same task id gets the same Worker while the routable set is unchanged.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CoordinatorCore } from '../../../../../src/services/coordinator/core/coordinator-core.js';
import { DEFAULT_COORDINATOR_CORE_CONFIG } from '../../../../../src/services/coordinator/core/config.js';
import { hb } from './fixtures.js';

const T0 = 100_000;
const addr = (i: number) => `10.0.0.${i}:9090`;

describe('local reservations (property)', () => {
  it('N reservations over k idle equal Workers spread within ±1', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 16 }),
        fc.array(fc.constantFrom('claim', 'claim', 'settle', 'staleHeartbeat', 'tick'), {
          minLength: 1,
          maxLength: 120,
        }),
        (k, slots, steps) => {
          const core = new CoordinatorCore(DEFAULT_COORDINATOR_CORE_CONFIG);
          const fleet = Array.from({ length: k }, (_, i) =>
            hb(addr(i), { taskSlots: slots, lastHeartbeatMs: T0 }),
          );
          core.applyFullWorkerList(fleet, T0);
          let now = T0;
          const counts = new Map<string, number>();
          const open: string[] = [];
          let next = 0;
          for (const s of steps) {
            if (s === 'claim') {
              const r = core.claimCandidate(`t${next++}`, [], now);
              if (r.ok) {
                counts.set(r.workerAddr, (counts.get(r.workerAddr) ?? 0) + 1);
                open.push(r.workerAddr);
              } else {
                expect(r.error.code).toBe('NoExecutableSlot');
                expect([...counts.values()].reduce((a, b) => a + b, 0)).toBe(k * slots);
              }
            } else if (s === 'settle' && open.length > 0) {
              core.settleClaim(open.shift()!, 'slot', now);
            } else if (s === 'staleHeartbeat') {
              // Taken at T0, before every reservation, received now: it changes nothing.
              core.applyWorkerUpdate(fleet[next % k]!, now);
            } else if (s === 'tick') {
              now += 7;
            }
            const values = Array.from({ length: k }, (_, i) => counts.get(addr(i)) ?? 0);
            expect(Math.max(...values) - Math.min(...values)).toBeLessThanOrEqual(1);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('never hands out a claim the Worker has no slot for, with exact heartbeats delivered late', () => {
    const step = fc.oneof(
      { weight: 4, arbitrary: fc.constant({ kind: 'claim' as const }) },
      { weight: 3, arbitrary: fc.record({ kind: fc.constant('settle' as const), pick: fc.nat() }) },
      {
        weight: 2,
        arbitrary: fc.record({
          kind: fc.constant('snapshot' as const),
          worker: fc.nat(),
          sameMsCounts: fc.boolean(),
        }),
      },
      { weight: 3, arbitrary: fc.record({ kind: fc.constant('deliver' as const), worker: fc.nat() }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('release' as const), pick: fc.nat() }) },
      {
        weight: 2,
        arbitrary: fc.record({ kind: fc.constant('tick' as const), by: fc.integer({ min: 0, max: 3 }) }),
      },
    );
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 4 }),
        fc.array(step, { minLength: 1, maxLength: 200 }),
        (slotsOf, steps) => {
          const k = slotsOf.length;
          const core = new CoordinatorCore(DEFAULT_COORDINATOR_CORE_CONFIG);
          core.applyFullWorkerList(
            slotsOf.map((taskSlots, i) => hb(addr(i), { taskSlots, lastHeartbeatMs: T0 })),
            T0,
          );
          let now = T0;
          // The Workers' truth: grant times of the slots they hold (nothing expires: the run is < 1 TTL).
          const grants: number[][] = slotsOf.map(() => []);
          const inFlight: number[] = []; // worker index per open claim
          const queued: { reserved: number; at: number }[][] = slotsOf.map(() => []);
          let next = 0;
          for (const s of steps) {
            switch (s.kind) {
              case 'claim': {
                const r = core.claimCandidate(`t${next++}`, [], now);
                if (!r.ok) break;
                const w = Number(/\.(\d+):/.exec(r.workerAddr)![1]);
                inFlight.push(w);
                const pending = inFlight.filter((x) => x === w).length;
                expect(grants[w]!.length + pending).toBeLessThanOrEqual(slotsOf[w]!);
                break;
              }
              case 'settle':
              case 'release': {
                if (inFlight.length === 0) break;
                const [w] = inFlight.splice(s.pick % inFlight.length, 1) as [number];
                if (s.kind === 'settle') grants[w]!.push(now);
                core.settleClaim(addr(w), s.kind === 'settle' ? 'slot' : 'noSlot', now);
                break;
              }
              case 'snapshot': {
                // A heartbeat taken now; a grant in this very millisecond may or may not be in it.
                const w = s.worker % k;
                const reserved = grants[w]!.filter((t) => t < now || (s.sameMsCounts && t === now)).length;
                queued[w]!.push({ reserved, at: now });
                break;
              }
              case 'deliver': {
                const w = s.worker % k;
                const snap = queued[w]!.shift();
                if (snap === undefined) break;
                core.applyWorkerUpdate(
                  hb(addr(w), {
                    taskSlots: slotsOf[w]!,
                    reservedSlots: snap.reserved,
                    lastHeartbeatMs: snap.at,
                  }),
                  now,
                );
                break;
              }
              case 'tick':
                now += s.by;
                break;
            }
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('affinity: a task id keeps its Worker across claims while the routable set is unchanged', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: 250 }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.string({ minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 30 }),
        (hosts, taskIds) => {
          const core = new CoordinatorCore({ ...DEFAULT_COORDINATOR_CORE_CONFIG, placement: 'affinity' });
          core.applyFullWorkerList(
            hosts.map((h) => hb(addr(h), { taskSlots: 1_000, lastHeartbeatMs: T0 })),
            T0,
          );
          const first = new Map<string, string>();
          for (const [i, taskId] of [...taskIds, ...taskIds].entries()) {
            const r = core.claimCandidate(taskId, [], T0 + i);
            expect(r.ok).toBe(true);
            if (!r.ok) continue;
            core.settleClaim(r.workerAddr, 'slot', T0 + i);
            const was = first.get(taskId);
            if (was === undefined) first.set(taskId, r.workerAddr);
            else expect(r.workerAddr).toBe(was);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
