// clusterStatus: the read-only view behind `blockx status`. Scenarios on virtual time, plus a property:
// a Worker is reported routable exactly when selectCandidate (with every other Worker excluded) picks it.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  clusterStatus,
  clusterStatusView,
} from '../../../../../src/services/coordinator/core/cluster-status.js';
import { CoordinatorCore } from '../../../../../src/services/coordinator/core/coordinator-core.js';
import { DEFAULT_COORDINATOR_CORE_CONFIG } from '../../../../../src/services/coordinator/core/config.js';
import type { WorkerHeartbeat } from '../../../../../src/contracts/heartbeat.js';
import { coreWith, hb } from './fixtures.js';

const NOW = 20_000;

function row(core: CoordinatorCore, addr: string, now = NOW) {
  const w = clusterStatus(core, now).workers.find((x) => x.workerAddr === addr);
  if (!w) throw new Error(`no row for ${addr}`);
  return w;
}

describe('clusterStatus', () => {
  it('reports readiness, limits and one row per Worker sorted by address, with slots and load', () => {
    const core = coreWith(
      [
        hb('b:2', { lastHeartbeatMs: NOW - 300, taskSlots: 8, reservedSlots: 1, runningTasks: 3 }),
        hb('a:1', { lastHeartbeatMs: NOW }),
      ],
      {},
      NOW,
    );
    const s = clusterStatus(core, NOW);
    expect(s).toMatchObject({
      nowMs: NOW,
      ready: true,
      unavailableReason: undefined,
      initialized: true,
      watchDisconnectedAtMs: undefined,
      limits: DEFAULT_COORDINATOR_CORE_CONFIG,
    });
    expect(s.workers.map((w) => w.workerAddr)).toEqual(['a:1', 'b:2']);
    expect(s.workers[1]).toMatchObject({
      taskSlots: 8,
      reservedSlots: 1,
      runningTasks: 3,
      freeSlots: 4,
      cpuPercent: 0.1,
      memoryPercent: 0.2,
      errorRate: 0,
      lastHeartbeatMs: NOW - 300,
      heartbeatAgeMs: 300,
      breakerState: 'closed',
      breakerOpenUntilMs: undefined,
      consecutiveFailures: 0,
      routable: true,
      notRoutable: undefined,
    });
  });

  // [what, heartbeat overrides, expected code, expected reason]
  const filters: [string, Partial<WorkerHeartbeat>, string, string][] = [
    [
      'stale heartbeat',
      { lastHeartbeatMs: NOW - 10_001 },
      'HEARTBEAT_TIMED_OUT',
      'last heartbeat 10 s ago (timeout 10 s)',
    ],
    ['cpu above the red line', { cpuPercent: 0.95 }, 'OVERLOADED', 'above red line: cpu 0.95 > 0.90'],
    [
      'memory and error rate above',
      { memoryPercent: 0.91, errorRate: 0.6 },
      'OVERLOADED',
      'above red line: memory 0.91 > 0.90, error rate 0.60 > 0.50',
    ],
    [
      'no free slots',
      { taskSlots: 4, reservedSlots: 1, runningTasks: 3 },
      'NO_FREE_SLOTS',
      'no free slots (1 reserved + 3 running of 4)',
    ],
    [
      'stale wins over overloaded',
      { lastHeartbeatMs: 0, cpuPercent: 1 },
      'HEARTBEAT_TIMED_OUT',
      'last heartbeat 20 s ago (timeout 10 s)',
    ],
  ];
  it.each(filters)('%s → not routable, first filter reported', (_what, over, code, reason) => {
    const core = coreWith([hb('w:1', { lastHeartbeatMs: NOW, ...over })], {}, NOW);
    const w = row(core, 'w:1');
    expect(w.routable).toBe(false);
    expect(w.notRoutable).toEqual({ code, reason });
  });

  it('breaker: closed → open (until the deadline) → half-open after the cooldown → closed on success', () => {
    const core = coreWith([hb('w:1', { lastHeartbeatMs: NOW })], {}, NOW);
    core.recordSlotRejection('w:1', NOW);
    core.recordSlotTimeout('w:1', NOW);
    expect(row(core, 'w:1')).toMatchObject({
      breakerState: 'closed',
      consecutiveFailures: 2,
      penalty: 2,
      routable: true,
    });
    core.recordSlotRejection('w:1', NOW);
    expect(row(core, 'w:1')).toMatchObject({
      breakerState: 'open',
      breakerOpenUntilMs: NOW + 10_000,
      consecutiveFailures: 3,
      routable: false,
      notRoutable: {
        code: 'BREAKER_OPEN',
        reason: 'circuit breaker open for 10 s more (3 consecutive failures)',
      },
    });
    // Checked 6 s later: 4 s of the cooldown left (the heartbeat is still fresh).
    expect(row(core, 'w:1', NOW + 6_000).notRoutable?.reason).toBe(
      'circuit breaker open for 4.0 s more (3 consecutive failures)',
    );
    expect(row(core, 'w:1', NOW + 10_000)).toMatchObject({
      breakerState: 'half-open',
      breakerOpenUntilMs: undefined,
      routable: true,
    });
    core.recordSlotSuccess('w:1', NOW + 10_000);
    expect(row(core, 'w:1', NOW + 10_000)).toMatchObject({ breakerState: 'closed', consecutiveFailures: 0 });
  });

  it('a core that is not ready routes nowhere, and says why', () => {
    const empty = new CoordinatorCore(DEFAULT_COORDINATOR_CORE_CONFIG);
    expect(clusterStatus(empty, NOW)).toMatchObject({
      ready: false,
      initialized: false,
      unavailableReason: 'worker view not initialized',
      workers: [],
    });

    const core = coreWith([hb('w:1', { lastHeartbeatMs: NOW })], {}, NOW);
    core.markWatchDisconnected(NOW);
    expect(clusterStatus(core, NOW + 10_000)).toMatchObject({ ready: true, watchDisconnectedAtMs: NOW });
    const s = clusterStatus(core, NOW + 10_001);
    expect(s.ready).toBe(false);
    expect(s.workers[0]?.notRoutable).toEqual({
      code: 'NOT_READY',
      reason: 'coordinator not ready: registry watch disconnected for 10001 ms (grace 10000 ms)',
    });
  });
});

