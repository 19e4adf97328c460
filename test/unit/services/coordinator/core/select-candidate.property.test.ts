// Property tests over the core's input alphabet: after any interleaving of view changes, watch
// disconnects and slot feedback, selectCandidate (one pass, no sort) must equal a reference that filters
// a simple model of the state and *sorts* by the ranking rules; and it must never return an excluded or
// filtered Worker. The config is shrunk so that random times often hit every boundary.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CoordinatorCoreConfig } from '../../../../../src/services/coordinator/core/config.js';
import { CoordinatorCore } from '../../../../../src/services/coordinator/core/coordinator-core.js';
import type { CoordinatorInput, SlotOutcome } from '../../../../../src/services/coordinator/core/inputs.js';
import type { WorkerHeartbeat } from '../../../../../src/contracts/heartbeat.js';

const CFG: CoordinatorCoreConfig = {
  heartbeatTimeoutMs: 100,
  // Ages go down to -10 (a heartbeat 10 ms in the future), so the skew rule is exercised too.
  maxClockSkewMs: 5,
  watchGracePeriodMs: 50,
  slotTtlMs: 10,
  maxCandidates: 3,
  circuitBreakerThreshold: 2,
  circuitBreakerCooldownMs: 30,
  cpuRedLine: 0.9,
  memoryRedLine: 0.9,
  errorRateRedLine: 0.5,
  placement: 'capacity',
  // Selection alone never records a placement (claimCandidate does): the memory plays no part here.
  placementMemoryMs: 300_000,
  placementMemoryMaxEntries: 1_000,
};
const ADDRS = ['w0', 'w1', 'w2', 'w3', 'w4', 'w5', 'w10', 'w9'];

interface ModelWorker {
  hb: WorkerHeartbeat;
  count: number;
  deadline: number;
}
interface Model {
  workers: Map<string, ModelWorker>;
  initialized: boolean;
  disconnectedAt: number | undefined;
}

/**
 * Heartbeats whose `lastHeartbeatMs` holds an AGE (coarse: ties on the heartbeat, so penalty and address
 * decide, and exact boundaries are common); `at(hb, now)` turns it into a timestamp when the step runs.
 */
const agedHeartbeat = fc.record({
  workerAddr: fc.constantFrom(...ADDRS),
  taskSlots: fc.integer({ min: 0, max: 6 }),
  reservedSlots: fc.integer({ min: 0, max: 2 }),
  runningTasks: fc.integer({ min: 0, max: 2 }),
  cpuPercent: fc.constantFrom(0, 0.2, 0.5, 0.9, 0.91),
  memoryPercent: fc.constantFrom(0, 0.5, 0.9, 0.95),
  memoryAvailableBytes: fc.constant(1),
  memoryTotalBytes: fc.constant(2),
  processRssBytes: fc.constant(1),
  errorRate: fc.constantFrom(0, 0.2, 0.5, 0.51),
  lastHeartbeatMs: fc.integer({ min: -1, max: 11 }).map((age) => age * 10),
});
const at = (hb: WorkerHeartbeat, now: number): WorkerHeartbeat => ({
  ...hb,
  lastHeartbeatMs: now - hb.lastHeartbeatMs,
});

type Step =
  | { kind: 'advance'; by: number }
  | { kind: 'full'; list: WorkerHeartbeat[] }
  | { kind: 'update'; hb: WorkerHeartbeat }
  | { kind: 'remove'; addr: string }
  | { kind: 'disconnect' }
  | { kind: 'reconnect' }
  | { kind: 'outcome'; addr: string; outcome: SlotOutcome }
  | { kind: 'select'; exclude: string[] };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('advance' as const), by: fc.constantFrom(0, 1, 5, 10, 30) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('full' as const),
      list: fc.array(agedHeartbeat, { maxLength: 12 }),
    }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('update' as const), hb: agedHeartbeat }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('remove' as const), addr: fc.constantFrom(...ADDRS) }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'disconnect' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'reconnect' as const }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('outcome' as const),
      addr: fc.constantFrom(...ADDRS),
      outcome: fc.constantFrom<SlotOutcome>(
        'success',
        'rejection',
        'rejection',
        'timeout',
        'timeout',
        'backpressure',
      ),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('select' as const),
      exclude: fc.subarray(ADDRS, { maxLength: 2 }),
    }),
  },
);

