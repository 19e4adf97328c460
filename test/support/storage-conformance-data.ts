// Conformance, part 1: values, reads, scans and transactional writes (see storage-conformance.ts).
import { describe, expect, it } from 'vitest';
import { StorageErrorCode } from '../../src/services/storage/errors.js';
import type { MakeBackend } from './storage-conformance-fixtures.js';
import { item, pagesOf, storageErrorOf, useConformanceBackend } from './storage-conformance-fixtures.js';

const FULL_ROW = {
  id: 1,
  big: Number.MAX_SAFE_INTEGER,
  r: -1234.5678,
  t: 'héllo ✓ "quoted" \'single\'',
  b: true,
  j: { nested: { list: [1, 'two', null, false], n: 1.5 }, s: 'x' },
  bin: '0xdeadbeef00ff',
  n_int: -7,
  n_big: Number.MIN_SAFE_INTEGER,
  n_real: 0.25,
  n_text: '',
  n_bool: false,
  n_json: [1, [2, 3]],
  n_bin: '0x',
};

const NULL_ROW = {
  id: 2,
  big: 0,
  r: 0,
  t: '',
  b: false,
  j: 'just a string',
  bin: '0x00',
  n_int: null,
  n_big: null,
  n_real: null,
  n_text: null,
  n_bool: null,
  n_json: null,
  n_bin: null,
};

