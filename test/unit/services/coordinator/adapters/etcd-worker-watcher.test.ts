// The watcher's rules on a virtual clock, fed by the in-process registry (the same event contract as
// etcd; test/e2e/coordinator-watcher.test.ts runs the same rules against a real etcd).
import type { ServiceLogger } from '../../../../../src/kernel/observability/service-logger.js';
import { describe, expect, it } from 'vitest';
import { CoordinatorServer } from '../../../../../src/services/coordinator/adapters/coordinator-server.js';
import { EtcdWorkerWatcher } from '../../../../../src/services/coordinator/adapters/etcd-worker-watcher.js';
import { CoordinatorCore } from '../../../../../src/services/coordinator/core/coordinator-core.js';
import { DEFAULT_COORDINATOR_CORE_CONFIG } from '../../../../../src/services/coordinator/core/config.js';
import { InProcessRegistry } from '../../../../../src/services/registry/in-process-registry.js';
import { FakeReserver, hb } from './fakes.js';

const LEGACY = '/blockx/bundle-workers/';
const V2 = '/blockx/prod/lanes/default/bundle-workers/';
const flush = (): Promise<void> => new Promise((r) => setImmediate(r));

function setup(
  prefixes = [
    { prefix: LEGACY, format: 'legacy' as const },
    { prefix: V2, format: 'v2' as const },
  ],
) {
  const clock = { now: 10_000 };
  const core = new CoordinatorCore({ ...DEFAULT_COORDINATOR_CORE_CONFIG, watchGracePeriodMs: 1_000 });
  const server = new CoordinatorServer({ core, reserver: new FakeReserver(), clock: () => clock.now });
  const registry = new InProcessRegistry();
  const warnings: Record<string, unknown>[] = [];
  const logger: ServiceLogger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (obj) => void warnings.push(obj),
    error: () => undefined,
  };
  const removed: string[] = [];
  let changes = 0;
  const watcher = new EtcdWorkerWatcher({
    reader: registry,
    prefixes,
    server,
    clock: () => clock.now,
    logger,
    onWorkerRemoved: (a) => removed.push(a),
    onCoreChanged: () => changes++,
  });
  return { clock, core, registry, watcher, warnings, removed, changes: () => changes };
}

