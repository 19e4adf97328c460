import { describe, expect, it } from 'vitest';
import type { FilterCounts } from '../../../../../src/services/coordinator/core/errors.js';
import type { WorkerHeartbeat } from '../../../../../src/contracts/heartbeat.js';
import { coreWith, hb, pick } from './fixtures.js';

// Defaults: heartbeatTimeoutMs 10000, red lines cpu 0.9 / memory 0.9 / errorRate 0.5, breaker 3 × 10 s.
const NOW = 50_000;

describe('selectCandidate hard filters', () => {
  // `a` has 8 free slots and would win on capacity; each row makes it fail (or just pass) one filter.
  // `b` is a healthy Worker with 4 free slots.
  const cases: Array<{
    name: string;
    a: Partial<WorkerHeartbeat>;
    b?: Partial<WorkerHeartbeat>;
    exclude?: string[];
    want: string;
  }> = [
    { name: 'baseline: a wins on capacity', a: {}, want: 'a' },
    { name: 'excluded', a: {}, exclude: ['a'], want: 'b' },
    { name: 'heartbeat older than the timeout', a: { lastHeartbeatMs: NOW - 10_001 }, want: 'b' },
    { name: 'heartbeat exactly at the timeout is fresh', a: { lastHeartbeatMs: NOW - 10_000 }, want: 'a' },
    {
      name: 'heartbeat from the future within the skew is fresh',
      a: { lastHeartbeatMs: NOW + 500 },
      want: 'a',
    },
    {
      name: 'heartbeat exactly maxClockSkewMs ahead is fresh',
      a: { lastHeartbeatMs: NOW + 5_000 },
      want: 'a',
    },
    { name: 'heartbeat beyond maxClockSkewMs ahead', a: { lastHeartbeatMs: NOW + 5_001 }, want: 'b' },
    {
      name: 'a forged key: huge pool, far-future heartbeat',
      a: { taskSlots: 100_000, lastHeartbeatMs: Number.MAX_SAFE_INTEGER },
      want: 'b',
    },
    { name: 'cpu above the red line', a: { cpuPercent: 0.9001 }, want: 'b' },
    { name: 'cpu exactly at the red line passes', a: { cpuPercent: 0.9 }, want: 'a' },
    { name: 'memory above the red line', a: { memoryPercent: 0.95 }, want: 'b' },
    { name: 'memory exactly at the red line passes', a: { memoryPercent: 0.9 }, want: 'a' },
    { name: 'error rate above the red line', a: { errorRate: 0.51 }, want: 'b' },
    { name: 'error rate exactly at the red line passes', a: { errorRate: 0.5 }, want: 'a' },
    { name: 'no free capacity (all reserved)', a: { reservedSlots: 8 }, want: 'b' },
    { name: 'no free capacity (reserved + running)', a: { reservedSlots: 3, runningTasks: 5 }, want: 'b' },
    { name: 'over-committed heartbeat', a: { reservedSlots: 6, runningTasks: 6 }, want: 'b' },
    { name: 'one free slot passes', a: { taskSlots: 5, runningTasks: 4 }, b: { runningTasks: 4 }, want: 'a' },
    { name: 'nothing passes', a: { reservedSlots: 8 }, b: { runningTasks: 4 }, want: '!NoExecutableSlot' },
    // docs/security.md § Reservations per client: reservations a newcomer could reclaim count as free.
    {
      name: 'full of one client reservations, some reclaimable, passes',
      a: { reservedSlots: 8, reclaimableSlots: 4 },
      b: { runningTasks: 4 },
      want: 'a',
    },
    {
      name: 'reclaimable slots rank like free ones',
      a: { reservedSlots: 8, reclaimableSlots: 2 },
      b: { runningTasks: 1 },
      want: 'b',
    },
  ];
  it.each(cases)('$name → $want', ({ a, b, exclude, want }) => {
    const core = coreWith([
      hb('a', { taskSlots: 8, lastHeartbeatMs: NOW - 1, ...a }),
      hb('b', { taskSlots: 4, lastHeartbeatMs: NOW - 1, ...b }),
    ]);
    expect(pick(core, NOW, exclude)).toBe(want);
  });

  it('accepts the exclusions as a Set', () => {
    const core = coreWith([
      hb('a', { taskSlots: 8, lastHeartbeatMs: NOW }),
      hb('b', { lastHeartbeatMs: NOW }),
    ]);
    const r = core.selectCandidate('t', new Set(['a']), NOW);
    expect(r).toEqual({ ok: true, workerAddr: 'b' });
  });

  it('filters a Worker while its breaker is open and admits it exactly at the deadline', () => {
    const core = coreWith([
      hb('a', { taskSlots: 8, lastHeartbeatMs: NOW }),
      hb('b', { lastHeartbeatMs: NOW }),
    ]);
    for (let i = 0; i < 3; i++) core.recordSlotRejection('a', NOW);
    expect(pick(core, NOW)).toBe('b');
    expect(pick(core, NOW + 9_999)).toBe('b');
    expect(pick(core, NOW + 10_000)).toBe('a');
  });
});

