// EtcdWorkerWatcher + EtcdRegistryReader against a REAL etcd: list+watch per prefix, multi-prefix merge,
// skipping garbage values, readiness across an etcd crash (within and beyond the grace), and a restart
// with an empty data dir (the revision goes backwards; a full re-list still sees everything), and the
// registry's trust rules (issue 16): a key without a lease is never routed to, nor a heartbeat from the
// future beyond maxClockSkewMs.
import type { ServiceLogger } from '../../src/kernel/observability/service-logger.js';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CoordinatorServer } from '../../src/services/coordinator/adapters/coordinator-server.js';
import { EtcdWorkerWatcher } from '../../src/services/coordinator/adapters/etcd-worker-watcher.js';
import { CoordinatorCore } from '../../src/services/coordinator/core/coordinator-core.js';
import { DEFAULT_COORDINATOR_CORE_CONFIG } from '../../src/services/coordinator/core/config.js';
import { EtcdRegistryReader } from '../../src/services/registry/etcd-registry-reader.js';
import { encodeWorkerHeartbeat } from '../../src/contracts/heartbeat.js';
import type { WorkerHeartbeat } from '../../src/contracts/heartbeat.js';
import { startEtcd } from '../support/etcd.js';
import type { EtcdServer } from '../support/etcd.js';
import { eventually } from '../support/eventually.js';

const LEGACY = '/blockx/bundle-workers/';
const V2 = '/blockx/prod/lanes/default/bundle-workers/';
const GRACE_MS = 1_500;

function hb(workerAddr: string, over: Partial<WorkerHeartbeat> = {}): WorkerHeartbeat {
  return {
    workerAddr,
    taskSlots: 4,
    reservedSlots: 0,
    runningTasks: 0,
    cpuPercent: 0.1,
    memoryPercent: 0.2,
    memoryAvailableBytes: 1_000,
    memoryTotalBytes: 2_000,
    processRssBytes: 100,
    errorRate: 0,
    lastHeartbeatMs: Date.now(),
    ...over,
  };
}

// How this file has always polled: every 20 ms, for 10_000 ms unless a call says otherwise.
const POLL = { timeoutMs: 10_000, intervalMs: 20 } as const;

