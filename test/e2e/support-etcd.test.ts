// Smoke test for the etcd harness (test/support/etcd.ts): a real server answers, a crash (SIGKILL) and a
// restart on the same ports keep the data, and stop() removes the data dir.
import { existsSync, readFileSync } from 'node:fs';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEtcd } from '../support/etcd.js';
import type { EtcdServer } from '../support/etcd.js';

describe('startEtcd', () => {
  let etcd: EtcdServer;
  const clients: Etcd3[] = [];
  const connect = (): Etcd3 => {
    const client = new Etcd3({ hosts: etcd.endpoint, dialTimeout: 2_000 });
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    etcd = await startEtcd();
  });

  afterAll(async () => {
    for (const client of clients) client.close();
    await etcd?.stop();
  });

  it('serves puts and gets on a loopback endpoint', async () => {
    expect(etcd.endpoint).toBe(`http://127.0.0.1:${etcd.clientPort}`);
    expect(etcd.pid).toBeTypeOf('number');
    const client = connect();
    await client.put('/blockx/test/smoke').value('hello');
    expect(await client.get('/blockx/test/smoke').string()).toBe('hello');
    client.close();
  });

  it('takes its ports below the ephemeral range, where no connection can take them while it is down', () => {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    expect(etcd.clientPort).toBeLessThan(Number(low));
    expect(etcd.peerPort).toBeLessThan(Number(low));
    expect(etcd.peerPort).not.toBe(etcd.clientPort);
  });

  it('keeps its data across kill and restart on the same ports', async () => {
    const client = connect();
    await client.put('/blockx/test/durable').value('still here');
    client.close();
    const firstPid = etcd.pid;

    await etcd.kill();
    expect(etcd.pid).toBeUndefined();
    expect(existsSync(etcd.dataDir)).toBe(true);
    await expect(fetch(`${etcd.endpoint}/health`)).rejects.toThrow();

    await etcd.restart();
    expect(etcd.pid).toBeTypeOf('number');
    expect(etcd.pid).not.toBe(firstPid);
    const again = connect();
    expect(await again.get('/blockx/test/durable').string()).toBe('still here');
    again.close();
  });

  it('stop() ends the process and removes the data dir', async () => {
    const other = await startEtcd();
    expect(other.clientPort).not.toBe(etcd.clientPort);
    await other.stop();
    expect(other.pid).toBeUndefined();
    expect(existsSync(other.dataDir)).toBe(false);
    await expect(fetch(`${other.endpoint}/health`)).rejects.toThrow();
  });
});