function modelApply(m: Model, input: CoordinatorInput, cfg: CoordinatorCoreConfig = CFG): void {
  switch (input.type) {
    case 'fullWorkerList': {
      const next = new Map<string, ModelWorker>();
      for (const hb of input.workers) {
        const old = m.workers.get(hb.workerAddr);
        next.set(hb.workerAddr, { hb, count: old?.count ?? 0, deadline: old?.deadline ?? 0 });
      }
      m.workers = next;
      m.initialized = true;
      return;
    }
    case 'workerUpdate': {
      const old = m.workers.get(input.heartbeat.workerAddr);
      m.workers.set(input.heartbeat.workerAddr, {
        hb: input.heartbeat,
        count: old?.count ?? 0,
        deadline: old?.deadline ?? 0,
      });
      return;
    }
    case 'workerRemoval':
      m.workers.delete(input.workerAddr);
      return;
    case 'watchDisconnected':
      m.disconnectedAt ??= input.now;
      return;
    case 'watchReconnected':
      m.disconnectedAt = undefined;
      return;
    case 'slotOutcome': {
      const w = m.workers.get(input.workerAddr);
      if (!w) return;
      if (input.outcome === 'success') Object.assign(w, { count: 0, deadline: 0 });
      if (input.outcome === 'rejection' || input.outcome === 'timeout') {
        w.count += 1;
        if (w.count >= cfg.circuitBreakerThreshold) w.deadline = input.now + cfg.circuitBreakerCooldownMs;
      }
      return;
    }
  }
}

const fresh = (w: ModelWorker, now: number) =>
  now - w.hb.lastHeartbeatMs <= CFG.heartbeatTimeoutMs && w.hb.lastHeartbeatMs - now <= CFG.maxClockSkewMs;
const free = (w: ModelWorker) => w.hb.taskSlots - w.hb.reservedSlots - w.hb.runningTasks;
/** `w` with its counts replaced by one free slot: passes() then checks every filter but capacity. */
const ignoringCapacity = (w: ModelWorker): ModelWorker => ({
  ...w,
  hb: { ...w.hb, taskSlots: 1, reservedSlots: 0, runningTasks: 0 },
});
function passes(w: ModelWorker, exclude: readonly string[], now: number): boolean {
  return (
    !exclude.includes(w.hb.workerAddr) &&
    fresh(w, now) &&
    w.hb.cpuPercent <= CFG.cpuRedLine &&
    w.hb.memoryPercent <= CFG.memoryRedLine &&
    w.hb.errorRate <= CFG.errorRateRedLine &&
    now >= w.deadline &&
    free(w) > 0
  );
}

const modelReady = (m: Model, now: number) =>
  m.initialized && (m.disconnectedAt === undefined || now - m.disconnectedAt <= CFG.watchGracePeriodMs);

/** The reference answer: filter, then sort by the ranking and take the head. */
function reference(m: Model, exclude: readonly string[], now: number): string {
  if (!modelReady(m, now)) return '!Unavailable';
  const ws = [...m.workers.values()];
  const ranked = ws
    .filter((w) => passes(w, exclude, now))
    .sort(
      (a, b) =>
        free(b) - free(a) ||
        b.hb.lastHeartbeatMs - a.hb.lastHeartbeatMs ||
        a.count - b.count ||
        (a.hb.workerAddr < b.hb.workerAddr ? -1 : 1),
    );
  if (ranked[0]) return ranked[0].hb.workerAddr;
  // While the watch is down, a full-looking Worker (passing every other filter) is asked anyway, the one
  // with the oldest counts first (selection.ts); the model holds no claims.
  if (m.disconnectedAt !== undefined) {
    const probe = ws
      .filter((w) => w.hb.taskSlots > 0 && free(w) <= 0 && passes(ignoringCapacity(w), exclude, now))
      .sort(
        (a, b) => a.hb.lastHeartbeatMs - b.hb.lastHeartbeatMs || (a.hb.workerAddr < b.hb.workerAddr ? -1 : 1),
      );
    if (probe[0]) return probe[0].hb.workerAddr;
  }
  return ws.some((w) => fresh(w, now)) ? '!NoExecutableSlot' : '!Unavailable';
}

