// The in-process registry (used by `blockx up`) honours the registry port's contract: keys
// `<prefix><addr>`, writer sessions whose keys vanish on close, ordered asynchronous events, and the
// disconnected → list → reconnected sequence of an outage.
import { describe, expect, it } from 'vitest';
import { InProcessRegistry } from '../../../../src/services/registry/in-process-registry.js';
import { parseWorkerHeartbeat } from '../../../../src/contracts/heartbeat.js';
import type { WorkerHeartbeat } from '../../../../src/contracts/heartbeat.js';
import type { RegistryEvent } from '../../../../src/services/registry/registry-port.js';

const A = '/blockx/workers/';
const B = '/blockx/prod/lanes/default/workers/';

function hb(workerAddr: string, lastHeartbeatMs = 1_000): WorkerHeartbeat {
  return {
    workerAddr,
    taskSlots: 4,
    reservedSlots: 1,
    runningTasks: 0,
    cpuPercent: 0.1,
    memoryPercent: 0.2,
    memoryAvailableBytes: 1,
    memoryTotalBytes: 2,
    processRssBytes: 3,
    errorRate: 0,
    lastHeartbeatMs,
  };
}

const flush = (): Promise<void> => new Promise((r) => setImmediate(r));

/** Events with values decoded to their workerAddr for compact assertions. */
function compact(ev: RegistryEvent): unknown {
  switch (ev.type) {
    case 'list':
      return ['list', ev.prefix, ev.entries.map((e) => e.key)];
    case 'put':
      return ['put', ev.key];
    case 'delete':
      return ['delete', ev.key];
    case 'disconnected':
      return ['disconnected', ev.prefix];
    case 'reconnected':
      return ['reconnected', ev.prefix];
  }
}

describe('InProcessRegistry', () => {
  it('stores the heartbeat JSON under <prefix><workerAddr>', async () => {
    const reg = new InProcessRegistry();
    await reg.writer().publish(A, hb('10.0.0.1:9090'));
    expect(reg.keys()).toEqual([`${A}10.0.0.1:9090`]);
    const parsed = parseWorkerHeartbeat(reg.get(`${A}10.0.0.1:9090`) ?? '');
    expect(parsed.ok && parsed.value).toEqual(hb('10.0.0.1:9090'));
  });

  it('lists existing keys first, then streams puts and deletes in order, asynchronously', async () => {
    const reg = new InProcessRegistry();
    const w = reg.writer();
    await w.publish(A, hb('a:1'));
    await w.publish(B, hb('b:1'));
    const events: unknown[] = [];
    const watch = reg.watch([A, B], (ev) => events.push(compact(ev)));
    expect(events).toEqual([]); // never during watch()
    await w.publish(A, hb('a:2'));
    await w.remove(A, 'a:1');
    await flush();
    expect(events).toEqual([
      ['list', A, [`${A}a:1`]],
      ['list', B, [`${B}b:1`]],
      ['put', `${A}a:2`],
      ['delete', `${A}a:1`],
    ]);
    await watch.close();
    await w.publish(A, hb('a:3'));
    await flush();
    expect(events).toHaveLength(4);
  });

  it('does not report keys that only share the prefix string with another prefix', async () => {
    const reg = new InProcessRegistry();
    const events: unknown[] = [];
    reg.watch([A], (ev) => events.push(compact(ev)));
    reg.putRaw('/blockx/workers', 'not under the prefix');
    reg.putRaw(A, 'the prefix itself is not a worker key');
    await flush();
    expect(events).toEqual([['list', A, []]]);
  });

  it('closing a writer removes every key it published, like a lease revoke', async () => {
    const reg = new InProcessRegistry();
    const w1 = reg.writer();
    const w2 = reg.writer();
    await w1.publish(A, hb('a:1'));
    await w1.publish(B, hb('a:1'));
    await w2.publish(A, hb('a:2'));
    await w1.close();
    expect(reg.keys()).toEqual([`${A}a:2`]);
    await expect(w1.publish(A, hb('a:1'))).rejects.toThrow(/closed/);
  });

  it('simulates an outage: disconnected, changes withheld, then a fresh list and reconnected', async () => {
    const reg = new InProcessRegistry();
    const w = reg.writer();
    await w.publish(A, hb('a:1'));
    const events: unknown[] = [];
    reg.watch([A], (ev) => events.push(compact(ev)));
    await flush();
    reg.simulateDisconnect();
    await w.publish(A, hb('a:2'));
    await w.remove(A, 'a:1');
    await flush();
    expect(events.slice(1)).toEqual([['disconnected', A]]);
    reg.simulateReconnect();
    await flush();
    expect(events.slice(2)).toEqual([
      ['list', A, [`${A}a:2`]],
      ['reconnected', A],
    ]);
  });

  it('a watch opened during an outage starts with disconnected', async () => {
    const reg = new InProcessRegistry();
    reg.simulateDisconnect();
    const events: unknown[] = [];
    reg.watch([A], (ev) => events.push(compact(ev)));
    reg.simulateReconnect();
    await flush();
    expect(events).toEqual([
      ['disconnected', A],
      ['list', A, []],
      ['reconnected', A],
    ]);
  });
});