describe('EtcdWorkerWatcher', () => {
  it('initializes the core only after every prefix has listed, with the merged view', async () => {
    const { core, registry, watcher } = setup();
    const w = registry.writer();
    await w.publish(LEGACY, hb('a:1', 4, { lastHeartbeatMs: 9_000 }));
    await w.publish(V2, hb('a:1', 6, { lastHeartbeatMs: 9_000 })); // tie on time: v2 wins
    await w.publish(LEGACY, hb('b:1', 4, { lastHeartbeatMs: 9_500 }));
    await w.publish(V2, hb('b:1', 2, { lastHeartbeatMs: 9_400 })); // older: legacy wins
    watcher.start();
    expect(core.isInitialized).toBe(false);
    await flush();
    expect(core.isInitialized).toBe(true);
    expect(core.workersSnapshot(10_000).map((s) => [s.workerAddr, s.taskSlots])).toEqual([
      ['a:1', 6],
      ['b:1', 4],
    ]);
    await watcher.stop();
  });

  it('applies updates and removes a worker only once it is gone from every prefix', async () => {
    const { core, registry, watcher, removed } = setup();
    const w = registry.writer();
    watcher.start();
    await flush();
    await w.publish(LEGACY, hb('a:1', 4));
    await w.publish(V2, hb('a:1', 4));
    await flush();
    expect(core.workerCount).toBe(1);
    await w.remove(V2, 'a:1');
    await flush();
    expect(core.workerCount).toBe(1);
    expect(removed).toEqual([]);
    await w.remove(LEGACY, 'a:1');
    await flush();
    expect(core.workerCount).toBe(0);
    expect(removed).toEqual(['a:1']);
    await watcher.stop();
  });

  it('skips unparseable values with one warning per key and value, and drops a key that turned bad', async () => {
    const { core, registry, watcher, warnings } = setup();
    registry.putRaw(`${LEGACY}bad:1`, '{not json');
    registry.putRaw(`${LEGACY}mismatch:1`, JSON.stringify(hb('other:1')));
    await registry.writer().publish(LEGACY, hb('good:1'));
    watcher.start();
    await flush();
    expect(core.workersSnapshot(10_000).map((s) => s.workerAddr)).toEqual(['good:1']);
    expect(warnings.map((w) => w['key'])).toEqual([`${LEGACY}bad:1`, `${LEGACY}mismatch:1`]);
    expect(watcher.stats.skippedValues).toBe(2);

    registry.putRaw(`${LEGACY}good:1`, JSON.stringify({ ...hb('good:1'), taskSlots: -1 }));
    await flush();
    expect(core.workerCount).toBe(0);
    expect(warnings).toHaveLength(3);

    // A re-list does not repeat warnings for values already reported.
    registry.simulateDisconnect();
    registry.simulateReconnect();
    await flush();
    expect(warnings.filter((w) => w['key'] !== undefined)).toHaveLength(3);
    await watcher.stop();
  });

  it('ignores keys without a lease: never in the view, one warning per key, counted', async () => {
    const { core, watcher, warnings } = setup([{ prefix: LEGACY, format: 'legacy' }]);
    const value = (addr: string, slots: number): string => JSON.stringify(hb(addr, slots));
    const list = (): void =>
      watcher.onEvent({
        type: 'list',
        prefix: LEGACY,
        entries: [
          { key: `${LEGACY}forged:1`, value: value('forged:1', 100_000), lease: '0' },
          { key: `${LEGACY}real:1`, value: value('real:1', 4), lease: '7587' },
          { key: `${LEGACY}inproc:1`, value: value('inproc:1', 2) }, // no lease info: accepted
        ],
      });
    list();
    await flush();
    expect(core.workersSnapshot(10_000).map((s) => s.workerAddr)).toEqual(['inproc:1', 'real:1']);
    expect(warnings).toEqual([{ key: `${LEGACY}forged:1`, reason: 'no lease' }]);
    expect(watcher.stats).toMatchObject({ unleasedValues: 1, skippedValues: 0 });

    // A re-list counts it again but does not warn again.
    list();
    await flush();
    expect(warnings).toHaveLength(1);
    expect(watcher.stats.unleasedValues).toBe(2);

    // A real worker's key overwritten without a lease leaves the view.
    watcher.onEvent({
      type: 'put',
      prefix: LEGACY,
      key: `${LEGACY}real:1`,
      value: value('real:1', 9),
      lease: '0',
    });
    await flush();
    expect(core.workersSnapshot(10_000).map((s) => s.workerAddr)).toEqual(['inproc:1']);
    expect(warnings.map((w) => w['key'])).toEqual([`${LEGACY}forged:1`, `${LEGACY}real:1`]);

    // Deleted and re-put without a lease: warned again (a new incident).
    watcher.onEvent({ type: 'delete', prefix: LEGACY, key: `${LEGACY}forged:1` });
    watcher.onEvent({
      type: 'put',
      prefix: LEGACY,
      key: `${LEGACY}forged:1`,
      value: value('forged:1', 5),
      lease: '0',
    });
    await flush();
    expect(warnings).toHaveLength(3);
    expect(core.workerCount).toBe(1);
  });

  it('marks the core disconnected on an outage, keeps it ready within the grace, and reconnects after a re-list', async () => {
    const { clock, core, registry, watcher } = setup();
    const w = registry.writer();
    await w.publish(LEGACY, hb('a:1'));
    watcher.start();
    await flush();
    expect(core.isReady(clock.now)).toBe(true);

    registry.simulateDisconnect();
    await flush();
    expect(core.watchDisconnectedAtMs).toBe(10_000);
    expect(watcher.stats.disconnectedPrefixes).toEqual([LEGACY, V2]);
    expect(core.isReady(11_000)).toBe(true); // exactly at the grace
    expect(core.isReady(11_001)).toBe(false);

    await w.remove(LEGACY, 'a:1');
    await w.publish(V2, hb('b:1'));
    clock.now = 12_000;
    registry.simulateReconnect();
    await flush();
    expect(core.watchDisconnectedAtMs).toBeUndefined();
    expect(core.isReady(12_000)).toBe(true);
    expect(core.workersSnapshot(12_000).map((s) => s.workerAddr)).toEqual(['b:1']);
    await watcher.stop();
  });

  it('reports disconnect before the first list (registry down at start) and becomes ready once it lists', async () => {
    const { core, registry, watcher } = setup([{ prefix: LEGACY, format: 'legacy' }]);
    registry.simulateDisconnect();
    watcher.start();
    await flush();
    expect(core.isInitialized).toBe(false);
    expect(core.isReady(10_000)).toBe(false);
    registry.simulateReconnect();
    await flush();
    expect(core.isInitialized).toBe(true);
    expect(core.isReady(10_000)).toBe(true);
    await watcher.stop();
  });

  it('ignores events after stop and notifies core changes', async () => {
    const { core, registry, watcher, changes } = setup([{ prefix: LEGACY, format: 'legacy' }]);
    watcher.start();
    await flush();
    expect(changes()).toBeGreaterThan(0);
    await watcher.stop();
    await registry.writer().publish(LEGACY, hb('late:1'));
    await flush();
    expect(core.workerCount).toBe(0);
  });
});