describe('selectCandidate filter order', () => {
  // A Worker that fails several filters is counted under the first one in the documented order. Every
  // non-empty combination of the five filters is checked; `z` is a fresh, full anchor so that the answer
  // is always NoExecutableSlot.
  const FILTERS = ['excluded', 'heartbeatTimedOut', 'overloaded', 'circuitOpen', 'noFreeCapacity'] as const;
  const combos: Array<{ fails: string[]; first: keyof FilterCounts }> = [];
  for (let mask = 1; mask < 1 << FILTERS.length; mask++) {
    const fails = FILTERS.filter((_, i) => mask & (1 << i));
    combos.push({ fails, first: fails[0]! });
  }
  it.each(combos)('fails $fails → counted as $first', ({ fails, first }) => {
    const has = (f: string) => fails.includes(f);
    const core = coreWith([
      hb('w', {
        lastHeartbeatMs: has('heartbeatTimedOut') ? NOW - 20_000 : NOW,
        cpuPercent: has('overloaded') ? 0.99 : 0.1,
        reservedSlots: has('noFreeCapacity') ? 4 : 0,
      }),
      hb('z', { lastHeartbeatMs: NOW, reservedSlots: 4 }),
    ]);
    if (has('circuitOpen')) for (let i = 0; i < 3; i++) core.recordSlotTimeout('w', NOW);
    const r = core.selectCandidate('t', has('excluded') ? ['w'] : [], NOW);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe('NoExecutableSlot');
    const expected: FilterCounts = {
      excluded: 0,
      heartbeatTimedOut: 0,
      overloaded: 0,
      circuitOpen: 0,
      noFreeCapacity: 1,
    };
    expected[first] += 1;
    expect(r.error.filtered).toEqual(expected);
    expect(r.error.workerCount).toBe(2);
  });

  it.each([
    { name: 'memory', over: { memoryPercent: 0.91 } },
    { name: 'error rate', over: { errorRate: 0.6 } },
  ])('$name above its red line counts as overloaded', ({ over }) => {
    const core = coreWith([hb('w', { lastHeartbeatMs: NOW, ...over })]);
    const r = core.selectCandidate('t', [], NOW);
    expect(r.ok ? undefined : r.error.filtered?.overloaded).toBe(1);
  });
});

