// The dashboard's request handler against fakes of its ports (test/unit/services/dashboard/fakes.ts):
// response headers, refusals, the snapshot JSON, and the event streams (limit, keep-alive, slow
// readers, close) on fake timers.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DashboardAssets } from '../../../../src/services/dashboard/adapters/assets.js';
import {
  DashboardHandler,
  DEFAULT_KEEP_ALIVE_MS,
  type DashboardHandlerOptions,
  type DashboardRequest,
} from '../../../../src/services/dashboard/adapters/dashboard-handler.js';
import { FakeResponse, FakeSource, followJob, snapshotAt, task, worker } from './fakes.js';

const ASSETS: DashboardAssets = {
  page: {
    body: Buffer.from('<!doctype html><p>page</p>'),
    contentType: 'text/html; charset=utf-8',
    etag: '"p1"',
  },
  files: new Map([
    [
      'app.js',
      { body: Buffer.from('export {};'), contentType: 'text/javascript; charset=utf-8', etag: '"a1"' },
    ],
  ]),
};

let source: FakeSource;
let handler: DashboardHandler | undefined;

function make(opts: Partial<DashboardHandlerOptions> = {}): DashboardHandler {
  handler = new DashboardHandler({ source, assets: ASSETS, checkHost: true, ...opts });
  return handler;
}

function get(
  h: DashboardHandler,
  url: string,
  extra: Partial<DashboardRequest> & { host?: string } = {},
): FakeResponse {
  const res = new FakeResponse();
  h.handle(
    {
      method: extra.method ?? 'GET',
      url,
      headers: { host: extra.host ?? '127.0.0.1:8081', ...extra.headers },
      ...(extra.client === undefined ? {} : { client: extra.client }),
      ...(extra.viewer === undefined ? {} : { viewer: extra.viewer }),
    },
    res,
  );
  return res;
}

beforeEach(() => {
  vi.useFakeTimers();
  source = new FakeSource(snapshotAt(10_000));
});
afterEach(() => {
  handler?.close();
  handler = undefined;
  vi.useRealTimers();
});

describe('every response', () => {
  it.each(['/', '/assets/app.js', '/api/snapshot', '/api/events', '/nope', '/../etc/passwd'])(
    '%s carries a strict CSP, nosniff, no framing and no CORS header',
    (url) => {
      const res = get(make(), url);
      expect(res.headers['Content-Security-Policy']).toMatch(/default-src 'none'/);
      expect(res.headers['Content-Security-Policy']).toMatch(/script-src 'self'(;|$)/);
      expect(res.headers['Content-Security-Policy']).not.toMatch(/unsafe-inline|unsafe-eval/);
      expect(res.headers['X-Content-Type-Options']).toBe('nosniff');
      expect(res.headers['X-Frame-Options']).toBe('DENY');
      expect(Object.keys(res.headers).some((k) => /^access-control-/i.test(k))).toBe(false);
    },
  );
});

describe('refusals', () => {
  it.each(['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'])('%s is 405 with Allow: GET, HEAD', (method) => {
    const res = get(make(), '/api/snapshot', { method });
    expect(res.status).toBe(405);
    expect(res.headers.Allow).toBe('GET, HEAD');
    expect(res.body()).toMatch(/read-only/);
  });

  it.each([
    ['/assets/../package.json', 400],
    ['/assets/..%2fpackage.json', 400],
    ['/assets/%2e%2e/package.json', 400],
    ['/assets/..\\package.json', 400],
    ['/assets/./app.js', 400],
    ['/assets/app.js%00', 400],
    ['//etc/passwd', 404],
    ['/etc/passwd', 404],
    ['/assets/', 404],
    ['/assets/index.html', 404],
    ['/assets/missing.js', 404],
    ['/api', 404],
    ['http://evil.example/', 400],
  ])('%s is %i and serves no file', (url, status) => {
    const res = get(make(), url);
    expect(res.status).toBe(status);
    expect(res.headers['Content-Type']).toBe('text/plain; charset=utf-8');
    expect(res.body()).not.toContain('export {}');
  });

  it('an oversized request target is 414', () => {
    expect(get(make(), `/${'a'.repeat(5_000)}`).status).toBe(414);
  });

  it('over plain HTTP, a Host name that DNS could re-point is 403; IPs, localhost and listed names pass', () => {
    const h = make({ allowedHosts: ['Dash.Internal'] });
    expect(get(h, '/', { host: 'evil.example:8081' }).status).toBe(403);
    expect(get(h, '/', { host: '' }).status).toBe(403);
    for (const host of [
      '127.0.0.1:8081',
      '[::1]:8081',
      'localhost:8081',
      'app.localhost',
      '10.0.0.5',
      'dash.internal:80',
    ])
      expect(get(h, '/', { host }).status, host).toBe(200);
  });

  it('with TLS (checkHost off) any Host is served', () => {
    expect(get(make({ checkHost: false }), '/', { host: 'coord-1.example:8081' }).status).toBe(200);
  });
});

