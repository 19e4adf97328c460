import { describe, expect, it } from 'vitest';
import { DEFAULT_COORDINATOR_CORE_CONFIG } from '../../../../../src/services/coordinator/core/config.js';
import { CoordinatorCore } from '../../../../../src/services/coordinator/core/coordinator-core.js';
import {
  CoordinatorConfigError,
  CoordinatorError,
} from '../../../../../src/services/coordinator/core/errors.js';
import type { CoordinatorInput } from '../../../../../src/services/coordinator/core/inputs.js';
import { coreWith, hb, pick } from './fixtures.js';

const local = (core: CoordinatorCore, addr: string) => {
  const v = core.getWorker(addr);
  return v && { count: v.recentFailureCount, penalty: v.penalty, deadline: v.circuitBreakerDeadlineMs };
};
const ZERO = { count: 0, penalty: 0, deadline: 0 };

describe('readiness', () => {
  it('is Unavailable until the first full list, then ready for good (even with an empty list)', () => {
    const core = new CoordinatorCore();
    expect(core.isReady(0)).toBe(false);
    expect(core.isInitialized).toBe(false);
    expect(pick(core, 0)).toBe('!Unavailable');
    core.applyWorkerUpdate(hb('a', { lastHeartbeatMs: 0 }), 0);
    expect(core.isReady(0)).toBe(false); // an update alone does not initialize
    core.applyFullWorkerList([], 1);
    expect(core.isReady(1)).toBe(true);
    core.applyWorkerRemoval('a', 2);
    core.applyFullWorkerList([], 3);
    expect(core.isReady(3)).toBe(true);
  });

  // Disconnect at 1000 with the default 10 s grace.
  it.each([
    { now: 1_000, ready: true },
    { now: 10_999, ready: true },
    { now: 11_000, ready: true }, // exactly at the grace boundary
    { now: 11_001, ready: false },
    { now: 1_000_000, ready: false },
  ])('after a disconnect at 1000: ready at $now = $ready', ({ now, ready }) => {
    const core = coreWith([hb('a', { lastHeartbeatMs: now })], {}, 0);
    core.markWatchDisconnected(1_000);
    expect(core.isReady(now)).toBe(ready);
    expect(pick(core, now)).toBe(ready ? 'a' : '!Unavailable');
    expect(core.unavailableReason(now) === undefined).toBe(ready);
  });

  it('records only the first disconnect of an outage', () => {
    const core = coreWith([], {}, 0);
    core.markWatchDisconnected(1_000);
    core.markWatchDisconnected(5_000);
    expect(core.watchDisconnectedAtMs).toBe(1_000);
    expect(core.isReady(11_001)).toBe(false);
  });

  it('reconnect clears the outage; a later disconnect starts a new grace', () => {
    const core = coreWith([], {}, 0);
    core.markWatchDisconnected(1_000);
    expect(core.isReady(20_000)).toBe(false);
    core.markWatchReconnected(20_000);
    expect(core.isReady(20_000)).toBe(true);
    expect(core.watchDisconnectedAtMs).toBeUndefined();
    core.markWatchDisconnected(30_000);
    expect(core.isReady(40_000)).toBe(true);
    expect(core.isReady(40_001)).toBe(false);
  });

  it('with a zero grace is Unavailable from the first millisecond after the disconnect', () => {
    const core = coreWith([], { watchGracePeriodMs: 0 }, 0);
    core.markWatchDisconnected(1_000);
    expect(core.isReady(1_000)).toBe(true);
    expect(core.isReady(1_001)).toBe(false);
  });

  it('a disconnect before initialization is kept and counts once initialized', () => {
    const core = new CoordinatorCore();
    core.markWatchDisconnected(0);
    core.applyFullWorkerList([], 5_000);
    expect(core.isReady(10_000)).toBe(true);
    expect(core.isReady(10_001)).toBe(false);
  });
});

