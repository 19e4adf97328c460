// CoordinatorMetrics observing the real reservation loop (CoordinatorServer) against the scripted fake
// SlotReserver, on a fixed clock; fleet gauges read from the core's view at scrape time.
import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import {
  CoordinatorMetrics,
  isRoutable,
  reserveOutcomeOf,
} from '../../../../../src/services/coordinator/adapters/coordinator-metrics.js';
import { CoordinatorServer } from '../../../../../src/services/coordinator/adapters/coordinator-server.js';
import type { CoordinatorCoreConfig } from '../../../../../src/services/coordinator/core/config.js';
import { CoordinatorCore } from '../../../../../src/services/coordinator/core/coordinator-core.js';
import { DEFAULT_COORDINATOR_CORE_CONFIG } from '../../../../../src/services/coordinator/core/config.js';
import {
  CoordinatorError,
  CoordinatorErrorCode,
} from '../../../../../src/services/coordinator/core/errors.js';
import type { WorkerHeartbeat } from '../../../../../src/contracts/heartbeat.js';
import { histogram, sample } from '../../../kernel/observability/metric-values.js';
import { FakeReserver, NOW, hb, readyCore } from './fakes.js';
import type { Step } from './fakes.js';

const THREE = [hb('w1', 8), hb('w2', 6), hb('w3', 4)];

interface LogLine {
  level: string;
  fields: Record<string, unknown>;
  msg: string;
}

function setup(
  script: Record<string, Step[]> = {},
  opts: {
    workers?: readonly WorkerHeartbeat[];
    core?: Partial<CoordinatorCoreConfig>;
    uninitialized?: boolean;
    byFormat?: { legacy: number; v2: number };
  } = {},
) {
  const core = opts.uninitialized
    ? new CoordinatorCore(DEFAULT_COORDINATOR_CORE_CONFIG)
    : readyCore(opts.workers ?? THREE, opts.core);
  const registry = new Registry();
  const byFormat = opts.byFormat;
  const metrics = new CoordinatorMetrics(registry, {
    core,
    clock: () => NOW,
    ...(byFormat === undefined ? {} : { watcherStats: () => ({ byFormat }) }),
  });
  const logs: LogLine[] = [];
  const log = (level: string) => (fields: Record<string, unknown>, msg: string) =>
    void logs.push({ level, fields, msg });
  const reserver = new FakeReserver(script);
  const server = new CoordinatorServer({
    core,
    reserver,
    config: { maxTimeoutRetries: 1, workerRpcTimeoutMs: 3_000 },
    clock: () => NOW,
    logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
    observer: metrics,
  });
  const reserves = (outcome: string) => sample(registry, 'blockx_coordinator_reserve_total', { outcome });
  return { core, registry, server, reserver, logs, reserves };
}

