// The affinity placement policy (rendezvous hashing, docs/placement.md) and the NoExecutableSlot message
// that names every filter reason with its numbers.
import { describe, expect, it } from 'vitest';
import {
  fmix32,
  hashString32,
  rendezvousScore,
} from '../../../../../src/services/coordinator/core/rendezvous.js';
import { MAX_NO_SLOT_MESSAGE } from '../../../../../src/services/coordinator/core/no-slot-message.js';
import type { WorkerHeartbeat } from '../../../../../src/contracts/heartbeat.js';
import { coreWith, hb, pick } from './fixtures.js';

const NOW = 50_000;
const AFFINITY = { placement: 'affinity' as const };
const ADDRS = ['10.0.0.1:9090', '10.0.0.2:9090', '10.0.0.3:9090'];
const fleet = (over: Record<string, Partial<WorkerHeartbeat>> = {}) =>
  ADDRS.map((a) => hb(a, { taskSlots: 8, lastHeartbeatMs: NOW, ...over[a] }));

/** The Worker with the highest score for `taskId` among `addrs` (the definition, written plainly). */
const top = (taskId: string, addrs: readonly string[]): string =>
  [...addrs].sort(
    (x, y) =>
      rendezvousScore(hashString32(taskId), hashString32(y)) -
      rendezvousScore(hashString32(taskId), hashString32(x)),
  )[0]!;

describe('hashString32 / rendezvousScore', () => {
  it('is a fixed function (the same in every process) with distinct values for near addresses', () => {
    expect(hashString32('')).toBe(fmix32(0x811c9dc5));
    expect(hashString32('task-1')).toBe(hashString32('task-1'));
    const hashes = new Set(Array.from({ length: 1000 }, (_, i) => hashString32(`127.0.0.1:${40000 + i}`)));
    expect(hashes.size).toBe(1000);
  });

  it('spreads task ids evenly over three Workers (each gets 30-37 % of 6,000)', () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 6_000; i++) {
      const w = top(`task-${i}`, ADDRS);
      counts.set(w, (counts.get(w) ?? 0) + 1);
    }
    for (const a of ADDRS) {
      expect(counts.get(a) ?? 0).toBeGreaterThan(1_800);
      expect(counts.get(a) ?? 0).toBeLessThan(2_220);
    }
  });
});

describe('selectCandidate with placement: affinity', () => {
  const cases: Array<{
    name: string;
    over?: Record<string, Partial<WorkerHeartbeat>>;
    exclude?: (order: string[]) => string[];
    breaker?: (order: string[]) => string;
    /** Which of the task's rendezvous order is expected: 0 = its top Worker. */
    want: number | string;
  }> = [
    { name: 'the top-scoring Worker, whatever the free capacity', want: 0 },
    {
      name: 'more free capacity elsewhere does not move it',
      over: { [ADDRS[0]!]: { taskSlots: 64 }, [ADDRS[1]!]: { taskSlots: 64 } },
      want: 0,
    },
    {
      name: 'an excluded (already tried) top Worker → the next in its order',
      exclude: (o) => [o[0]!],
      want: 1,
    },
    { name: 'an open breaker on the top Worker → the next', breaker: (o) => o[0]!, want: 1 },
    { name: 'both first and second excluded → the third', exclude: (o) => [o[0]!, o[1]!], want: 2 },
  ];
  it.each(cases)('$name', ({ over, exclude, breaker, want }) => {
    for (let i = 0; i < 40; i++) {
      const taskId = `job-${i}`;
      const order = [...ADDRS].sort(
        (x, y) =>
          rendezvousScore(hashString32(taskId), hashString32(y)) -
          rendezvousScore(hashString32(taskId), hashString32(x)),
      );
      const core = coreWith(fleet(over), AFFINITY);
      if (breaker) for (let k = 0; k < 3; k++) core.recordSlotRejection(breaker(order), NOW);
      const ex = exclude?.(order) ?? [];
      expect(pick(core, NOW, ex, taskId)).toBe(typeof want === 'number' ? order[want] : want);
    }
  });

  it.each([
    { name: 'full (heartbeat)', over: { runningTasks: 8 } },
    { name: 'above a red line', over: { cpuPercent: 0.99 } },
    { name: 'heartbeat timed out', over: { lastHeartbeatMs: NOW - 20_000 } },
  ])('a top Worker that is $name is skipped for the next in the order', ({ over }) => {
    for (let i = 0; i < 40; i++) {
      const taskId = `skip-${i}`;
      const first = top(taskId, ADDRS);
      const second = top(
        taskId,
        ADDRS.filter((a) => a !== first),
      );
      const core = coreWith(fleet({ [first]: over }), AFFINITY);
      expect(pick(core, NOW, [], taskId)).toBe(second);
    }
  });

  it('sends the same task id to the same Worker on every request while membership is stable', () => {
    // 64 slots each: no Worker fills up during the 50 reservations (a full one would be skipped).
    const core = coreWith(
      ADDRS.map((a) => hb(a, { taskSlots: 64, lastHeartbeatMs: NOW })),
      AFFINITY,
    );
    for (let i = 0; i < 50; i++) {
      const first = core.claimCandidate(`same-${i}`, [], NOW);
      if (first.ok) core.settleClaim(first.workerAddr, 'slot', NOW);
      const again = core.selectCandidate(`same-${i}`, [], NOW + 300);
      expect(again).toEqual(first);
    }
  });

  it('when a Worker leaves, only the tasks it held move', () => {
    const core = coreWith(fleet(), AFFINITY);
    const before = new Map(Array.from({ length: 300 }, (_, i) => [`m-${i}`, pick(core, NOW, [], `m-${i}`)]));
    core.applyWorkerRemoval(ADDRS[2]!, NOW);
    for (const [taskId, was] of before) {
      const now = pick(core, NOW, [], taskId);
      if (was !== ADDRS[2]) expect(now).toBe(was);
      else expect(now).not.toBe(ADDRS[2]);
    }
  });

  it('a full fleet is still NoExecutableSlot', () => {
    const core = coreWith(
      fleet({
        [ADDRS[0]!]: { runningTasks: 8 },
        [ADDRS[1]!]: { runningTasks: 8 },
        [ADDRS[2]!]: { reservedSlots: 8 },
      }),
      AFFINITY,
    );
    expect(pick(core, NOW)).toBe('!NoExecutableSlot');
  });
});