describe('worker view', () => {
  it('a full list keeps the local fields of survivors, drops missing Workers and adds new ones at zero', () => {
    const core = coreWith([hb('a'), hb('b'), hb('c')]);
    core.recordSlotRejection('a', 100);
    core.recordSlotRejection('a', 100);
    core.recordSlotRejection('a', 100); // breaker open until 10100
    core.recordSlotTimeout('b', 100);
    core.applyFullWorkerList([hb('a', { runningTasks: 2, lastHeartbeatMs: 2_000 }), hb('b'), hb('d')], 200);
    expect(local(core, 'a')).toEqual({ count: 3, penalty: 3, deadline: 10_100 });
    expect(core.getWorker('a')?.runningTasks).toBe(2);
    expect(core.getWorker('a')?.lastHeartbeatMs).toBe(2_000);
    expect(local(core, 'b')).toEqual({ count: 1, penalty: 1, deadline: 0 });
    expect(core.getWorker('c')).toBeUndefined();
    expect(local(core, 'd')).toEqual(ZERO);
    expect(core.workerCount).toBe(3);
    expect(core.lastViewUpdateAtMs).toBe(200);
  });

  it('an update keeps the local fields and replaces the heartbeat', () => {
    const core = coreWith([hb('a')]);
    core.recordSlotRejection('a', 100);
    core.applyWorkerUpdate(hb('a', { reservedSlots: 3, cpuPercent: 0.5 }), 200);
    expect(local(core, 'a')).toEqual({ count: 1, penalty: 1, deadline: 0 });
    expect(core.getWorker('a')).toMatchObject({ reservedSlots: 3, cpuPercent: 0.5 });
  });

  it.each([
    { via: 'update', reappear: (c: CoordinatorCore) => c.applyWorkerUpdate(hb('a'), 300) },
    { via: 'full list', reappear: (c: CoordinatorCore) => c.applyFullWorkerList([hb('a')], 300) },
  ])('a Worker removed and re-added by $via starts from zero', ({ reappear }) => {
    const core = coreWith([hb('a')]);
    for (let i = 0; i < 3; i++) core.recordSlotTimeout('a', 100);
    core.applyWorkerRemoval('a', 200);
    expect(core.getWorker('a')).toBeUndefined();
    reappear(core);
    expect(local(core, 'a')).toEqual(ZERO);
    expect(pick(core, 1_000)).toBe('a');
  });

  it('removing an unknown Worker is a no-op', () => {
    const core = coreWith([hb('a')]);
    core.applyWorkerRemoval('zz', 5);
    expect(core.workerCount).toBe(1);
  });

  it('a duplicated address in a full list: the later entry wins', () => {
    const core = coreWith([hb('a', { taskSlots: 1 }), hb('a', { taskSlots: 7 })]);
    expect(core.workerCount).toBe(1);
    expect(core.getWorker('a')?.taskSlots).toBe(7);
  });

  it('rejects a heartbeat with an empty address', () => {
    const core = coreWith([]);
    expect(() => core.applyWorkerUpdate(hb(''), 0)).toThrow(CoordinatorError);
    expect(() => core.applyFullWorkerList([hb('')], 0)).toThrow(/workerAddr/);
  });

  it('getWorker returns a copy that cannot corrupt the view', () => {
    const core = coreWith([hb('a')]);
    const v = core.getWorker('a')!;
    v.circuitBreakerDeadlineMs = 1e12;
    expect(pick(core, 1_000)).toBe('a');
  });
});

describe('feedback and circuit breaker', () => {
  it.each(['recordSlotRejection', 'recordSlotTimeout'] as const)(
    '%s counts, penalises and trips at the threshold',
    (method) => {
      const core = coreWith([hb('a', { lastHeartbeatMs: 1_000 })]);
      expect(core[method]('a', 1_000)).toBe(false);
      expect(local(core, 'a')).toEqual({ count: 1, penalty: 1, deadline: 0 });
      expect(core[method]('a', 1_500)).toBe(false);
      expect(local(core, 'a')).toEqual({ count: 2, penalty: 2, deadline: 0 });
      expect(core[method]('a', 2_000)).toBe(true);
      expect(local(core, 'a')).toEqual({ count: 3, penalty: 3, deadline: 12_000 });
    },
  );

  it('rejections and timeouts accumulate together', () => {
    const core = coreWith([hb('a')]);
    core.recordSlotRejection('a', 0);
    core.recordSlotTimeout('a', 0);
    expect(core.recordSlotRejection('a', 7)).toBe(true);
    expect(local(core, 'a')?.deadline).toBe(10_007);
  });

  it('recovers after the cooldown; one more failure re-opens at once; a success resets fully', () => {
    const core = coreWith([hb('a', { lastHeartbeatMs: 1_000 })], {
      heartbeatTimeoutMs: 1_000_000,
      watchGracePeriodMs: 0,
    });
    for (let i = 0; i < 3; i++) core.recordSlotRejection('a', 1_000);
    expect(pick(core, 10_999)).toBe('!NoExecutableSlot');
    expect(pick(core, 11_000)).toBe('a'); // cooldown over: a half-open probe is allowed
    expect(core.recordSlotTimeout('a', 11_000)).toBe(true); // count 4 >= 3
    expect(local(core, 'a')).toEqual({ count: 4, penalty: 4, deadline: 21_000 });
    expect(pick(core, 20_999)).toBe('!NoExecutableSlot');
    core.recordSlotSuccess('a', 21_000);
    expect(local(core, 'a')).toEqual(ZERO);
    expect(core.recordSlotRejection('a', 21_000)).toBe(false);
    expect(core.recordSlotRejection('a', 21_000)).toBe(false);
    expect(pick(core, 21_000)).toBe('a');
  });

  it('a success clears an open breaker immediately', () => {
    const core = coreWith([hb('a')]);
    for (let i = 0; i < 3; i++) core.recordSlotRejection('a', 1_000);
    core.recordSlotSuccess('a', 1_001);
    expect(pick(core, 1_001)).toBe('a');
  });

  it('backpressure leaves count, penalty and breaker untouched', () => {
    const core = coreWith([hb('a')]);
    for (let i = 0; i < 10; i++) core.recordSlotBackpressure('a', 1_000);
    expect(local(core, 'a')).toEqual(ZERO);
    core.recordSlotRejection('a', 1_000);
    core.recordSlotRejection('a', 1_000);
    core.recordSlotRejection('a', 1_000);
    const before = local(core, 'a');
    core.recordSlotBackpressure('a', 2_000);
    expect(local(core, 'a')).toEqual(before);
  });

  it('a custom threshold and cooldown apply', () => {
    const core = coreWith([hb('a')], { circuitBreakerThreshold: 1, circuitBreakerCooldownMs: 50 });
    expect(core.recordSlotRejection('a', 100)).toBe(true);
    expect(local(core, 'a')?.deadline).toBe(150);
  });

  it('feedback about an unknown Worker is ignored', () => {
    const core = coreWith([hb('a')]);
    expect(core.recordSlotRejection('gone', 0)).toBe(false);
    expect(core.recordSlotTimeout('gone', 0)).toBe(false);
    core.recordSlotSuccess('gone', 0);
    core.recordSlotBackpressure('gone', 0);
    expect(core.workerCount).toBe(1);
  });
});