describe('CoordinatorMetrics: reservations', () => {
  it('counts a reservation by outcome, times it, and counts the candidates tried', async () => {
    const s = setup();
    expect((await s.server.reserveWorkerSlot('t1')).ok).toBe(true);
    expect(await s.reserves('ok')).toBe(1);
    for (const outcome of ['unavailable', 'exhausted', 'aborted', 'invalid', 'internal']) {
      expect(await s.reserves(outcome), outcome).toBe(0); // reported from the start
    }
    expect(await sample(s.registry, 'blockx_coordinator_candidates_tried_total')).toBe(1);
    const { count, sum } = await histogram(s.registry, 'blockx_coordinator_reserve_duration_seconds');
    expect(count).toBe(1);
    expect(sum).toBeGreaterThanOrEqual(0);
  });

  it('an empty task id is invalid and tries no candidate', async () => {
    const s = setup();
    await s.server.reserveWorkerSlot('');
    expect(await s.reserves('invalid')).toBe(1);
    expect(await sample(s.registry, 'blockx_coordinator_candidates_tried_total')).toBe(0);
  });

  it('a core without a view is unavailable', async () => {
    const s = setup({}, { uninitialized: true });
    await s.server.reserveWorkerSlot('t');
    expect(await s.reserves('unavailable')).toBe(1);
  });

  it('every candidate rejecting is exhausted: three tried, three rejections', async () => {
    const s = setup({ w1: ['invalidSlot'], w2: ['workerUnavailable'], w3: ['transport'] });
    const r = await s.server.reserveWorkerSlot('t');
    expect(r.ok ? '' : r.error.code).toBe(CoordinatorErrorCode.AllCandidatesRejected);
    expect(await s.reserves('exhausted')).toBe(1);
    expect(await sample(s.registry, 'blockx_coordinator_candidates_tried_total')).toBe(3);
    expect(await sample(s.registry, 'blockx_coordinator_rejections_total', { outcome: 'rejection' })).toBe(3);
  });

  it('a full pool counts as backpressure, not as a rejection, and the next candidate is tried', async () => {
    const s = setup({ w1: ['noSlot'] });
    expect((await s.server.reserveWorkerSlot('t')).ok).toBe(true);
    expect(await sample(s.registry, 'blockx_coordinator_rejections_total', { outcome: 'backpressure' })).toBe(
      1,
    );
    expect(
      await sample(s.registry, 'blockx_coordinator_rejections_total', { outcome: 'rejection' }),
    ).toBeUndefined();
    expect(await sample(s.registry, 'blockx_coordinator_candidates_tried_total')).toBe(2);
  });

  it('an unconfirmed reservation is aborted; a timeout that opens the breaker counts as a trip', async () => {
    const s = setup({ w1: ['uncertain', 'uncertain'] }, { core: { circuitBreakerThreshold: 1 } });
    const r = await s.server.reserveWorkerSlot('t');
    expect(r.ok ? '' : r.error.code).toBe(CoordinatorErrorCode.SlotUncertain);
    expect(await s.reserves('aborted')).toBe(1);
    expect(await sample(s.registry, 'blockx_coordinator_candidates_tried_total')).toBe(1); // retries are not candidates
    expect(await sample(s.registry, 'blockx_coordinator_breaker_trips_total', { cause: 'timeout' })).toBe(1);
    expect(await sample(s.registry, 'blockx_coordinator_breaker_open')).toBe(1);
    expect(await sample(s.registry, 'blockx_coordinator_workers', { state: 'routable' })).toBe(2);
  });

  it('a rejection that opens the breaker counts as a trip', async () => {
    const s = setup({ w1: ['invalidSlot'] }, { core: { circuitBreakerThreshold: 1 } });
    await s.server.reserveWorkerSlot('t');
    expect(await sample(s.registry, 'blockx_coordinator_breaker_trips_total', { cause: 'rejection' })).toBe(
      1,
    );
    expect(await sample(s.registry, 'blockx_coordinator_breaker_open')).toBe(1);
  });

  it('logs every reservation at debug with its task_id, outcome and candidates', async () => {
    const s = setup({ w1: ['noSlot'] });
    await s.server.reserveWorkerSlot('task-42');
    await s.server.reserveWorkerSlot('');
    const finished = s.logs.filter((l) => l.msg === 'reservation finished');
    expect(finished.map((l) => l.level)).toEqual(['debug', 'debug']);
    expect(finished[0]?.fields).toMatchObject({
      task_id: 'task-42',
      outcome: 'ok',
      worker_addr: 'w2',
      candidates_tried: 2,
    });
    expect(finished[1]?.fields).toMatchObject({
      task_id: '',
      outcome: 'InvalidArgument',
      candidates_tried: 0,
    });
    const rejected = s.logs.find((l) => l.msg === 'worker rejected the reservation');
    expect(rejected?.fields).toMatchObject({ task_id: 'task-42', workerAddr: 'w1' });
  });

  it('an observer that throws does not fail the reservation', async () => {
    const core = readyCore(THREE);
    const server = new CoordinatorServer({
      core,
      reserver: new FakeReserver(),
      clock: () => NOW,
      observer: {
        onReservation: () => {
          throw new Error('observer bug');
        },
      },
    });
    expect((await server.reserveWorkerSlot('t')).ok).toBe(true);
  });
});

