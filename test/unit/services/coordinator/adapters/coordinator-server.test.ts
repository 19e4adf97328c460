// The ReserveWorkerSlot orchestration (docs/coordinator.md § ReserveWorkerSlot) against a scripted fake
// SlotReserver, on a fixed clock. Workers w1 > w2 > w3 by free capacity, so candidates come in that order.
import { describe, expect, it } from 'vitest';
import {
  ALL_CANDIDATES_REJECTED,
  CoordinatorServer,
  UNABLE_TO_CONFIRM,
  slotOutcomeOf,
} from '../../../../../src/services/coordinator/adapters/coordinator-server.js';
import type { ReserveResult } from '../../../../../src/services/coordinator/adapters/coordinator-server.js';
import { SlotError } from '../../../../../src/services/coordinator/adapters/slot-reserver.js';
import { CoordinatorCore } from '../../../../../src/services/coordinator/core/coordinator-core.js';
import { DEFAULT_COORDINATOR_CORE_CONFIG } from '../../../../../src/services/coordinator/core/config.js';
import type { CoordinatorCoreConfig } from '../../../../../src/services/coordinator/core/config.js';
import { FakeReserver, NOW, hb, readyCore } from './fakes.js';
import type { Step } from './fakes.js';

const THREE = [hb('w1', 8), hb('w2', 6), hb('w3', 4)];

function setup(
  script: Record<string, Step[]>,
  opts: { workers?: typeof THREE; core?: Partial<CoordinatorCoreConfig>; maxTimeoutRetries?: number } = {},
) {
  const core = readyCore(opts.workers ?? THREE, opts.core);
  const reserver = new FakeReserver(script);
  const server = new CoordinatorServer({
    core,
    reserver,
    config: { maxTimeoutRetries: opts.maxTimeoutRetries ?? 1, workerRpcTimeoutMs: 3_000 },
    clock: () => NOW,
  });
  return { core, reserver, server };
}

function errorOf(r: ReserveResult): { code: string; message: string } {
  if (r.ok) throw new Error(`expected a failure, got ${JSON.stringify(r)}`);
  return { code: r.error.code, message: r.error.message };
}

