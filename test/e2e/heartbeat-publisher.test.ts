// HeartbeatPublisher + EtcdRegistryWriter against a REAL etcd: the leased key and its JSON fields,
// expiry after a crash (a child process SIGKILLed without cleanup), re-put after etcd restarts (with its
// data and with an empty data dir, where the lease itself is gone), a clean stop deleting the key and
// revoking the lease, and no pile-up of puts while one is in flight.
import os from 'node:os';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Etcd3 } from 'etcd3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HeartbeatPublisher } from '../../src/services/worker/adapters/telemetry/heartbeat-publisher.js';
import { EtcdRegistryWriter } from '../../src/services/registry/etcd-registry-writer.js';
import { parseWorkerHeartbeat } from '../../src/contracts/heartbeat.js';
import type { WorkerHeartbeat } from '../../src/contracts/heartbeat.js';
import type { WorkerRegistryWriter } from '../../src/services/registry/registry-port.js';
import { startEtcd } from '../support/etcd.js';
import type { EtcdServer } from '../support/etcd.js';
import { captureOutput, spawnTracked, stopGroup, waitForLine } from '../support/processes.js';
import { eventually, present } from '../support/eventually.js';

const PREFIX = '/blockx/workers/';
const HEARTBEAT_FIELDS = [
  'workerAddr',
  'taskSlots',
  'reservedSlots',
  'runningTasks',
  'cpuPercent',
  'memoryPercent',
  'memoryAvailableBytes',
  'memoryTotalBytes',
  'processRssBytes',
  'errorRate',
  'lastHeartbeatMs',
];

// How this file has always polled: every 25 ms, for 10_000 ms unless a call says otherwise.
const POLL = { timeoutMs: 10_000, intervalMs: 25 } as const;