describe('CoordinatorMetrics: the fleet at scrape time', () => {
  it('blockx_coordinator_workers: known, fresh, routable', async () => {
    const s = setup(
      {},
      {
        workers: [
          hb('ok-1'),
          hb('ok-2'),
          hb('stale', 4, { lastHeartbeatMs: NOW - 10_001 }),
          hb('hot', 4, { cpuPercent: 0.95 }),
          hb('full', 4, { reservedSlots: 2, runningTasks: 2 }),
        ],
      },
    );
    const workers = (state: string) => sample(s.registry, 'blockx_coordinator_workers', { state });
    expect([await workers('known'), await workers('fresh'), await workers('routable')]).toEqual([5, 4, 2]);
    expect(await sample(s.registry, 'blockx_coordinator_breaker_open')).toBe(0);
  });

  it('blockx_coordinator_ready is 1 with a trusted view and 0 without one', async () => {
    expect(await sample(setup().registry, 'blockx_coordinator_ready')).toBe(1);
    expect(await sample(setup({}, { uninitialized: true }).registry, 'blockx_coordinator_ready')).toBe(0);
  });

  it('blockx_coordinator_registry_workers by prefix format, from the watcher stats', async () => {
    const s = setup({}, { byFormat: { legacy: 3, v2: 1 } });
    expect(await sample(s.registry, 'blockx_coordinator_registry_workers', { format: 'legacy' })).toBe(3);
    expect(await sample(s.registry, 'blockx_coordinator_registry_workers', { format: 'v2' })).toBe(1);
    expect(setup().registry.getSingleMetric('blockx_coordinator_registry_workers')).toBeUndefined();
  });
});

describe('reserveOutcomeOf', () => {
  const failed = (code: CoordinatorErrorCode) => ({
    ok: false as const,
    error: new CoordinatorError(code, 'x'),
  });
  it.each([
    [CoordinatorErrorCode.InvalidArgument, 'invalid'],
    [CoordinatorErrorCode.Unavailable, 'unavailable'],
    [CoordinatorErrorCode.NoExecutableSlot, 'exhausted'],
    [CoordinatorErrorCode.AllCandidatesRejected, 'exhausted'],
    [CoordinatorErrorCode.NoSlot, 'exhausted'],
    [CoordinatorErrorCode.SlotUncertain, 'aborted'],
    [CoordinatorErrorCode.InvalidSlot, 'internal'],
    [CoordinatorErrorCode.NotFound, 'internal'],
    [CoordinatorErrorCode.Internal, 'internal'],
    [CoordinatorErrorCode.InvalidConfig, 'internal'],
  ])('%s → %s', (code, outcome) => {
    expect(reserveOutcomeOf(failed(code))).toBe(outcome);
  });

  it('covers every error code, success and a thrown reservation', () => {
    expect(reserveOutcomeOf({ ok: true, taskId: 't', workerAddr: 'w', slotId: 's' })).toBe('ok');
    expect(reserveOutcomeOf(undefined)).toBe('internal');
    for (const code of Object.values(CoordinatorErrorCode)) {
      expect(['invalid', 'unavailable', 'exhausted', 'aborted', 'internal']).toContain(
        reserveOutcomeOf(failed(code)),
      );
    }
  });
});

describe('isRoutable', () => {
  it('matches the selection filters at their edges (red line and timeout inclusive)', () => {
    const core = readyCore([
      hb('edge', 4, { cpuPercent: 0.9, lastHeartbeatMs: NOW - 10_000 }),
      hb('over', 4, { errorRate: 0.51 }),
    ]);
    const rows = core.workersSnapshot(NOW);
    expect(rows.map((w) => [w.workerAddr, isRoutable(w, core.config)])).toEqual([
      ['edge', true],
      ['over', false],
    ]);
    // The same verdict as selection: the routable one is what selectCandidate picks.
    expect(core.selectCandidate('t', [], NOW)).toEqual({ ok: true, workerAddr: 'edge' });
  });
});