describe('clusterStatusView', () => {
  const source = { prefix: '/blockx/workers/', format: 'v2' } as const;
  // [what, core, now, sourceOf, expected top-level fields, expected row fields]
  const cases: [string, () => CoordinatorCore, number, boolean, object, object | undefined][] = [
    [
      'ready, closed breaker: absent values become 0 / empty, source labels the row',
      () => coreWith([hb('w:1', { lastHeartbeatMs: NOW })], {}, NOW),
      NOW,
      true,
      { ready: true, unavailableReason: '', watchDisconnectedAtMs: 0 },
      {
        registryPrefix: '/blockx/workers/',
        registryFormat: 'v2',
        breakerState: 'closed',
        breakerOpenUntilMs: 0,
        routable: true,
        notRoutableCode: '',
        notRoutableReason: '',
      },
    ],
    [
      'not ready, source unknown: reason and code in words, prefix empty',
      () => {
        const core = coreWith([hb('w:1', { lastHeartbeatMs: NOW })], {}, NOW);
        core.markWatchDisconnected(NOW);
        return core;
      },
      NOW + 10_001,
      false,
      {
        ready: false,
        unavailableReason: 'registry watch disconnected for 10001 ms (grace 10000 ms)',
        watchDisconnectedAtMs: NOW,
      },
      { registryPrefix: '', registryFormat: '', routable: false, notRoutableCode: 'NOT_READY' },
    ],
    [
      'open breaker: its deadline is reported',
      () => {
        const core = coreWith([hb('w:1', { lastHeartbeatMs: NOW })], {}, NOW);
        for (let i = 0; i < 3; i++) core.recordSlotRejection('w:1', NOW);
        return core;
      },
      NOW,
      true,
      { ready: true },
      { breakerState: 'open', breakerOpenUntilMs: NOW + 10_000, notRoutableCode: 'BREAKER_OPEN' },
    ],
    [
      'no Workers',
      () => new CoordinatorCore(DEFAULT_COORDINATOR_CORE_CONFIG),
      NOW,
      true,
      { ready: false, initialized: false, workers: [] },
      undefined,
    ],
  ];
  it.each(cases)('%s', (_what, make, now, known, top, firstRow) => {
    const core = make();
    const view = clusterStatusView(clusterStatus(core, now), ['/blockx/workers/'], () =>
      known ? source : undefined,
    );
    expect(view).toMatchObject({ nowMs: now, registryPrefixes: ['/blockx/workers/'], ...top });
    expect(view.limits).toEqual({
      heartbeatTimeoutMs: DEFAULT_COORDINATOR_CORE_CONFIG.heartbeatTimeoutMs,
      watchGracePeriodMs: DEFAULT_COORDINATOR_CORE_CONFIG.watchGracePeriodMs,
      slotTtlMs: DEFAULT_COORDINATOR_CORE_CONFIG.slotTtlMs,
      maxCandidates: DEFAULT_COORDINATOR_CORE_CONFIG.maxCandidates,
      circuitBreakerThreshold: DEFAULT_COORDINATOR_CORE_CONFIG.circuitBreakerThreshold,
      circuitBreakerCooldownMs: DEFAULT_COORDINATOR_CORE_CONFIG.circuitBreakerCooldownMs,
      cpuRedLine: DEFAULT_COORDINATOR_CORE_CONFIG.cpuRedLine,
      memoryRedLine: DEFAULT_COORDINATOR_CORE_CONFIG.memoryRedLine,
      errorRateRedLine: DEFAULT_COORDINATOR_CORE_CONFIG.errorRateRedLine,
    });
    if (firstRow !== undefined) expect(view.workers[0]).toMatchObject(firstRow);
    // Every row carries the core's numbers unchanged.
    const rows = clusterStatus(core, now).workers;
    expect(view.workers.map((w) => [w.workerAddr, w.freeSlots, w.heartbeatAgeMs, w.penalty])).toEqual(
      rows.map((w) => [w.workerAddr, w.freeSlots, w.heartbeatAgeMs, w.penalty]),
    );
  });
});