describe('apply(input)', () => {
  it('dispatches every input type like the matching method', () => {
    const inputs: CoordinatorInput[] = [
      { type: 'fullWorkerList', workers: [hb('a'), hb('b')], now: 0 },
      { type: 'workerUpdate', heartbeat: hb('c', { taskSlots: 9 }), now: 1 },
      { type: 'workerRemoval', workerAddr: 'b', now: 2 },
      { type: 'slotOutcome', workerAddr: 'a', outcome: 'rejection', now: 3 },
      { type: 'slotOutcome', workerAddr: 'a', outcome: 'timeout', now: 3 },
      { type: 'slotOutcome', workerAddr: 'c', outcome: 'timeout', now: 3 },
      { type: 'slotOutcome', workerAddr: 'c', outcome: 'success', now: 4 },
      { type: 'slotOutcome', workerAddr: 'a', outcome: 'backpressure', now: 4 },
      { type: 'watchDisconnected', now: 5 },
    ];
    const core = new CoordinatorCore();
    for (const i of inputs) core.apply(i);
    expect(core.workersSnapshot(5).map((w) => w.workerAddr)).toEqual(['a', 'c']);
    expect(local(core, 'a')).toEqual({ count: 2, penalty: 2, deadline: 0 });
    expect(local(core, 'c')).toEqual(ZERO);
    expect(core.watchDisconnectedAtMs).toBe(5);
    core.apply({ type: 'watchReconnected', now: 6 });
    expect(core.watchDisconnectedAtMs).toBeUndefined();
  });
});

describe('construction and snapshot', () => {
  it('throws a CoordinatorConfigError listing every problem of an invalid config', () => {
    const bad = { ...DEFAULT_COORDINATOR_CORE_CONFIG, maxCandidates: 0, cpuRedLine: 2 };
    let err: unknown;
    try {
      new CoordinatorCore(bad);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CoordinatorConfigError);
    expect((err as CoordinatorConfigError).code).toBe('InvalidConfig');
    expect((err as CoordinatorConfigError).problems.map((p) => p.field)).toEqual([
      'maxCandidates',
      'cpuRedLine',
    ]);
  });

  it('freezes its own copy of the config', () => {
    const cfg = { ...DEFAULT_COORDINATOR_CORE_CONFIG };
    const core = new CoordinatorCore(cfg);
    cfg.heartbeatTimeoutMs = 1;
    expect(core.config.heartbeatTimeoutMs).toBe(10_000);
    expect(Object.isFrozen(core.config)).toBe(true);
  });

  it('workersSnapshot reports slots, heartbeat age, breaker and penalty, sorted by address', () => {
    const core = coreWith([
      hb('b', { taskSlots: 8, reservedSlots: 1, runningTasks: 2, lastHeartbeatMs: 1_000 }),
      hb('a', { lastHeartbeatMs: 0 }),
    ]);
    for (let i = 0; i < 3; i++) core.recordSlotRejection('b', 4_000);
    const rows = core.workersSnapshot(10_500);
    expect(rows.map((r) => r.workerAddr)).toEqual(['a', 'b']);
    expect(rows[0]).toMatchObject({
      heartbeatAgeMs: 10_500,
      heartbeatFresh: false,
      breakerOpen: false,
      breakerDeadlineMs: undefined,
    });
    expect(rows[1]).toMatchObject({
      taskSlots: 8,
      usedSlots: 3,
      freeSlots: 5,
      heartbeatAgeMs: 9_500,
      heartbeatFresh: true,
      breakerOpen: true,
      breakerDeadlineMs: 14_000,
      recentFailureCount: 3,
      penalty: 3,
    });
    expect(core.workersSnapshot(14_000)[1]).toMatchObject({
      breakerOpen: false,
      breakerDeadlineMs: undefined,
      penalty: 3,
    });
  });
});