describe('CoordinatorServer.reserveWorkerSlot', () => {
  it('reserves on the best candidate and passes ttl_ms = slotTtlMs and the rpc timeout', async () => {
    const { server, reserver, core } = setup({}, { core: { slotTtlMs: 4_321 } });
    const r = await server.reserveWorkerSlot('task-1');
    expect(r).toEqual({ ok: true, taskId: 'task-1', workerAddr: 'w1', slotId: 'slot-w1-1' });
    expect(reserver.calls).toEqual([{ workerAddr: 'w1', taskId: 'task-1', ttlMs: 4_321, timeoutMs: 3_000 }]);
    expect(core.getWorker('w1')?.recentFailureCount).toBe(0);
  });

  it('rejects an empty task id with InvalidArgument and contacts no worker', async () => {
    const { server, reserver } = setup({});
    expect(errorOf(await server.reserveWorkerSlot('')).code).toBe('InvalidArgument');
    expect(reserver.calls).toHaveLength(0);
  });

  it('is Unavailable before the first full view, without contacting a worker', async () => {
    const core = new CoordinatorCore(DEFAULT_COORDINATOR_CORE_CONFIG);
    const reserver = new FakeReserver();
    const server = new CoordinatorServer({ core, reserver, clock: () => NOW });
    expect(errorOf(await server.reserveWorkerSlot('t')).code).toBe('Unavailable');
    expect(reserver.calls).toHaveLength(0);
  });

  it('is Unavailable once the watch has been down longer than the grace, without contacting a worker', async () => {
    const { server, reserver, core } = setup({}, { core: { watchGracePeriodMs: 1_000 } });
    core.markWatchDisconnected(NOW - 1_001);
    const e = errorOf(await server.reserveWorkerSlot('t'));
    expect(e.code).toBe('Unavailable');
    expect(e.message).toMatch(/disconnected/);
    expect(reserver.calls).toHaveLength(0);
  });

  it('keeps routing while the watch is down within the grace', async () => {
    const { server, core } = setup({}, { core: { watchGracePeriodMs: 1_000 } });
    core.markWatchDisconnected(NOW - 1_000);
    expect((await server.reserveWorkerSlot('t')).ok).toBe(true);
  });

  it('switches to the next candidate after an explicit rejection and counts it against the worker', async () => {
    const { server, reserver, core } = setup({ w1: ['invalidSlot'] });
    const r = await server.reserveWorkerSlot('t');
    expect(r).toMatchObject({ ok: true, workerAddr: 'w2' });
    expect(reserver.contacted).toEqual(['w1', 'w2']);
    expect(core.getWorker('w1')).toMatchObject({ recentFailureCount: 1, penalty: 1 });
  });

  it('treats a full pool (NoSlot) as backpressure: next candidate, nothing counted', async () => {
    const { server, reserver, core } = setup({ w1: ['noSlot'] });
    expect(await server.reserveWorkerSlot('t')).toMatchObject({ ok: true, workerAddr: 'w2' });
    expect(reserver.contacted).toEqual(['w1', 'w2']);
    expect(core.getWorker('w1')).toMatchObject({
      recentFailureCount: 0,
      penalty: 0,
      circuitBreakerDeadlineMs: 0,
    });
  });

  it('backpressure never opens the breaker, rejections do at the threshold', async () => {
    const pressure = setup(
      { w1: ['noSlot', 'noSlot', 'noSlot', 'noSlot'] },
      { workers: [hb('w1', 8), hb('w2', 6)] },
    );
    for (let i = 0; i < 4; i++) await pressure.server.reserveWorkerSlot(`t${i}`);
    expect(pressure.core.getWorker('w1')?.circuitBreakerDeadlineMs).toBe(0);

    const failing = setup(
      { w1: ['invalidSlot', 'invalidSlot', 'invalidSlot'] },
      {
        workers: [hb('w1', 8), hb('w2', 6)],
        core: { circuitBreakerThreshold: 3, circuitBreakerCooldownMs: 10_000 },
      },
    );
    for (let i = 0; i < 3; i++) await failing.server.reserveWorkerSlot(`t${i}`);
    expect(failing.core.getWorker('w1')?.circuitBreakerDeadlineMs).toBe(NOW + 10_000);
    failing.reserver.calls.length = 0;
    expect(await failing.server.reserveWorkerSlot('after')).toMatchObject({ ok: true, workerAddr: 'w2' });
    expect(failing.reserver.contacted).toEqual(['w2']);
  });

  it('a worker whose executor restarts is busy, not failing: no breaker count, routable once it is back', async () => {
    // Issue 31: 8 answers of "not ready" in a row (an executor restarting under load) used to open the
    // breaker and hold the worker out for its cooldown after the executor was back.
    const limits = { circuitBreakerThreshold: 3, circuitBreakerCooldownMs: 10_000 };
    const restarting = setup(
      { w1: Array<Step>(8).fill('executorRestarting') },
      // w1 stays first (most free slots) while w2 takes the 8 reservations.
      { workers: [hb('w1', 30), hb('w2', 20)], core: limits },
    );
    for (let i = 0; i < 8; i++) {
      expect(await restarting.server.reserveWorkerSlot(`t${i}`)).toMatchObject({
        ok: true,
        workerAddr: 'w2',
      });
    }
    expect(restarting.core.getWorker('w1')).toMatchObject({
      circuitBreakerDeadlineMs: 0,
      recentFailureCount: 0,
      penalty: 0,
    });
    restarting.reserver.calls.length = 0;
    // Its executor is ready again: the very next reservation (same virtual instant) lands on it.
    expect(await restarting.server.reserveWorkerSlot('back')).toMatchObject({ ok: true, workerAddr: 'w1' });
    expect(restarting.reserver.contacted).toEqual(['w1']);

    // A draining worker is going away: that still counts, and opens the breaker at the threshold.
    const draining = setup(
      { w1: Array<Step>(3).fill('draining') },
      { workers: [hb('w1', 8), hb('w2', 6)], core: limits },
    );
    for (let i = 0; i < 3; i++) await draining.server.reserveWorkerSlot(`t${i}`);
    expect(draining.core.getWorker('w1')?.circuitBreakerDeadlineMs).toBe(NOW + 10_000);
  });

  it('moves to the next worker after a transport failure (connection refused)', async () => {
    const { server, reserver, core } = setup({ w1: ['transport'] });
    expect(await server.reserveWorkerSlot('t')).toMatchObject({ ok: true, workerAddr: 'w2' });
    expect(reserver.contacted).toEqual(['w1', 'w2']);
    expect(core.getWorker('w1')?.recentFailureCount).toBe(1);
  });

  it('retries the same worker with the same task id after an uncertain outcome, then succeeds', async () => {
    const { server, reserver, core } = setup({ w1: ['uncertain', 'ok'] });
    expect(await server.reserveWorkerSlot('t')).toMatchObject({ ok: true, workerAddr: 'w1' });
    expect(reserver.calls.map((c) => [c.workerAddr, c.taskId])).toEqual([
      ['w1', 't'],
      ['w1', 't'],
    ]);
    expect(core.getWorker('w1')?.recentFailureCount).toBe(0);
  });

  it('treats a success with an empty slot id as uncertain and retries the same worker', async () => {
    const { server, reserver } = setup({ w1: ['emptySlot', 'ok'] });
    expect(await server.reserveWorkerSlot('t')).toMatchObject({
      ok: true,
      workerAddr: 'w1',
      slotId: 'slot-w1-2',
    });
    expect(reserver.contacted).toEqual(['w1', 'w1']);
  });

  it('a worker holding a retained result of the task id answers it: routed there, never run elsewhere', async () => {
    const { server, reserver, core } = setup({ w1: ['retained'] });
    expect(await server.reserveWorkerSlot('t')).toEqual({
      ok: true,
      taskId: 't',
      workerAddr: 'w1',
      slotId: '',
    });
    expect(reserver.contacted).toEqual(['w1']);
    expect(core.getWorker('w1')?.recentFailureCount).toBe(0);
  });

  it('returns Aborted (SlotUncertain) when still uncertain after the retries, never trying another worker', async () => {
    const { server, reserver, core } = setup(
      { w1: ['uncertain', 'emptySlot', 'uncertain'] },
      { maxTimeoutRetries: 2 },
    );
    const e = errorOf(await server.reserveWorkerSlot('t'));
    expect(e).toEqual({ code: 'SlotUncertain', message: UNABLE_TO_CONFIRM });
    expect(reserver.contacted).toEqual(['w1', 'w1', 'w1']);
    expect(core.getWorker('w1')?.recentFailureCount).toBe(1);
  });

  it('with maxTimeoutRetries 0 an uncertain outcome is final at once', async () => {
    const { server, reserver } = setup({ w1: ['uncertain'] }, { maxTimeoutRetries: 0 });
    expect(errorOf(await server.reserveWorkerSlot('t')).code).toBe('SlotUncertain');
    expect(reserver.contacted).toEqual(['w1']);
  });

  it('moves on when the worker explicitly rejects during the retries', async () => {
    const { server, reserver, core } = setup({ w1: ['uncertain', 'noSlot'] });
    expect(await server.reserveWorkerSlot('t')).toMatchObject({ ok: true, workerAddr: 'w2' });
    expect(reserver.contacted).toEqual(['w1', 'w1', 'w2']);
    expect(core.getWorker('w1')?.recentFailureCount).toBe(0); // backpressure, and no timeout recorded
  });

  it('returns ResourceExhausted "all candidates rejected" when every candidate rejects', async () => {
    const { server, reserver } = setup({ w1: ['noSlot'], w2: ['invalidSlot'], w3: ['workerUnavailable'] });
    const e = errorOf(await server.reserveWorkerSlot('t'));
    expect(e).toEqual({ code: 'AllCandidatesRejected', message: ALL_CANDIDATES_REJECTED });
    expect(reserver.contacted).toEqual(['w1', 'w2', 'w3']);
  });

  it('tries at most maxCandidates workers', async () => {
    const { server, reserver } = setup({ w1: ['noSlot'], w2: ['noSlot'] }, { core: { maxCandidates: 2 } });
    expect(errorOf(await server.reserveWorkerSlot('t')).code).toBe('AllCandidatesRejected');
    expect(reserver.contacted).toEqual(['w1', 'w2']);
  });

  it('reports all rejected when the view runs out of candidates after rejections', async () => {
    const { server, reserver } = setup(
      { w1: ['noSlot'], w2: ['noSlot'] },
      { workers: [hb('w1', 8), hb('w2', 6)] },
    );
    expect(errorOf(await server.reserveWorkerSlot('t')).code).toBe('AllCandidatesRejected');
    expect(reserver.contacted).toEqual(['w1', 'w2']);
  });

  it('returns NoExecutableSlot (no worker contacted) when no worker has free capacity', async () => {
    const full = [hb('w1', 2, { reservedSlots: 2 }), hb('w2', 1, { runningTasks: 1 })];
    const { server, reserver } = setup({}, { workers: full });
    expect(errorOf(await server.reserveWorkerSlot('t')).code).toBe('NoExecutableSlot');
    expect(reserver.calls).toHaveLength(0);
  });

  it('is Unavailable when every heartbeat timed out', async () => {
    const stale = [hb('w1', 4, { lastHeartbeatMs: NOW - 60_000 })];
    const { server, reserver } = setup({}, { workers: stale });
    expect(errorOf(await server.reserveWorkerSlot('t')).code).toBe('Unavailable');
    expect(reserver.calls).toHaveLength(0);
  });

  it('stops and does not blame the worker when the caller cancels', async () => {
    const { server, reserver, core } = setup({ w1: ['uncertain', 'uncertain'] });
    const abort = new AbortController();
    const original = reserver.requestTaskSlot.bind(reserver);
    reserver.requestTaskSlot = async (addr, req, opts) => {
      const r = await original(addr, req, opts);
      abort.abort();
      return r;
    };
    const e = errorOf(await server.reserveWorkerSlot('t', abort.signal));
    expect(e.code).toBe('SlotUncertain');
    expect(reserver.contacted).toEqual(['w1']);
    expect(core.getWorker('w1')?.recentFailureCount).toBe(0);
  });

  it('rejects invalid handler config', () => {
    const core = readyCore(THREE);
    const reserver = new FakeReserver();
    expect(() => new CoordinatorServer({ core, reserver, config: { maxTimeoutRetries: -1 } })).toThrow(
      RangeError,
    );
    expect(() => new CoordinatorServer({ core, reserver, config: { workerRpcTimeoutMs: 0 } })).toThrow(
      RangeError,
    );
  });
});

describe('slotOutcomeOf', () => {
  it.each([
    ['NoSlot', 'backpressure'],
    ['InvalidSlot', 'rejection'],
    ['InvalidArgument', 'rejection'],
    ['NotFound', 'rejection'],
    ['Unavailable', 'rejection'],
    ['Internal', 'rejection'],
  ] as const)('%s → %s', (code, outcome) => {
    expect(slotOutcomeOf(new SlotError(code, 'rejected', 'x'))).toBe(outcome);
  });
});