describe('selectCandidate ranking', () => {
  // Each row: two Workers that tie on every rule above the one under test.
  const cases: Array<{
    name: string;
    x: Partial<WorkerHeartbeat>;
    y: Partial<WorkerHeartbeat>;
    xPenalty?: number;
    want: 'x' | 'y';
  }> = [
    {
      name: 'larger free capacity beats newer heartbeat, smaller penalty and smaller address',
      x: { taskSlots: 5, lastHeartbeatMs: NOW - 5 },
      y: { taskSlots: 4, lastHeartbeatMs: NOW },
      xPenalty: 2,
      want: 'x',
    },
    {
      name: 'free capacity counts reserved and running, not just slots',
      x: { taskSlots: 8, reservedSlots: 2, runningTasks: 3 },
      y: { taskSlots: 4 },
      want: 'y',
    },
    {
      name: 'newer heartbeat beats smaller penalty and smaller address',
      x: { lastHeartbeatMs: NOW - 1 },
      y: { lastHeartbeatMs: NOW - 2 },
      xPenalty: 2,
      want: 'x',
    },
    { name: 'smaller penalty beats smaller address', x: {}, y: {}, xPenalty: 1, want: 'y' },
    { name: 'all equal: smaller address wins', x: {}, y: {}, want: 'x' },
  ];
  it.each(cases)('$name', ({ x, y, xPenalty = 0, want }) => {
    // x is always the lexicographically smaller address; both insertion orders must agree.
    for (const order of [0, 1]) {
      const xs = hb('10.0.0.1:9090', { lastHeartbeatMs: NOW, ...x });
      const ys = hb('10.0.0.2:9090', { lastHeartbeatMs: NOW, ...y });
      const core = coreWith(order === 0 ? [xs, ys] : [ys, xs]);
      for (let i = 0; i < xPenalty; i++) core.recordSlotRejection(xs.workerAddr, NOW);
      expect(core.getWorker(xs.workerAddr)?.penalty).toBe(xPenalty);
      expect(pick(core, NOW)).toBe(want === 'x' ? xs.workerAddr : ys.workerAddr);
    }
  });

  it('compares addresses lexicographically, not numerically', () => {
    const core = coreWith([hb('w10', { lastHeartbeatMs: NOW }), hb('w9', { lastHeartbeatMs: NOW })]);
    expect(pick(core, NOW)).toBe('w10');
  });

  it('moves to the next-best Worker as the request excludes tried ones', () => {
    const core = coreWith([
      hb('c', { taskSlots: 2, lastHeartbeatMs: NOW }),
      hb('a', { taskSlots: 6, lastHeartbeatMs: NOW }),
      hb('b', { taskSlots: 4, lastHeartbeatMs: NOW }),
    ]);
    expect(pick(core, NOW)).toBe('a');
    expect(pick(core, NOW, ['a'])).toBe('b');
    expect(pick(core, NOW, ['a', 'b'])).toBe('c');
    expect(pick(core, NOW, ['a', 'b', 'c'])).toBe('!NoExecutableSlot');
  });
  it('handles many exclusions (the Set path), ignoring unknown addresses', () => {
    const workers = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((a, i) =>
      hb(a, { taskSlots: 10 - i, lastHeartbeatMs: NOW }),
    );
    const core = coreWith(workers);
    expect(pick(core, NOW, ['a', 'b', 'c', 'd', 'e', 'zz'])).toBe('f');
    expect(pick(core, NOW, ['a', 'b', 'c', 'd', 'e', 'f', 'g'])).toBe('!NoExecutableSlot');
    const r = core.selectCandidate('t', ['a', 'b', 'c', 'd', 'e', 'f', 'a'], NOW);
    expect(r).toEqual({ ok: true, workerAddr: 'g' });
  });
});

describe('selectCandidate errors', () => {
  it('rejects an empty taskId before anything else, even when not ready', () => {
    const core = coreWith([hb('a', { lastHeartbeatMs: NOW })]);
    expect(pick(core, NOW, [], '')).toBe('!InvalidArgument');
    core.markWatchDisconnected(0);
    expect(pick(core, NOW, [], '')).toBe('!InvalidArgument');
  });

  it.each([
    { name: 'empty view', workers: [], want: '!Unavailable', message: 'no workers registered' },
    {
      name: 'every heartbeat timed out',
      workers: [hb('a', { lastHeartbeatMs: NOW - 10_001 }), hb('b', { lastHeartbeatMs: 0 })],
      want: '!Unavailable',
      message: 'all worker heartbeats timed out',
    },
    {
      name: 'fresh Workers exist but all are full',
      workers: [hb('a', { lastHeartbeatMs: NOW, runningTasks: 4 }), hb('b', { lastHeartbeatMs: 0 })],
      want: '!NoExecutableSlot',
      message: 'no executable slot',
    },
    {
      name: 'fresh Workers exist but all are overloaded',
      workers: [hb('a', { lastHeartbeatMs: NOW, cpuPercent: 1 })],
      want: '!NoExecutableSlot',
      message: 'no executable slot',
    },
  ])('$name → $want', ({ workers, want, message }) => {
    const core = coreWith(workers);
    expect(pick(core, NOW)).toBe(want);
    const r = core.selectCandidate('t', [], NOW);
    expect(r.ok ? '' : r.error.message).toContain(message);
  });

  it('counts excluded fresh Workers as alive: NoExecutableSlot, not Unavailable', () => {
    const core = coreWith([hb('a', { lastHeartbeatMs: NOW }), hb('b', { lastHeartbeatMs: 0 })]);
    expect(pick(core, NOW, ['a'])).toBe('!NoExecutableSlot');
  });
});