describe('HeartbeatPublisher on a real etcd', () => {
  let etcd: EtcdServer;
  let raw: Etcd3;
  const publishers: HeartbeatPublisher[] = [];

  beforeAll(async () => {
    etcd = await startEtcd();
    raw = new Etcd3({ hosts: etcd.endpoint });
  });

  afterEach(async () => {
    if (etcd.pid === undefined) await etcd.restart();
    for (const p of publishers.splice(0)) await p.stop();
    await raw.delete().prefix('/blockx/');
  });

  afterAll(async () => {
    raw?.close();
    await etcd?.stop();
  });

  function publish(
    addr: string,
    leaseTtlMs = 10_000,
    intervalMs = 50,
  ): { p: HeartbeatPublisher; w: EtcdRegistryWriter } {
    const w = new EtcdRegistryWriter({ endpoints: [etcd.endpoint], leaseTtlMs });
    const p = new HeartbeatPublisher({
      writer: w,
      prefix: PREFIX,
      workerAddr: addr,
      intervalMs,
      deriveHeartbeat: () => ({ taskSlots: 8, reservedSlots: 2, runningTasks: 1 }),
      errorRate: () => 0.25,
    });
    publishers.push(p);
    p.start();
    return { p, w };
  }

  const read = async (addr: string): Promise<WorkerHeartbeat | undefined> => {
    const v = await raw.get(`${PREFIX}${addr}`).string();
    if (v === null) return undefined;
    const r = parseWorkerHeartbeat(v);
    return r.ok ? r.value : undefined;
  };

  it('puts the heartbeat JSON with exactly the documented heartbeat fields under a 10 s lease', async () => {
    publish('10.1.0.1:9090');
    const value = await eventually(
      async () => present(await raw.get(`${PREFIX}10.1.0.1:9090`).string(), 'key'),
      {
        ...POLL,
        message: 'key',
      },
    );
    const json = JSON.parse(value) as Record<string, number | string>;
    expect(Object.keys(json)).toEqual(HEARTBEAT_FIELDS);
    expect(json).toMatchObject({
      workerAddr: '10.1.0.1:9090',
      taskSlots: 8,
      reservedSlots: 2,
      runningTasks: 1,
      errorRate: 0.25,
    });
    expect(json['memoryTotalBytes']).toBe(os.totalmem());
    for (const f of ['cpuPercent', 'memoryPercent'] as const) {
      expect(json[f]).toBeGreaterThanOrEqual(0);
      expect(json[f]).toBeLessThanOrEqual(1);
    }
    expect(json['processRssBytes']).toBeGreaterThan(0);
    expect(Math.abs(Number(json['lastHeartbeatMs']) - Date.now())).toBeLessThan(5_000);

    const kv = (await raw.getAll().prefix(PREFIX).exec()).kvs[0];
    expect(kv?.lease).not.toBe('0');
    const lease = await raw.leaseClient.leaseTimeToLive({ ID: kv?.lease as string });
    expect(lease.grantedTTL).toBe('10');
    const first = await read('10.1.0.1:9090');
    const later = await eventually(
      async () => {
        const hb = await read('10.1.0.1:9090');
        return present(
          hb !== undefined && hb.lastHeartbeatMs > (first?.lastHeartbeatMs ?? 0) ? hb : undefined,
          'a newer heartbeat',
        );
      },
      { ...POLL, message: 'a newer heartbeat' },
    );
    expect(later.lastHeartbeatMs).toBeGreaterThan(first?.lastHeartbeatMs ?? 0);
  });

  it('a clean stop deletes the key and revokes the lease', async () => {
    const { p } = publish('10.1.0.2:9090');
    await eventually(async () => present(await read('10.1.0.2:9090'), 'key'), { ...POLL, message: 'key' });
    const lease = (await raw.getAll().prefix(PREFIX).exec()).kvs[0]?.lease;
    await p.stop();
    expect(await raw.get(`${PREFIX}10.1.0.2:9090`).string()).toBeNull();
    // The lease is gone too (etcd reports TTL -1 for an unknown lease).
    const ttl = await raw.leaseClient.leaseTimeToLive({ ID: lease as string });
    expect(ttl.TTL).toBe('-1');
  });

  it('the key expires with its lease when the process dies without cleanup', async () => {
    const module = fileURLToPath(
      new URL('../../src/services/worker/adapters/telemetry/heartbeat-publisher.ts', import.meta.url),
    );
    const writerModule = fileURLToPath(
      new URL('../../src/services/registry/etcd-registry-writer.ts', import.meta.url),
    );
    const script = `
      const { HeartbeatPublisher } = await import(${JSON.stringify(module)});
      const { EtcdRegistryWriter } = await import(${JSON.stringify(writerModule)});
      const writer = new EtcdRegistryWriter({ endpoints: [${JSON.stringify(etcd.endpoint)}], leaseTtlMs: 2000 });
      const p = new HeartbeatPublisher({ writer, prefix: ${JSON.stringify(PREFIX)}, workerAddr: '10.1.0.3:9090',
        intervalMs: 100, deriveHeartbeat: () => ({ taskSlots: 1, reservedSlots: 0, runningTasks: 0 }) });
      p.start();
      const first = await p.publishOnce();
      console.log('published', first);
    `;
    const child = spawnTracked(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
    });
    const out = captureOutput(child);
    try {
      await waitForLine(child, /published/, 20_000);
      await eventually(async () => present(await read('10.1.0.3:9090'), 'key from the child'), {
        ...POLL,
        message: 'key from the child',
      });
      await stopGroup(child, 'SIGKILL', 1_000);
      const killedAt = Date.now();
      await eventually(async () => (await read('10.1.0.3:9090')) === undefined, {
        ...POLL,
        timeoutMs: 8_000,
        message: 'expiry',
      });
      const took = Date.now() - killedAt;
      expect(took).toBeGreaterThan(500); // the lease, not a cleanup, removed it
      expect(took).toBeLessThan(4_500);
    } catch (err) {
      throw new Error(`${(err as Error).message}\nchild output:\n${out.text()}`, { cause: err });
    } finally {
      await stopGroup(child, 'SIGKILL', 1_000);
    }
  });

  it('keeps the key through an etcd restart and refreshes it afterwards', async () => {
    publish('10.1.0.4:9090');
    await eventually(async () => present(await read('10.1.0.4:9090'), 'key'), { ...POLL, message: 'key' });
    await etcd.kill();
    await new Promise((r) => setTimeout(r, 300));
    await etcd.restart();
    const restartedAt = Date.now();
    const hb = await eventually(
      async () => {
        const v = await read('10.1.0.4:9090');
        return present(
          v !== undefined && v.lastHeartbeatMs >= restartedAt ? v : undefined,
          'a heartbeat written after the restart',
        );
      },
      { ...POLL, message: 'a heartbeat written after the restart' },
    );
    expect(hb.workerAddr).toBe('10.1.0.4:9090');
  });

  it('grants a new lease and re-puts when etcd lost the lease (empty data dir)', async () => {
    const { w } = publish('10.1.0.5:9090');
    await eventually(async () => present(await read('10.1.0.5:9090'), 'key'), { ...POLL, message: 'key' });
    const oldLease = (await raw.getAll().prefix(PREFIX).exec()).kvs[0]?.lease;
    await etcd.kill();
    await rm(join(etcd.dataDir, 'member'), { recursive: true, force: true });
    await etcd.restart();
    const lease = await eventually(
      async () => {
        const kv = (await raw.getAll().prefix(PREFIX).exec()).kvs[0];
        return present(
          kv !== undefined && kv.lease !== '0' && kv.lease !== oldLease ? kv.lease : undefined,
          'the key again, under a new lease',
        );
      },
      { ...POLL, message: 'the key again, under a new lease' },
    );
    expect(lease).toBeDefined();
    expect(w.grantedLeaseCount).toBeGreaterThanOrEqual(2);
  });
});