describe('clusterStatus property', () => {
  const heartbeat = fc.record({
    workerAddr: fc.constantFrom('w0', 'w1', 'w2', 'w3'),
    taskSlots: fc.integer({ min: 0, max: 4 }),
    reservedSlots: fc.integer({ min: 0, max: 2 }),
    runningTasks: fc.integer({ min: 0, max: 2 }),
    cpuPercent: fc.constantFrom(0, 0.9, 0.91),
    memoryPercent: fc.constantFrom(0, 0.9, 0.95),
    memoryAvailableBytes: fc.constant(1),
    memoryTotalBytes: fc.constant(2),
    processRssBytes: fc.constant(1),
    errorRate: fc.constantFrom(0, 0.5, 0.51),
    lastHeartbeatMs: fc.integer({ min: 0, max: 40 }).map((age) => NOW - age * 500),
  });

  it('routable ⇔ selectCandidate, with every other Worker excluded, picks the Worker', () => {
    fc.assert(
      fc.property(
        fc.array(heartbeat, { maxLength: 6 }),
        fc.array(fc.tuple(fc.constantFrom('w0', 'w1', 'w2', 'w3'), fc.integer({ min: 0, max: 12_000 })), {
          maxLength: 8,
        }),
        fc.integer({ min: 0, max: 15_000 }),
        (list, failures, later) => {
          const core = new CoordinatorCore(DEFAULT_COORDINATOR_CORE_CONFIG);
          core.applyFullWorkerList(list, NOW);
          for (const [addr, t] of failures) core.recordSlotRejection(addr, NOW + t - 12_000);
          const now = NOW + later;
          const s = clusterStatus(core, now);
          const addrs = s.workers.map((w) => w.workerAddr);
          for (const w of s.workers) {
            const others = addrs.filter((a) => a !== w.workerAddr);
            const pick = core.selectCandidate('t', others, now);
            expect(w.routable).toBe(pick.ok && pick.workerAddr === w.workerAddr);
            expect(w.routable).toBe(w.notRoutable === undefined);
          }
        },
      ),
    );
  });
});
