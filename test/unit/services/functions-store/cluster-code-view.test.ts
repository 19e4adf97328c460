// The Worker's deployed-version view (src/services/worker/adapters/code-view/cluster-code-view.ts) against a
// store on the in-memory backend: switch for new tasks only, pinned epochs live until unpinned, refusal
// of a tampered bundle keeps the served version and reports why, retry with backoff on virtual time.
import { describe, expect, it } from 'vitest';
import { FunctionsStore } from '../../../../src/services/functions-store/functions-store.js';
import { MemoryFunctionsKv } from '../../../../src/services/functions-store/memory-kv.js';
import { versionKey } from '../../../../src/services/functions-store/store-keys.js';
import { ClusterCodeView } from '../../../../src/services/worker/adapters/code-view/cluster-code-view.js';

const folder = (mark: string) => [{ fileName: 'probe.ts', source: `export default () => '${mark}';\n` }];

function setup() {
  const kv = new MemoryFunctionsKv();
  const store = new FunctionsStore(kv);
  let now = 0;
  const view = new ClusterCodeView({
    source: store,
    functionsDir: '/srv/functions',
    pollMs: 1000,
    clock: () => now,
  });
  const retired: string[] = [];
  view.onRetire((e) => retired.push(e));
  return { kv, store, view, retired, advance: (ms: number) => (now += ms) };
}

describe('ClusterCodeView', () => {
  it('without a deployment, pins fail naming the reason; the status says so', async () => {
    const { view } = setup();
    await view.poll();
    await expect(view.pinCurrent()).rejects.toMatchObject({ code: 'NO_DEPLOYMENT' });
    await expect(view.pinCurrent()).rejects.toThrow(/functions\.source is cluster/);
    expect(view.status()).toEqual({ error: expect.stringMatching(/no functions version has been deployed/) });
  });

  it('serves the deployed version; a new one is for new tasks, the old lives until its last task ends', async () => {
    const { store, view, retired } = setup();
    const a = await store.deploy(folder('a'));
    await view.poll();
    expect(view.status()).toEqual({ version: a.entry.version });
    const pinned = await view.pinCurrent();
    expect(pinned).toBe(a.entry.version);
    expect(view.snapshot(pinned)).toMatchObject({
      id: pinned,
      functionsDir: '/srv/functions',
      files: [{ name: 'probe', fileName: 'probe.ts', source: folder('a')[0]!.source }],
    });

    const b = await store.deploy(folder('b'));
    await view.poll();
    expect(await view.pinCurrent()).toBe(b.entry.version);
    expect(view.snapshot(a.entry.version)).toBeDefined(); // still pinned by the first task
    expect(retired).toEqual([]);
    view.unpin(a.entry.version);
    expect(retired).toEqual([a.entry.version]);
    expect(view.snapshot(a.entry.version)).toBeUndefined();
    expect(view.epochs()).toEqual([{ epoch: b.entry.version, pins: 1, current: true }]);
  });

  it('refuses a tampered bundle, keeps serving, retries with backoff, and switches once repaired', async () => {
    const { kv, store, view, advance } = setup();
    const a = await store.deploy(folder('a'));
    await view.poll();
    const good = await store.deploy(folder('b'));
    const key = versionKey(good.entry.version);
    const intact = (await kv.get(key))!.value;
    kv.tamper(key, (await kv.get(versionKey(a.entry.version)))!.value); // a's files under b's key
    await view.poll();
    expect(view.currentId).toBe(a.entry.version);
    expect(view.status().error).toMatch(
      new RegExp(
        `^refused version ${good.entry.version} \\(still serving ${a.entry.version}\\): its files hash to`,
      ),
    );
    expect(await view.pinCurrent()).toBe(a.entry.version);

    kv.tamper(key, intact);
    await view.poll(); // within the first backoff (1 poll interval): not fetched again yet
    expect(view.currentId).toBe(a.entry.version);
    advance(1000);
    await view.poll();
    expect(view.status()).toEqual({ version: good.entry.version });
  });

  it('the backoff doubles per failure up to its cap', async () => {
    const { kv, store, view, advance } = setup();
    const a = await store.deploy(folder('a'));
    kv.tamper(versionKey(a.entry.version), Buffer.from('garbage'));
    let fetches = 0;
    const counting = new ClusterCodeView({
      source: { current: () => store.current(), fetch: (p) => (fetches++, store.fetch(p)) },
      functionsDir: '/f',
      pollMs: 1000,
      clock: () => now,
    });
    let now = 0;
    const times: number[] = [];
    for (let t = 0; t <= 70_000; t += 500) {
      now = t;
      const before = fetches;
      await counting.poll();
      if (fetches > before) times.push(t);
    }
    expect(times.slice(0, 6)).toEqual([0, 1000, 3000, 7000, 15000, 31000]);
    expect(times[6]).toBe(61000); // capped at MAX_RETRY_BACKOFF_MS (30 s)
    expect(counting.status().error).toMatch(/^refused version .* \(no version to run yet\)/);
    void view;
    void advance;
  });

  it('an unreadable store keeps the served version and reports it on one line', async () => {
    const { store } = setup();
    const a = await store.deploy(folder('a'));
    let down = false;
    const view = new ClusterCodeView({
      source: {
        current: () => (down ? Promise.reject(new Error('etcd\nunavailable')) : store.current()),
        fetch: (p) => store.fetch(p),
      },
      functionsDir: '/f',
    });
    await view.poll();
    down = true;
    await view.poll();
    expect(view.status()).toEqual({
      version: a.entry.version,
      error: 'cannot read the deployed version: etcd unavailable',
    });
    down = false;
    await view.poll();
    expect(view.status()).toEqual({ version: a.entry.version });
  });
});
