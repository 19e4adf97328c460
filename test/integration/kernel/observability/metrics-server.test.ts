// The scrape endpoint over real HTTP on 127.0.0.1: exposition at the path, 404 elsewhere, several
// registries merged per family, and close() freeing the port.
import { afterEach, describe, expect, it } from 'vitest';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import {
  parseMetricsListenAddr,
  renderMetrics,
  startMetricsServer,
  type RunningMetricsServer,
} from '../../../../src/kernel/observability/metrics-server.js';
import { createServiceRegistry } from '../../../../src/kernel/observability/service-registry.js';

const started: RunningMetricsServer[] = [];
afterEach(async () => {
  for (const s of started.splice(0)) await s.close();
});

async function start(
  registry: Registry | readonly Registry[],
  listenAddr = '127.0.0.1:0',
  path = '/metrics',
) {
  const server = await startMetricsServer({ listenAddr, path, registry });
  started.push(server);
  return server;
}

function workerRegistry(instance: string, tasks: number): Registry {
  const registry = createServiceRegistry({ service: 'worker', deployment: 'block', instance });
  new Counter({
    name: 'blockx_worker_tasks_total',
    help: 'tasks',
    labelNames: ['code'],
    registers: [registry],
  }).inc({ code: 'SUCCEEDED' }, tasks);
  return registry;
}

describe('startMetricsServer', () => {
  it('serves the text exposition at the path, with the default labels', async () => {
    const server = await start(workerRegistry('127.0.0.1:9090', 3));
    expect(server.address).toBe(`127.0.0.1:${server.port}`);
    const res = await fetch(`http://${server.address}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(Registry.PROMETHEUS_CONTENT_TYPE);
    const body = await res.text();
    expect(body).toContain('# TYPE blockx_worker_tasks_total counter');
    expect(body).toContain(
      'blockx_worker_tasks_total{code="SUCCEEDED",service="worker",deployment="block",instance="127.0.0.1:9090"} 3',
    );
  });

  it('ignores the query string, answers HEAD without a body, 404 elsewhere and 405 for other methods', async () => {
    const server = await start(workerRegistry('w', 1), '127.0.0.1:0', '/custom/metrics');
    const base = `http://${server.address}`;
    expect((await fetch(`${base}/custom/metrics?name[]=x`)).status).toBe(200);
    const head = await fetch(`${base}/custom/metrics`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    for (const path of ['/', '/metrics', '/custom/metrics/', '/custom']) {
      const res = await fetch(`${base}${path}`);
      expect(res.status, path).toBe(404);
      expect(await res.text()).toContain('/custom/metrics');
    }
    const post = await fetch(`${base}/custom/metrics`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('answers 500 when a collect callback throws, and keeps serving', async () => {
    const registry = new Registry();
    let fail = true;
    const g = new Gauge({
      name: 'flaky',
      help: 'flaky',
      registers: [registry],
      collect: () => {
        if (fail) throw new Error('source gone');
        g.set(1);
      },
    });
    const server = await start(registry);
    const res = await fetch(`http://${server.address}/metrics`);
    expect(res.status).toBe(500);
    expect(await res.text()).toContain('source gone');
    fail = false;
    expect(await (await fetch(`http://${server.address}/metrics`)).text()).toContain('flaky 1');
  });

  it('close() frees the port, even after a keep-alive scrape, and is idempotent', async () => {
    const first = await startMetricsServer({
      listenAddr: '127.0.0.1:0',
      path: '/metrics',
      registry: new Registry(),
    });
    expect((await fetch(`http://${first.address}/metrics`, { keepalive: true })).status).toBe(200);
    await first.close();
    await first.close();
    await expect(fetch(`http://${first.address}/metrics`)).rejects.toThrow();
    const again = await start(new Registry(), first.address);
    expect(again.port).toBe(first.port);
  });

  it('an empty listen address starts nothing', async () => {
    const server = await startMetricsServer({ listenAddr: '  ', path: '/metrics', registry: new Registry() });
    expect(server).toMatchObject({ address: '', port: 0 });
    await server.close();
  });

  it('a port in use fails METRICS_LISTEN_FAILED naming the address', async () => {
    const taken = await start(new Registry());
    await expect(
      startMetricsServer({ listenAddr: taken.address, path: '/metrics', registry: new Registry() }),
    ).rejects.toMatchObject({ code: 'METRICS_LISTEN_FAILED', listenAddr: taken.address });
  });

  it('serves several registries as one exposition, read at every scrape', async () => {
    const registries = [workerRegistry('w1', 1), workerRegistry('w2', 2)];
    const server = await start(registries);
    const scrape = async () => (await fetch(`http://${server.address}/metrics`)).text();
    let body = await scrape();
    expect(body.match(/# HELP blockx_worker_tasks_total /g)).toHaveLength(1);
    expect(body.match(/# TYPE blockx_worker_tasks_total counter/g)).toHaveLength(1);
    expect(body).toContain('instance="w1"} 1');
    expect(body).toContain('instance="w2"} 2');
    registries.push(workerRegistry('w3', 5));
    body = await scrape();
    expect(body).toContain('instance="w3"} 5');
  });
});

describe('renderMetrics', () => {
  it('merges histograms of several registries, each sample keeping its own labels', async () => {
    const make = (instance: string, v: number) => {
      const r = createServiceRegistry({ service: 'worker', deployment: 'block', instance });
      new Histogram({ name: 'h_seconds', help: 'h', buckets: [1], registers: [r] }).observe(v);
      return r;
    };
    const text = await renderMetrics([make('a', 0.5), make('b', 2)]);
    expect(text).toContain('h_seconds_bucket{le="1",service="worker",deployment="block",instance="a"} 1');
    expect(text).toContain('h_seconds_bucket{le="1",service="worker",deployment="block",instance="b"} 0');
    expect(text).toContain('h_seconds_count{service="worker",deployment="block",instance="b"} 1');
    expect(text.match(/# TYPE h_seconds histogram/g)).toHaveLength(1);
  });
});

describe('parseMetricsListenAddr', () => {
  it.each([
    [':9464', { host: '0.0.0.0', port: 9464 }],
    ['9464', { host: '0.0.0.0', port: 9464 }],
    ['127.0.0.1:0', { host: '127.0.0.1', port: 0 }],
    ['localhost:9100', { host: 'localhost', port: 9100 }],
    ['[::1]:9464', { host: '::1', port: 9464 }],
    [' 0.0.0.0:9464 ', { host: '0.0.0.0', port: 9464 }],
  ])('%j → %j', (addr, expected) => {
    expect(parseMetricsListenAddr(addr)).toEqual(expected);
  });

  it.each(['metrics', 'host:99999', 'unix:/tmp/m.sock', 'http://0.0.0.0:9464', '::1:9464', 'a b:1'])(
    '%j is METRICS_ADDRESS_INVALID',
    (addr) => {
      expect(() => parseMetricsListenAddr(addr)).toThrow(
        expect.objectContaining({ code: 'METRICS_ADDRESS_INVALID' }),
      );
    },
  );
});