describe('EtcdWorkerWatcher on a real etcd', () => {
  let etcd: EtcdServer;
  let raw: Etcd3;
  const running: { watcher: EtcdWorkerWatcher; reader: EtcdRegistryReader }[] = [];
  const warnings: Record<string, unknown>[] = [];
  const logger: ServiceLogger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (o) => void warnings.push(o),
    error: () => undefined,
  };

  beforeAll(async () => {
    etcd = await startEtcd();
    raw = new Etcd3({ hosts: etcd.endpoint });
  });

  afterEach(async () => {
    for (const r of running.splice(0)) {
      await r.watcher.stop();
      await r.reader.close();
    }
    warnings.length = 0;
    if (etcd.pid === undefined) await etcd.restart();
    await raw.delete().prefix('/blockx/');
  });

  /** Real Workers write under a lease; the watcher ignores lease-less keys (docs/security.md). */
  const leased = () => raw.lease(60, { autoKeepAlive: false });

  afterAll(async () => {
    raw?.close();
    await etcd?.stop();
  });

  function start(
    prefixes = [
      { prefix: LEGACY, format: 'legacy' as const },
      { prefix: V2, format: 'v2' as const },
    ],
  ) {
    const core = new CoordinatorCore({ ...DEFAULT_COORDINATOR_CORE_CONFIG, watchGracePeriodMs: GRACE_MS });
    const server = new CoordinatorServer({
      core,
      reserver: { requestTaskSlot: () => Promise.reject(new Error('unused')) },
    });
    const reader = new EtcdRegistryReader({ endpoints: [etcd.endpoint], retryDelayMs: 100, logger });
    const watcher = new EtcdWorkerWatcher({ reader, prefixes, server, logger });
    watcher.start();
    running.push({ watcher, reader });
    const view = (): Record<string, number> =>
      Object.fromEntries(core.workersSnapshot(Date.now()).map((s) => [s.workerAddr, s.taskSlots]));
    return { core, watcher, view };
  }

  it('lists then watches every prefix and merges them per worker', async () => {
    const t = Date.now();
    await leased()
      .put(`${LEGACY}a:1`)
      .value(encodeWorkerHeartbeat(hb('a:1', { taskSlots: 1, lastHeartbeatMs: t })));
    await leased()
      .put(`${V2}a:1`)
      .value(encodeWorkerHeartbeat(hb('a:1', { taskSlots: 2, lastHeartbeatMs: t })));
    const { core, view } = start();
    await eventually(() => core.isInitialized, { ...POLL, message: 'initial view' });
    expect(view()).toEqual({ 'a:1': 2 }); // same heartbeat time: v2 wins

    await leased()
      .put(`${LEGACY}a:1`)
      .value(encodeWorkerHeartbeat(hb('a:1', { taskSlots: 3, lastHeartbeatMs: t + 10 })));
    await leased()
      .put(`${LEGACY}b:1`)
      .value(encodeWorkerHeartbeat(hb('b:1', { taskSlots: 5 })));
    await eventually(() => view()['a:1'] === 3 && view()['b:1'] === 5, { ...POLL, message: 'watched puts' });

    await raw.delete().key(`${LEGACY}a:1`);
    await eventually(() => view()['a:1'] === 2, { ...POLL, message: 'fallback to the v2 entry' });
    await raw.delete().key(`${V2}a:1`);
    await eventually(() => !('a:1' in view()), { ...POLL, message: 'removal once gone from every prefix' });
    expect(view()).toEqual({ 'b:1': 5 });
  });

  it('the probe: a lease-less forged key and a leased key from the future are never chosen', async () => {
    const now = Date.now();
    // Forged without a lease: a huge pool and a heartbeat that never ages (2^53 - 1).
    await raw
      .put(`${LEGACY}forged:1`)
      .value(
        encodeWorkerHeartbeat(
          hb('forged:1', { taskSlots: 100_000, lastHeartbeatMs: Number.MAX_SAFE_INTEGER }),
        ),
      );
    // Leased, but stamped an hour ahead of the coordinator's clock (beyond maxClockSkewMs).
    await leased()
      .put(`${LEGACY}future:1`)
      .value(encodeWorkerHeartbeat(hb('future:1', { taskSlots: 1_000, lastHeartbeatMs: now + 3_600_000 })));
    await leased()
      .put(`${LEGACY}real:1`)
      .value(encodeWorkerHeartbeat(hb('real:1', { lastHeartbeatMs: now })));
    const { core, watcher } = start([{ prefix: LEGACY, format: 'legacy' }]);
    await eventually(() => core.isInitialized, { ...POLL, message: 'initial view' });
    expect(core.workersSnapshot(Date.now()).map((w) => [w.workerAddr, w.heartbeatFresh])).toEqual([
      ['future:1', false],
      ['real:1', true],
    ]);
    expect(watcher.stats.unleasedValues).toBe(1);
    expect(warnings).toEqual([{ key: `${LEGACY}forged:1`, reason: 'no lease' }]);
    for (let i = 0; i < 10; i++) {
      expect(core.selectCandidate(`t${i}`, [], Date.now())).toMatchObject({ ok: true, workerAddr: 'real:1' });
    }

    // A watched lease-less put is ignored as well, and overwriting a real key without a lease drops it.
    await raw.put(`${LEGACY}forged:2`).value(encodeWorkerHeartbeat(hb('forged:2', { taskSlots: 100_000 })));
    await raw.put(`${LEGACY}real:1`).value(encodeWorkerHeartbeat(hb('real:1', { taskSlots: 100_000 })));
    await eventually(() => watcher.stats.unleasedValues === 3, {
      ...POLL,
      message: 'watched lease-less puts',
    });
    expect(core.workersSnapshot(Date.now()).map((w) => w.workerAddr)).toEqual(['future:1']);
    expect(core.selectCandidate('t-last', [], Date.now())).toMatchObject({
      ok: false,
      error: { code: 'Unavailable' },
    });
  });

  it('skips garbage values with a warning and keeps the valid ones', async () => {
    await leased().put(`${LEGACY}garbage:1`).value('{"workerAddr": "garbage:1", "taskSlots": "many"');
    await leased()
      .put(`${LEGACY}good:1`)
      .value(encodeWorkerHeartbeat(hb('good:1')));
    const { core, view, watcher } = start();
    await eventually(() => core.isInitialized, { ...POLL, message: 'initial view' });
    expect(view()).toEqual({ 'good:1': 4 });
    await leased()
      .put(`${V2}wrong:1`)
      .value(encodeWorkerHeartbeat(hb('not-the-key:1')));
    await eventually(() => watcher.stats.skippedValues === 2, { ...POLL, message: 'second skip' });
    expect(view()).toEqual({ 'good:1': 4 });
    expect(warnings.map((w) => w['key'])).toEqual([`${LEGACY}garbage:1`, `${V2}wrong:1`]);
  });

  it('stays ready through an etcd crash shorter than the grace and catches up after it', async () => {
    await leased()
      .put(`${LEGACY}a:1`)
      .value(encodeWorkerHeartbeat(hb('a:1')));
    const { core, view } = start();
    await eventually(() => core.isInitialized, { ...POLL, message: 'initial view' });

    await etcd.kill();
    await eventually(() => core.watchDisconnectedAtMs !== undefined, {
      ...POLL,
      timeoutMs: 5_000,
      message: 'disconnect noticed',
    });
    expect(core.isReady(Date.now())).toBe(true);
    await etcd.restart();
    const restartedAt = Date.now();
    await eventually(() => core.watchDisconnectedAtMs === undefined, {
      ...POLL,
      timeoutMs: 5_000,
      message: 'reconnected',
    });
    expect(Date.now() - restartedAt).toBeLessThan(GRACE_MS);
    expect(core.isReady(Date.now())).toBe(true);

    await leased()
      .put(`${V2}b:1`)
      .value(encodeWorkerHeartbeat(hb('b:1')));
    await eventually(() => 'b:1' in view(), { ...POLL, message: 'watch live again' });
    expect(Object.keys(view()).sort()).toEqual(['a:1', 'b:1']);
  });

  it('turns unready beyond the grace and ready again once etcd is back', async () => {
    await leased()
      .put(`${LEGACY}a:1`)
      .value(encodeWorkerHeartbeat(hb('a:1')));
    const { core } = start();
    await eventually(() => core.isInitialized, { ...POLL, message: 'initial view' });
    await etcd.kill();
    await eventually(() => !core.isReady(Date.now()), {
      ...POLL,
      timeoutMs: GRACE_MS + 5_000,
      message: 'not ready beyond the grace',
    });
    expect(Date.now() - (core.watchDisconnectedAtMs ?? 0)).toBeGreaterThan(GRACE_MS);
    await etcd.restart();
    await eventually(() => core.isReady(Date.now()), { ...POLL, timeoutMs: 5_000, message: 'ready again' });
  });

  it('re-lists after etcd comes back with an empty data dir (revision went backwards)', async () => {
    for (let i = 0; i < 20; i++) await leased().put(`${LEGACY}churn`).value(String(i)); // push the revision up
    await leased()
      .put(`${LEGACY}old:1`)
      .value(encodeWorkerHeartbeat(hb('old:1')));
    const { core, view } = start([{ prefix: LEGACY, format: 'legacy' }]);
    await eventually(() => core.isInitialized, { ...POLL, message: 'initial view' });
    expect(Object.keys(view())).toEqual(['old:1']);

    await etcd.kill();
    await rm(join(etcd.dataDir, 'member'), { recursive: true, force: true });
    await etcd.restart();
    await eventually(() => Object.keys(view()).length === 0, {
      ...POLL,
      timeoutMs: 5_000,
      message: 're-listed the empty registry',
    });
    await leased()
      .put(`${LEGACY}new:1`)
      .value(encodeWorkerHeartbeat(hb('new:1')));
    await eventually(() => 'new:1' in view(), {
      ...POLL,
      timeoutMs: 5_000,
      message: 'watch sees writes at the new, lower revisions',
    });
    expect(warnings.some((w) => 'lastRevision' in w)).toBe(true);
  });
});