describe('HeartbeatPublisher without etcd', () => {
  it('skips a tick while the previous put is still in flight (no pile-up)', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const releases: (() => void)[] = [];
    const writer: WorkerRegistryWriter = {
      publish: () => {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        return new Promise<void>((resolve) =>
          releases.push(() => {
            inFlight -= 1;
            resolve();
          }),
        );
      },
      remove: async () => undefined,
      close: async () => undefined,
    };
    const p = new HeartbeatPublisher({
      writer,
      prefix: PREFIX,
      workerAddr: 'w:1',
      intervalMs: 1_000,
      deriveHeartbeat: () => ({ taskSlots: 1, reservedSlots: 0, runningTasks: 0 }),
    });
    const first = p.publishOnce();
    expect(await p.publishOnce()).toBe('skipped');
    expect(await p.publishOnce()).toBe('skipped');
    releases.shift()?.();
    expect(await first).toBe('published');
    const second = p.publishOnce();
    releases.shift()?.();
    expect(await second).toBe('published');
    expect(maxInFlight).toBe(1);
    expect(p.stats).toEqual({ published: 2, skipped: 2, early: 0, failed: 0 });
    await p.stop();
    expect(await p.publishOnce()).toBe('stopped');
  });

  it('stop waits for the put in flight, then removes the key and closes the writer', async () => {
    const log: string[] = [];
    let release: () => void = () => undefined;
    const writer: WorkerRegistryWriter = {
      publish: () => new Promise<void>((r) => (release = () => (log.push('put done'), r()))),
      remove: async (prefix, addr) => void log.push(`remove ${prefix}${addr}`),
      close: async () => void log.push('close'),
    };
    const p = new HeartbeatPublisher({
      writer,
      prefix: PREFIX,
      workerAddr: 'w:2',
      intervalMs: 1_000,
      deriveHeartbeat: () => ({ taskSlots: 1, reservedSlots: 0, runningTasks: 0 }),
    });
    void p.publishOnce();
    const stopping = p.stop();
    release();
    await stopping;
    expect(log).toEqual(['put done', `remove ${PREFIX}w:2`, 'close']);
  });
});