export function conformanceDataTests(make: MakeBackend): void {
  describe('values', () => {
    const h = useConformanceBackend(make);

    it('round-trips every column type, in declaration order, including nulls', async () => {
      const { backend } = h();
      await backend.transaction(async (tx) => tx.insertRows('kinds', [FULL_ROW, NULL_ROW]));
      const full = await backend.get('kinds', { id: 1 });
      expect(full).toEqual(FULL_ROW);
      expect(Object.keys(full ?? {})).toEqual(Object.keys(FULL_ROW));
      expect(await backend.get('kinds', { id: 2 })).toEqual(NULL_ROW);
    });

    it('returns bytes as lowercase hex and keeps json scalars and the bigint limits exact', async () => {
      const { backend } = h();
      await backend.transaction(async (tx) => {
        await tx.upsert(
          'kinds',
          { id: 3 },
          { ...NULL_ROW, id: undefined, bin: '0xABcdEF', j: 42, big: Number.MIN_SAFE_INTEGER },
        );
        await tx.upsert(
          'kinds',
          { id: 4 },
          { ...NULL_ROW, id: undefined, j: [], n_json: { a: null }, r: 1e300 },
        );
      });
      const [a, b] = await backend.getMany('kinds', [{ id: 3 }, { id: 4 }]);
      expect(a).toMatchObject({ bin: '0xabcdef', j: 42, big: Number.MIN_SAFE_INTEGER });
      expect(b).toMatchObject({ j: [], n_json: { a: null }, r: 1e300 });
    });

    it('omitted nullable columns are stored as null', async () => {
      const { backend } = h();
      await backend.transaction((tx) =>
        tx.insertRows('items', [{ chain_id: 1, block: 5, idx: 0, name: 'n' }]),
      );
      expect(await backend.get('items', { chain_id: 1, block: 5, idx: 0 })).toEqual(
        item(5, 0, { name: 'n' }),
      );
    });
  });

  describe('get and getMany', () => {
    const h = useConformanceBackend(make);

    it('get returns undefined for a missing key', async () => {
      expect(await h().backend.get('items', { chain_id: 1, block: 1, idx: 1 })).toBeUndefined();
    });

    it('getMany answers in input order with misses and repeats, across query batches', async () => {
      const { backend } = h();
      const rows = Array.from({ length: 1_200 }, (_, i) => item(i % 40, i));
      await backend.transaction((tx) => tx.insertRows('items', rows));
      const keys: Record<string, unknown>[] = [...rows]
        .reverse()
        .map((r) => ({ chain_id: 1, block: r['block'], idx: r['idx'] }));
      keys.splice(3, 0, { chain_id: 2, block: 0, idx: 0 }, keys[0] ?? {});
      const got = await backend.getMany('items', keys);
      expect(got).toHaveLength(keys.length);
      expect(got[3]).toBeUndefined();
      expect(got[4]).toEqual(got[0]);
      const expected = keys.map((k) => rows.find((r) => r['idx'] === k['idx'] && k['chain_id'] === 1));
      expect(got).toEqual(expected);
      expect(await backend.getMany('items', [])).toEqual([]);
    });

    it('matches bytes keys case-insensitively', async () => {
      const { backend } = h();
      await backend.transaction((tx) => tx.insertRows('kinds', [{ ...FULL_ROW, id: 9 }]));
      expect((await backend.getMany('kinds', [{ id: 9 }, { id: 10 }]))[0]).toMatchObject({
        bin: FULL_ROW.bin,
      });
    });
  });

  describe('scan', () => {
    const h = useConformanceBackend(make);
    const rows = Array.from({ length: 50 }, (_, i) =>
      item(Math.floor(i / 5), i % 5, { note: i % 2 ? 'odd' : null }),
    );
    const load = () => h().backend.transaction((tx) => tx.insertRows('items', [...rows].reverse()));

    it('pages by batchSize, every row once, in primary key order', async () => {
      await load();
      const pages = await pagesOf(h().backend.scan('items', { batchSize: 7 }));
      expect(pages.map((p) => p.length)).toEqual([7, 7, 7, 7, 7, 7, 7, 1]);
      expect(pages.flat()).toEqual(rows);
    });

    it('uses storage.scanBatchSize by default and yields nothing for an empty table', async () => {
      expect(await pagesOf(h().backend.scan('items'))).toEqual([]);
      await load();
      const pages = await pagesOf(h().backend.scan('items'));
      expect(pages).toHaveLength(1); // scanBatchSize 100 > 50 rows
      expect(pages[0]).toHaveLength(50);
    });

    it('filters by equality, IN lists, null and block range', async () => {
      await load();
      const { backend } = h();
      const eq = (await pagesOf(backend.scan('items', { where: { block: 3 } }))).flat();
      expect(eq).toEqual(rows.filter((r) => r['block'] === 3));
      const inList = (await pagesOf(backend.scan('items', { where: { idx: [0, 4], block: [1, 2] } }))).flat();
      expect(inList.map((r) => [r['block'], r['idx']])).toEqual([
        [1, 0],
        [1, 4],
        [2, 0],
        [2, 4],
      ]);
      const nulls = (await pagesOf(backend.scan('items', { where: { note: null } }))).flat();
      expect(nulls).toHaveLength(25);
      expect(nulls.every((r) => r['note'] === null)).toBe(true);
      const range = (
        await pagesOf(backend.scan('items', { blockRange: { from: 2, to: 4 }, batchSize: 4 }))
      ).flat();
      expect(range).toEqual(rows.filter((r) => (r['block'] as number) >= 2 && (r['block'] as number) <= 4));
      expect(await pagesOf(backend.scan('items', { where: { block: [] } }))).toEqual([]);
      expect(await pagesOf(backend.scan('items', { where: { chain_id: 2 } }))).toEqual([]);
    });

    it('projects columns (in declaration order) and honours limit across pages', async () => {
      await load();
      const pages = await pagesOf(
        h().backend.scan('items', { columns: ['name', 'block'], limit: 10, batchSize: 4 }),
      );
      expect(pages.map((p) => p.length)).toEqual([4, 4, 2]);
      expect(pages.flat()).toEqual(rows.slice(0, 10).map((r) => ({ block: r['block'], name: r['name'] })));
      expect(Object.keys(pages[0]?.[0] ?? {})).toEqual(['block', 'name']);
      expect(await pagesOf(h().backend.scan('items', { limit: 0 }))).toEqual([]);
    });
  });

  describe('transactions', () => {
    const h = useConformanceBackend(make);

    it('commits every write together and resolves with the callback value', async () => {
      const { backend } = h();
      const result = await backend.transaction(async (tx) => {
        await tx.insertRows('items', [item(1, 0), item(1, 1)]);
        await tx.upsert('tags', { tag: 'a' }, {});
        return 'done';
      });
      expect(result).toBe('done');
      expect((await pagesOf(backend.scan('items'))).flat()).toHaveLength(2);
      expect(await backend.get('tags', { tag: 'a' })).toEqual({ tag: 'a' });
    });

    it('rolls back everything when the callback throws, rethrowing its error unchanged', async () => {
      const { backend } = h();
      const boom = new Error('writer failed');
      await expect(
        backend.transaction(async (tx) => {
          await tx.insertRows('items', [item(1, 0)]);
          await tx.upsert('tags', { tag: 'a' }, {});
          throw boom;
        }),
      ).rejects.toBe(boom);
      expect(await pagesOf(backend.scan('items'))).toEqual([]);
      expect(await backend.get('tags', { tag: 'a' })).toBeUndefined();
    });

    it('a read during an open transaction never sees its uncommitted rows', async () => {
      const { backend } = h();
      let written!: () => void;
      const wrote = new Promise<void>((resolve) => (written = resolve));
      let finish!: () => void;
      const finishing = new Promise<void>((resolve) => (finish = resolve));
      const tx = backend.transaction(async (t) => {
        await t.insertRows('items', [item(7, 0)]);
        written();
        await finishing;
        throw new Error('abandon');
      });
      await wrote;
      const read = backend.get('items', { chain_id: 1, block: 7, idx: 0 });
      finish();
      await expect(tx).rejects.toThrow('abandon');
      expect(await read).toBeUndefined();
    });

    it('upsert inserts then replaces; insertRows replaces on key and the last duplicate wins', async () => {
      const { backend } = h();
      const key = { chain_id: 1, block: 2, idx: 3 };
      await backend.transaction((tx) => tx.upsert('items', key, { name: 'first', note: 'x' }));
      await backend.transaction((tx) => tx.upsert('items', key, { name: 'second' }));
      expect(await backend.get('items', key)).toEqual({ ...key, name: 'second', note: null });
      await backend.transaction((tx) =>
        tx.insertRows('items', [item(2, 3, { name: 'a' }), item(2, 4), item(2, 3, { name: 'b' })]),
      );
      expect(await backend.get('items', key)).toMatchObject({ name: 'b' });
      await backend.transaction((tx) => tx.insertRows('tags', [{ tag: 'x' }, { tag: 'x' }]));
      await backend.transaction((tx) => tx.insertRows('tags', [{ tag: 'x' }]));
      expect((await pagesOf(backend.scan('tags'))).flat()).toEqual([{ tag: 'x' }]);
    });

    it('insertRows splits big inputs into statements within the parameter limits', async () => {
      const { backend } = h();
      const rows = Array.from({ length: 14_000 }, (_, i) => item(Math.floor(i / 100), i % 100));
      await backend.transaction((tx) => tx.insertRows('items', rows));
      let count = 0;
      for await (const page of backend.scan('items', { batchSize: 5_000, columns: ['idx'] }))
        count += page.length;
      expect(count).toBe(14_000);
    });

    it('delete removes one row; deleteWhere counts what it removed', async () => {
      const { backend } = h();
      await backend.transaction((tx) =>
        tx.insertRows(
          'items',
          Array.from({ length: 20 }, (_, i) => item(Math.floor(i / 4), i % 4)),
        ),
      );
      await backend.transaction((tx) => tx.delete('items', { chain_id: 1, block: 0, idx: 0 }));
      expect(await backend.get('items', { chain_id: 1, block: 0, idx: 0 })).toBeUndefined();
      const counts = await backend.transaction(async (tx) => [
        await tx.deleteWhere('items', { chain_id: 1 }, { from: 3, to: 4 }),
        await tx.deleteWhere('items', { block: 1, idx: [0, 1, 9] }),
        await tx.deleteWhere('items', { block: 99 }),
      ]);
      expect(counts).toEqual([8, 2, 0]);
      expect((await pagesOf(backend.scan('items'))).flat()).toHaveLength(9);
    });

    it('rejects upsert values that contradict the key, and writes after the callback settled', async () => {
      const { backend } = h();
      await storageErrorOf(
        backend.transaction((tx) =>
          tx.upsert('items', { chain_id: 1, block: 1, idx: 1 }, { idx: 2, name: 'n' }),
        ),
        StorageErrorCode.BAD_VALUE,
      );
      let leaked: Parameters<Parameters<typeof backend.transaction>[0]>[0] | undefined;
      await backend.transaction(async (tx) => {
        leaked = tx;
      });
      await storageErrorOf(leaked!.insertRows('items', [item(1, 1)]), StorageErrorCode.QUERY_FAILED);
      expect(await pagesOf(backend.scan('items'))).toEqual([]);
    });
  });
}