describe('selectCandidate (property)', () => {
  it('equals the sort-based reference after any input sequence and never returns a filtered Worker', () => {
    fc.assert(
      fc.property(
        fc.array(agedHeartbeat, { maxLength: 12 }),
        fc.array(step, { minLength: 30, maxLength: 80, size: 'max' }),
        (initial, steps) => {
          const core = new CoordinatorCore(CFG);
          const model: Model = { workers: new Map(), initialized: false, disconnectedAt: undefined };
          let now = 1_000;
          const start: CoordinatorInput = {
            type: 'fullWorkerList',
            workers: initial.map((hb) => at(hb, now)),
            now,
          };
          core.apply(start);
          modelApply(model, start);
          const check = (exclude: string[]) => {
            const r = core.selectCandidate('task', exclude, now);
            const got = r.ok ? r.workerAddr : `!${r.error.code}`;
            expect(got).toBe(reference(model, exclude, now));
            // A Worker that passes every filter, or (watch down) every filter but free capacity.
            if (r.ok) {
              const w = model.workers.get(r.workerAddr)!;
              const probed = model.disconnectedAt === undefined ? w : ignoringCapacity(w);
              expect(passes(probed, exclude, now)).toBe(true);
            }
            expect(core.isReady(now)).toBe(modelReady(model, now));
          };
          for (const s of steps) {
            let input: CoordinatorInput | undefined;
            switch (s.kind) {
              case 'advance':
                now += s.by;
                break;
              case 'full':
                input = { type: 'fullWorkerList', workers: s.list.map((hb) => at(hb, now)), now };
                break;
              case 'update':
                input = { type: 'workerUpdate', heartbeat: at(s.hb, now), now };
                break;
              case 'remove':
                input = { type: 'workerRemoval', workerAddr: s.addr, now };
                break;
              case 'disconnect':
                input = { type: 'watchDisconnected', now };
                break;
              case 'reconnect':
                input = { type: 'watchReconnected', now };
                break;
              case 'outcome':
                input = { type: 'slotOutcome', workerAddr: s.addr, outcome: s.outcome, now };
                break;
              case 'select':
                check(s.exclude);
                break;
            }
            if (input) {
              core.apply(input);
              modelApply(model, input);
            }
          }
          check([]);
          for (const addr of ADDRS) check([addr]);
          // The local fields match the model for every Worker.
          for (const [addr, w] of model.workers) {
            const v = core.getWorker(addr);
            expect(v && [v.recentFailureCount, v.penalty, v.circuitBreakerDeadlineMs]).toEqual([
              w.count,
              w.count,
              w.deadline,
            ]);
          }
          expect(core.workerCount).toBe(model.workers.size);
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe('selectCandidate ranking (property)', () => {
  // One snapshot: a random fleet with random failure counts (below the threshold, so only the penalty
  // moves), all selected at one instant. Focuses on the ranking: ties on capacity and heartbeat are common.
  it('returns the head of the reference sort', () => {
    const fleet = fc.uniqueArray(agedHeartbeat, { selector: (h) => h.workerAddr, maxLength: ADDRS.length });
    fc.assert(
      fc.property(
        fleet,
        fc.array(fc.constantFrom(...ADDRS), { maxLength: 10 }),
        fc.subarray(ADDRS, { maxLength: 3 }),
        fc.constantFrom(1_000, 1_050, 1_100),
        (workers, failures, exclude, now) => {
          const cfg = { ...CFG, circuitBreakerThreshold: 100 };
          const core = new CoordinatorCore(cfg);
          const model: Model = { workers: new Map(), initialized: false, disconnectedAt: undefined };
          const inputs: CoordinatorInput[] = [
            { type: 'fullWorkerList', workers: workers.map((hb) => at(hb, 1_000)), now: 1_000 },
            ...failures.map((workerAddr): CoordinatorInput => ({
              type: 'slotOutcome',
              workerAddr,
              outcome: 'rejection',
              now: 1_000,
            })),
          ];
          for (const input of inputs) {
            core.apply(input);
            modelApply(model, input, cfg);
          }
          const r = core.selectCandidate('task', exclude, now);
          expect(r.ok ? r.workerAddr : `!${r.error.code}`).toBe(reference(model, exclude, now));
        },
      ),
      { numRuns: 1_000 },
    );
  });
});