describe('the page and its files', () => {
  it('serves the page at / and /index.html and an asset with its type and ETag; 304 when unchanged', () => {
    const h = make();
    for (const url of ['/', '/index.html', '/?x=1']) {
      const res = get(h, url);
      expect(res.status).toBe(200);
      expect(res.headers['Content-Type']).toBe('text/html; charset=utf-8');
      expect(res.body()).toContain('<p>page</p>');
    }
    const js = get(h, '/assets/app.js');
    expect(js.headers['Content-Type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers.ETag).toBe('"a1"');
    expect(js.headers['Content-Length']).toBe(10);
    const again = get(h, '/assets/app.js', { headers: { 'if-none-match': '"a1"' } });
    expect(again.status).toBe(304);
    expect(again.body()).toBe('');
  });

  it('HEAD answers the headers without a body', () => {
    const res = get(make(), '/', { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers['Content-Length']).toBe(ASSETS.page.body.length);
    expect(res.body()).toBe('');
    expect(res.ended).toBe(true);
  });
});

describe('GET /api/snapshot', () => {
  it("is the source's latest snapshot as JSON, not cached by the browser", () => {
    const h = make();
    source.push(
      snapshotAt(20_000, { recentTasks: [task('t-2', { state: 'FAILED', failureCode: 'CALL_FAILED' })] }),
    );
    const res = get(h, '/api/snapshot');
    expect(res.status).toBe(200);
    expect(res.headers['Content-Type']).toBe('application/json; charset=utf-8');
    expect(res.headers['Cache-Control']).toBe('no-store');
    const body = JSON.parse(res.body());
    expect(body).toEqual(
      snapshotAt(20_000, { recentTasks: [task('t-2', { state: 'FAILED', failureCode: 'CALL_FAILED' })] }),
    );
    expect(res.headers['Content-Length']).toBe(Buffer.byteLength(res.body()));
  });

  it('sends only the contract fields: whatever else an object carries stays out', () => {
    const leaky = snapshotAt(30_000);
    const rows = [{ ...worker('127.0.0.1:7001'), spawnSecret: 's3cret', config: { tls: { key: 'KEY' } } }];
    source.current = {
      ...leaky,
      token: 'tkn',
      cluster: { ...leaky.cluster, workers: rows },
      recentTasks: [{ ...task('t-3'), input: { password: 'pw' } }],
    } as unknown as typeof leaky;
    const text = get(make(), '/api/snapshot').body();
    for (const secret of ['s3cret', 'KEY', 'tkn', 'pw', 'spawnSecret', 'input'])
      expect(text).not.toContain(secret);
    expect(JSON.parse(text).cluster.workers[0].workerAddr).toBe('127.0.0.1:7001');
  });

  it('a source that cannot produce a snapshot is 503 with the reason', () => {
    source.failWith = new Error('first poll not finished');
    const res = get(make(), '/api/snapshot');
    expect(res.status).toBe(503);
    expect(res.body()).toContain('first poll not finished');
  });
});

describe('GET /api/events', () => {
  it('opens with retry: and the current snapshot, then one event per new snapshot', () => {
    const h = make();
    const res = get(h, '/api/events');
    expect(res.status).toBe(200);
    expect(res.headers['Content-Type']).toBe('text/event-stream; charset=utf-8');
    expect(res.headers['Cache-Control']).toBe('no-store');
    expect(res.body().startsWith('retry: ')).toBe(true);
    expect(res.events().map((s) => s.atMs)).toEqual([10_000]);
    source.push(snapshotAt(11_000));
    source.push(snapshotAt(12_000));
    expect(res.events().map((s) => s.atMs)).toEqual([10_000, 11_000, 12_000]);
    expect(res.ended).toBe(false);
    expect(h.eventClients).toBe(1);
  });

  it(`writes a keep-alive comment every ${DEFAULT_KEEP_ALIVE_MS / 1000} s`, () => {
    const res = get(make(), '/api/events');
    vi.advanceTimersByTime(DEFAULT_KEEP_ALIVE_MS - 1);
    expect(res.body()).not.toContain(': keep-alive');
    vi.advanceTimersByTime(1);
    expect(res.body().match(/^: keep-alive$/gm)).toHaveLength(1);
    vi.advanceTimersByTime(DEFAULT_KEEP_ALIVE_MS);
    expect(res.body().match(/^: keep-alive$/gm)).toHaveLength(2);
  });

  it('serves at most maxEventClients streams: one more is 503 with Retry-After; a closed one frees its place', () => {
    const h = make({ maxEventClients: 2 });
    const a = get(h, '/api/events');
    get(h, '/api/events');
    const refused = get(h, '/api/events');
    expect(refused.status).toBe(503);
    expect(refused.headers['Retry-After']).toBe(10);
    expect(refused.body()).toMatch(/too many live dashboard pages \(2/);
    expect(refused.ended).toBe(true);
    // The page and the snapshot are still served while the streams are full.
    expect(get(h, '/api/snapshot').status).toBe(200);
    a.emit('close');
    expect(h.eventClients).toBe(1);
    expect(get(h, '/api/events').status).toBe(200);
  });

  it('one client holds at most maxEventClientsPerClient streams (429); others still get theirs', () => {
    const h = make({ maxEventClients: 10, maxEventClientsPerClient: 2 });
    const mine = [get(h, '/api/events', { client: 'mallory' }), get(h, '/api/events', { client: 'mallory' })];
    const refused = get(h, '/api/events', { client: 'mallory' });
    expect(refused.status).toBe(429);
    expect(refused.headers['Retry-After']).toBe(10);
    expect(refused.body()).toMatch(
      /this client already holds 2 live dashboard pages \(observability\.dashboard\.maxEventClientsPerClient\)/,
    );
    expect(get(h, '/api/events', { client: 'alice' }).status).toBe(200);
    // A closed stream, or one dropped for not draining, gives its client's place back.
    mine[0]!.emit('close');
    expect(get(h, '/api/events', { client: 'mallory' }).status).toBe(200);
    mine[1]!.writableNeedDrain = true;
    vi.advanceTimersByTime(DEFAULT_KEEP_ALIVE_MS * 4);
    expect(mine[1]!.destroyed).toBe(true);
    expect(get(h, '/api/events', { client: 'mallory' }).status).toBe(200);
    expect(get(h, '/api/events', { client: 'mallory' }).status).toBe(429);
  });

  it('skips a stream that is not draining and sends it the latest snapshot once it drains', () => {
    const h = make();
    const slow = get(h, '/api/events');
    const fast = get(h, '/api/events');
    slow.writableNeedDrain = true;
    source.push(snapshotAt(11_000));
    source.push(snapshotAt(12_000));
    expect(slow.events().map((s) => s.atMs)).toEqual([10_000]);
    expect(fast.events().map((s) => s.atMs)).toEqual([10_000, 11_000, 12_000]);
    slow.writableNeedDrain = false;
    slow.emit('drain');
    expect(slow.events().map((s) => s.atMs)).toEqual([10_000, 12_000]);
  });

  it('drops a stream that stays undrained for four keep-alive periods, freeing its place', () => {
    const h = make({ maxEventClients: 1 });
    const stuck = get(h, '/api/events');
    stuck.writableNeedDrain = true;
    vi.advanceTimersByTime(DEFAULT_KEEP_ALIVE_MS * 3);
    expect(stuck.destroyed).toBe(false);
    expect(get(h, '/api/events').status).toBe(503);
    vi.advanceTimersByTime(DEFAULT_KEEP_ALIVE_MS);
    expect(stuck.destroyed).toBe(true);
    expect(h.eventClients).toBe(0);
    expect(get(h, '/api/events').status).toBe(200);
  });

  it('close() ends every stream, stops listening to the source and refuses new streams', () => {
    const h = make();
    const a = get(h, '/api/events');
    const b = get(h, '/api/events');
    h.close();
    expect(a.ended && b.ended).toBe(true);
    expect(source.listeners.size).toBe(0);
    expect(h.eventClients).toBe(0);
    expect(get(h, '/api/events').status).toBe(503);
    h.close();
  });

  it('HEAD opens no stream', () => {
    const h = make();
    const res = get(h, '/api/events', { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.ended).toBe(true);
    expect(h.eventClients).toBe(0);
  });
});

describe('who sees what (docs/security.md § Roles)', () => {
  const mixed = (atMs: number) =>
    snapshotAt(atMs, {
      recentTasks: [
        task(`a-${atMs}`, { client: 'alice' }),
        task(`m-${atMs}`, { client: 'mallory' }),
        task(`x-${atMs}`),
      ],
      followJobs: [followJob('f')],
    });
  const alice = { kind: 'own', client: 'alice' } as const;
  const ids = (s: { recentTasks: readonly { taskId: string }[] }) => s.recentTasks.map((t) => t.taskId);

  it("a client's snapshot holds its own tasks only; everything for a viewer that sees all, never the submitter names", () => {
    source = new FakeSource(mixed(1));
    const h = make();
    const own = JSON.parse(get(h, '/api/snapshot', { client: 'alice', viewer: alice }).body());
    expect(ids(own)).toEqual(['a-1']);
    expect(own.followJobs).toEqual([]);
    const all = JSON.parse(get(h, '/api/snapshot', { client: 'vera', viewer: { kind: 'all' } }).body());
    expect(ids(all)).toEqual(['a-1', 'm-1', 'x-1']);
    expect(all.followJobs).toHaveLength(1);
    // Without a viewer (a plaintext dashboard), everything.
    expect(ids(JSON.parse(get(h, '/api/snapshot').body()))).toEqual(['a-1', 'm-1', 'x-1']);
    expect(get(h, '/api/snapshot', { viewer: alice }).body()).not.toMatch(/"client"|mallory/);
  });

  it('each stream gets the view of its own viewer, on every new snapshot and after a drain', () => {
    source = new FakeSource(mixed(1));
    const h = make();
    const a = get(h, '/api/events', { client: 'alice', viewer: alice });
    const m = get(h, '/api/events', { client: 'mallory', viewer: { kind: 'own', client: 'mallory' } });
    const v = get(h, '/api/events', { client: 'vera', viewer: { kind: 'all' } });
    a.writableNeedDrain = true;
    source.push(mixed(2));
    source.push(mixed(3));
    a.writableNeedDrain = false;
    a.emit('drain');
    expect(a.events().map(ids)).toEqual([['a-1'], ['a-3']]);
    expect(m.events().map(ids)).toEqual([['m-1'], ['m-2'], ['m-3']]);
    expect(v.events().map(ids)).toEqual([
      ['a-1', 'm-1', 'x-1'],
      ['a-2', 'm-2', 'x-2'],
      ['a-3', 'm-3', 'x-3'],
    ]);
  });
});