describe('the NoExecutableSlot message names each reason with its numbers', () => {
  const cases: Array<{
    name: string;
    workers: Partial<WorkerHeartbeat>[];
    breakers?: number[];
    exclude?: number[];
    want: string;
  }> = [
    {
      name: 'error rate on every Worker, worst value',
      workers: [{ errorRate: 0.62 }, { errorRate: 0.55 }],
      want: 'no executable slot: 2 workers — error rate 0.62 > 0.50 on 2 workers',
    },
    {
      name: 'cpu, breaker and full, in filter order',
      workers: [{ cpuPercent: 0.95 }, { runningTasks: 4 }, {}],
      breakers: [2],
      want: 'no executable slot: 3 workers — cpu 0.95 > 0.90 on 1 worker; circuit open on 1 worker (closes in 10 s at most); no free slots on 1 worker',
    },
    {
      name: 'a Worker over two lines counts under both',
      workers: [{ cpuPercent: 0.97, memoryPercent: 0.93 }, { memoryPercent: 0.99 }],
      want: 'no executable slot: 2 workers — cpu 0.97 > 0.90 on 1 worker; memory 0.99 > 0.90 on 2 workers',
    },
    {
      name: 'just above a line prints enough digits to tell',
      workers: [{ cpuPercent: 0.9001 }],
      want: 'no executable slot: 1 worker — cpu 0.9001 > 0.9000 on 1 worker',
    },
    {
      name: 'a stale Worker beside a full one, and one already tried',
      workers: [{ lastHeartbeatMs: NOW - 12_345 }, { reservedSlots: 4 }, {}],
      exclude: [2],
      want: 'no executable slot: 3 workers — already tried 1 worker; heartbeat older than 10 s on 1 worker (oldest 12 s); no free slots on 1 worker',
    },
    {
      name: 'a corrupt value stays short',
      workers: [{ errorRate: 1e300 }],
      want: 'no executable slot: 1 worker — error rate 1e+300 > 0.50 on 1 worker',
    },
  ];
  it.each(cases)('$name', ({ workers, breakers = [], exclude = [], want }) => {
    const core = coreWith(workers.map((over, i) => hb(`w${i}`, { lastHeartbeatMs: NOW, ...over })));
    for (const i of breakers) for (let k = 0; k < 3; k++) core.recordSlotTimeout(`w${i}`, NOW);
    const r = core.selectCandidate(
      't',
      exclude.map((i) => `w${i}`),
      NOW,
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe('NoExecutableSlot');
    expect(r.error.message).toBe(want);
  });

  it('stays bounded and carries no address or task id, even for 10,000 filtered Workers', () => {
    const workers = Array.from({ length: 10_000 }, (_, i) =>
      hb(`worker-with-a-long-name-${i}.example:9090`, {
        lastHeartbeatMs: i % 2 === 0 ? NOW - 20_000 : NOW,
        cpuPercent: 0.5 + (i % 50) / 100,
        errorRate: i % 3 === 0 ? 0.9 : 0,
        reservedSlots: 4,
      }),
    );
    const core = coreWith(workers);
    // The longest id validateReserveRequest accepts (docs/security.md § Input bounds); longer ones are
    // InvalidArgument before any candidate is looked at.
    const r = core.selectCandidate('x'.repeat(256), [], NOW);
    const message = r.ok ? '' : r.error.message;
    expect(message.length).toBeLessThanOrEqual(MAX_NO_SLOT_MESSAGE);
    expect(message).not.toMatch(/example|xxx/);
    expect(message).toMatch(/^no executable slot: 10000 workers — heartbeat older than 10 s on 5000 workers/);
    expect(r.ok ? undefined : r.error.details).toMatchObject({
      worstCpu: 0.99,
      errorRateOver: expect.any(Number),
    });
  });
});
