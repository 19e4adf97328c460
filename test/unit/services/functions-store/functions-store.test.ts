// The functions store over the in-memory backend (src/services/functions-store/functions-store.ts):
// deploy / use / list, pruning deletes bundles in the same transaction, a damaged bundle is repaired by a
// redeploy, concurrent updates retry on the guard, and fetch refuses what does not verify.
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { MAX_KEPT_VERSIONS } from '../../../../src/services/functions-store/bundle-limits.js';
import {
  FunctionsStore,
  MAX_TXN_ATTEMPTS,
} from '../../../../src/services/functions-store/functions-store.js';
import type { FunctionsKv, KvTxn } from '../../../../src/services/functions-store/kv-port.js';
import { MemoryFunctionsKv } from '../../../../src/services/functions-store/memory-kv.js';
import {
  CURRENT_KEY,
  INDEX_KEY,
  parsePointer,
  versionKey,
} from '../../../../src/services/functions-store/store-keys.js';

const folder = (mark: string) => [{ fileName: 'probe.ts', source: `export default () => '${mark}';\n` }];

async function rejectsWith(p: Promise<unknown>, code: string): Promise<void> {
  await expect(p).rejects.toMatchObject({ code });
}

describe('FunctionsStore', () => {
  it('deploy stores the bundle, the index and the pointer; the same folder again changes nothing', async () => {
    const kv = new MemoryFunctionsKv();
    let now = 1000;
    const store = new FunctionsStore(kv, () => now);
    const a = await store.deploy(folder('a'));
    expect(a).toMatchObject({ changed: true, newVersion: true, previous: '', pruned: [] });
    expect(kv.keys()).toEqual([CURRENT_KEY, INDEX_KEY, versionKey(a.entry.version)].sort());
    expect(await store.current()).toEqual({
      version: a.entry.version,
      digest: a.entry.digest,
      changedAtMs: 1000,
    });
    now = 2000;
    expect(await store.deploy(folder('a'))).toMatchObject({ changed: false, newVersion: false });
    const list = await store.list();
    expect(list).toMatchObject({ current: a.entry.version, changedAtMs: 1000 });
    expect(list.versions).toEqual([a.entry]);
  });

  it('use rolls back and forward; fetch returns verified files', async () => {
    const store = new FunctionsStore(new MemoryFunctionsKv());
    const a = await store.deploy(folder('a'));
    const b = await store.deploy(folder('b'));
    expect(b.previous).toBe(a.entry.version);
    const back = await store.use(a.entry.version.slice(0, 8));
    expect(back).toMatchObject({ changed: true, previous: b.entry.version });
    expect((await store.current())?.version).toBe(a.entry.version);
    const fetched = await store.fetch({ version: a.entry.version, digest: a.entry.digest });
    expect(fetched.files).toEqual(folder('a'));
    expect((await store.use(a.entry.version)).changed).toBe(false);
  });

  it(`prunes beyond ${MAX_KEPT_VERSIONS} versions, deleting their bundles; use of a pruned one names the rule`, async () => {
    const kv = new MemoryFunctionsKv();
    const store = new FunctionsStore(kv);
    const first = await store.deploy(folder('0'));
    for (let i = 1; i <= MAX_KEPT_VERSIONS; i++) await store.deploy(folder(String(i)));
    expect(kv.keys()).not.toContain(versionKey(first.entry.version));
    expect(kv.keys().filter((k) => k.includes('/versions/'))).toHaveLength(MAX_KEPT_VERSIONS);
    await expect(store.use(first.entry.version)).rejects.toThrow(/keeps the last 10 deployed versions/);
  });

  it('fetch refuses a tampered bundle; redeploying the folder repairs it', async () => {
    const kv = new MemoryFunctionsKv();
    const store = new FunctionsStore(kv);
    const a = await store.deploy(folder('a'));
    const key = versionKey(a.entry.version);
    kv.tamper(key, gzipSync(Buffer.from('{"format":"blockx.functions.bundle/1"}')));
    await rejectsWith(store.fetch(a.entry), 'BUNDLE_CORRUPT');
    const original = (await kv.get(key))!.value;
    kv.tamper(key, original);
    const b = await store.deploy(folder('b'));
    // Other code under a's key: it hashes to b, not a.
    kv.tamper(key, (await kv.get(versionKey(b.entry.version)))!.value);
    await rejectsWith(store.fetch(a.entry), 'BUNDLE_TAMPERED');
    await rejectsWith(store.use(a.entry.version.slice(0, 6)), 'BUNDLE_TAMPERED');
    expect((await store.current())?.version).toBe(b.entry.version); // the pointer did not move
    expect((await store.deploy(folder('a'))).newVersion).toBe(true); // rewritten
    expect((await store.fetch(a.entry)).files).toEqual(folder('a'));
    await rejectsWith(store.fetch({ version: '0123456789abcdef' }), 'VERSION_UNKNOWN');
  });

  it('a lost race re-reads and re-applies; a store that always loses gives up with STORE_CONFLICT', async () => {
    const inner = new MemoryFunctionsKv();
    const rival = new FunctionsStore(inner);
    let races = 2;
    const racing: FunctionsKv = {
      get: (k) => inner.get(k),
      put: (k, v) => inner.put(k, v),
      putIfAbsent: (k, v) => inner.putIfAbsent(k, v),
      commit: async (t: KvTxn) => {
        if (races-- > 0) await rival.deploy(folder(`rival${races}`)); // someone else wins first
        return inner.commit(t);
      },
    };
    const store = new FunctionsStore(racing);
    const mine = await store.deploy(folder('mine'));
    const index = await store.list();
    expect(index.current).toBe(mine.entry.version);
    expect(index.versions).toHaveLength(3); // both rivals' versions survived
    const pointer = parsePointer((await inner.get(CURRENT_KEY))!.value);
    expect(pointer.version).toBe(mine.entry.version);

    let commits = 0;
    const losing = new FunctionsStore({ ...racing, commit: async () => (commits++, false) });
    await rejectsWith(losing.deploy(folder('never')), 'STORE_CONFLICT');
    expect(commits).toBe(MAX_TXN_ATTEMPTS);
  });

  it('a corrupt pointer or index is reported, not trusted', async () => {
    const kv = new MemoryFunctionsKv();
    const store = new FunctionsStore(kv);
    kv.tamper(CURRENT_KEY, Buffer.from('{"format":"blockx.functions.current/1","version":"xyz"}'));
    await rejectsWith(store.current(), 'BUNDLE_CORRUPT');
    kv.tamper(INDEX_KEY, Buffer.from('[]'));
    await rejectsWith(store.list(), 'BUNDLE_CORRUPT');
    await rejectsWith(store.deploy(folder('a')), 'BUNDLE_CORRUPT');
  });
});
