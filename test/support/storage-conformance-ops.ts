// Conformance, part 2: migration, admission, request errors and close (see storage-conformance.ts).
import { describe, expect, it } from 'vitest';
import type { TableConfig } from '../../src/kernel/config-types.js';
import { StorageErrorCode } from '../../src/services/storage/errors.js';
import type { ConformanceCapabilities, MakeBackend } from './storage-conformance-fixtures.js';
import {
  CONFORMANCE_TABLES,
  item,
  pagesOf,
  storageErrorOf,
  useConformanceBackend,
} from './storage-conformance-fixtures.js';

const ITEMS = CONFORMANCE_TABLES['items'] as TableConfig;

function withItems(change: (t: TableConfig) => TableConfig): Record<string, TableConfig> {
  return { ...CONFORMANCE_TABLES, items: change(ITEMS) };
}

export function conformanceOpsTests(make: MakeBackend, caps: ConformanceCapabilities): void {
  describe('migrate', () => {
    const h = useConformanceBackend(make, { migrate: false });

    it('creates the declared tables, then reports them unchanged', async () => {
      const { backend } = h();
      expect(await backend.migrate()).toEqual({ created: ['kinds', 'items', 'tags'], unchanged: [] });
      expect(await backend.migrate()).toEqual({ created: [], unchanged: ['kinds', 'items', 'tags'] });
      expect(await backend.migrate({ checkOnly: true })).toEqual({
        created: [],
        unchanged: ['kinds', 'items', 'tags'],
      });
    });

    it('checkOnly on an empty database is a mismatch listing every missing table, and creates nothing', async () => {
      const { backend } = h();
      const err = await storageErrorOf(
        backend.migrate({ checkOnly: true }),
        StorageErrorCode.SCHEMA_MISMATCH,
      );
      expect(err.retryable).toBe(false);
      expect(err.details.differences).toEqual([
        'table "kinds" does not exist in the database',
        'table "items" does not exist in the database',
        'table "tags" does not exist in the database',
      ]);
      await storageErrorOf(backend.get('tags', { tag: 'x' }), StorageErrorCode.QUERY_FAILED);
    });

    const cases: [string, Record<string, TableConfig>, string[]][] = [
      [
        'a changed column type',
        withItems((t) => ({ ...t, columns: { ...t.columns, name: { type: 'real', nullable: false } } })),
        ['table "items": column "name" is real in the config but'],
      ],
      [
        'a missing and an extra column',
        withItems((t) => {
          const { note: _note, ...rest } = t.columns;
          return { ...t, columns: { ...rest, extra: { type: 'text', nullable: true } } };
        }),
        [
          'table "items": column "extra" (text) is missing from the database',
          'table "items": column "note" (TEXT) is in the database but not in the config',
        ],
      ],
      [
        'a different nullability',
        withItems((t) => ({ ...t, columns: { ...t.columns, name: { type: 'text', nullable: true } } })),
        ['table "items": column "name" is nullable in the config but NOT NULL in the database'],
      ],
      [
        'a different primary key',
        withItems((t) => ({ ...t, primaryKey: ['chain_id', 'block'] })),
        [
          'table "items": primary key is (chain_id, block) in the config but (chain_id, block, idx) in the database',
        ],
      ],
    ];
    for (const [what, tables, expected] of cases) {
      it.skipIf(!caps.sharedDatabase)(`reports ${what} as SCHEMA_MISMATCH and alters nothing`, async () => {
        const { backend, reopen } = h();
        await backend.migrate();
        await backend.transaction((tx) => tx.insertRows('items', [item(1, 1, { note: 'kept' })]));
        const changed = await reopen!({
          tables: {
            ...tables,
            fresh: { columns: { k: { type: 'text', nullable: false } }, primaryKey: ['k'] },
          },
        });
        const err = await storageErrorOf(changed.migrate(), StorageErrorCode.SCHEMA_MISMATCH);
        const differences = err.details.differences ?? [];
        expect(differences).toHaveLength(expected.length);
        expected.forEach((line, i) => expect(differences[i]).toContain(line));
        expect(err.message).toContain(expected[0]);
        // Nothing altered: the original config still matches, its row is intact, `fresh` was not created.
        expect(await backend.migrate({ checkOnly: true })).toEqual({
          created: [],
          unchanged: ['kinds', 'items', 'tags'],
        });
        expect(await backend.get('items', { chain_id: 1, block: 1, idx: 1 })).toMatchObject({ note: 'kept' });
        const fresh = await reopen!({
          tables: { fresh: { columns: { k: { type: 'text', nullable: false } }, primaryKey: ['k'] } },
        });
        expect(
          (await storageErrorOf(fresh.migrate({ checkOnly: true }), StorageErrorCode.SCHEMA_MISMATCH)).details
            .differences,
        ).toEqual(['table "fresh" does not exist in the database']);
      });
    }
  });

  describe('admission', () => {
    const h = useConformanceBackend(make, { storage: { maxConcurrentOps: 1, admissionWaitMs: 20 } });

    it('a held transaction makes another operation fail OVERLOADED (retryable) after admissionWaitMs', async () => {
      const { backend } = h();
      expect(backend.admission).toEqual({ inUse: 0, waiting: 0, capacity: 1 });
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let started!: () => void;
      const running = new Promise<void>((resolve) => (started = resolve));
      const tx = backend.transaction(async (t) => {
        await t.insertRows('tags', [{ tag: 'held' }]);
        started();
        await held;
      });
      await running;
      expect(backend.admission.inUse).toBe(1);
      const err = await storageErrorOf(backend.get('tags', { tag: 'held' }), StorageErrorCode.OVERLOADED);
      expect(err.retryable).toBe(true);
      expect(err.details).toMatchObject({ table: 'tags', backend: backend.displayUrl });
      expect(backend.admission.waiting).toBe(0);
      release();
      await tx;
      expect(await backend.get('tags', { tag: 'held' })).toEqual({ tag: 'held' });
      expect(backend.admission.inUse).toBe(0);
    });

    it('aborting while waiting fails with CANCELLED and leaves the queue', async () => {
      const { backend } = h();
      const slow = await make({ storage: { maxConcurrentOps: 1, admissionWaitMs: 60_000 } });
      try {
        await slow.backend.migrate();
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        const tx = slow.backend.transaction(() => held);
        const controller = new AbortController();
        const waiting = slow.backend.get('tags', { tag: 'x' }, { signal: controller.signal });
        await Promise.resolve();
        expect(slow.backend.admission.waiting).toBe(1);
        controller.abort(new Error('task converged'));
        const err = await storageErrorOf(waiting, StorageErrorCode.CANCELLED);
        expect(err.retryable).toBe(false);
        expect(slow.backend.admission.waiting).toBe(0);
        release();
        await tx;
        await storageErrorOf(
          backend.get('tags', { tag: 'x' }, { signal: AbortSignal.abort() }),
          StorageErrorCode.CANCELLED,
        );
      } finally {
        await slow.cleanup();
      }
    });
  });

  describe('request errors', () => {
    const h = useConformanceBackend(make);

    it('unknown tables and columns are refused before any SQL runs', async () => {
      const { backend } = h();
      const t = await storageErrorOf(backend.get('nope', { id: 1 }), StorageErrorCode.UNKNOWN_TABLE);
      expect(t.details).toMatchObject({ table: 'nope', backend: backend.displayUrl });
      await storageErrorOf(pagesOf(backend.scan('nope')), StorageErrorCode.UNKNOWN_TABLE);
      await storageErrorOf(
        backend.transaction((tx) => tx.insertRows('nope', [])),
        StorageErrorCode.UNKNOWN_TABLE,
      );
      const c = await storageErrorOf(
        pagesOf(backend.scan('items', { where: { colour: 'red' } })),
        StorageErrorCode.UNKNOWN_COLUMN,
      );
      expect(c.details).toMatchObject({ table: 'items', column: 'colour' });
      await storageErrorOf(
        pagesOf(backend.scan('items', { columns: ['name', 'size'] })),
        StorageErrorCode.UNKNOWN_COLUMN,
      );
      await storageErrorOf(
        backend.transaction((tx) => tx.insertRows('items', [item(1, 1, { size: 3 })])),
        StorageErrorCode.UNKNOWN_COLUMN,
      );
    });

    it('bad keys, values and ranges are BAD_VALUE naming the column', async () => {
      const { backend } = h();
      const key = await storageErrorOf(
        backend.get('items', { chain_id: 1, block: 1 }),
        StorageErrorCode.BAD_VALUE,
      );
      expect(key.details.column).toBe('idx');
      const value = await storageErrorOf(
        backend.transaction((tx) => tx.insertRows('items', [item(1, 1, { name: 5 })])),
        StorageErrorCode.BAD_VALUE,
      );
      expect(value.details).toMatchObject({ table: 'items', column: 'name' });
      expect(value.retryable).toBe(false);
      const nul = await storageErrorOf(
        backend.transaction((tx) => tx.insertRows('items', [item(1, 1, { name: null })])),
        StorageErrorCode.BAD_VALUE,
      );
      expect(nul.details.column).toBe('name');
      await storageErrorOf(
        pagesOf(backend.scan('tags', { blockRange: { from: 1, to: 2 } })),
        StorageErrorCode.BAD_VALUE,
      );
      await storageErrorOf(
        pagesOf(backend.scan('items', { where: { block: 'one' } })),
        StorageErrorCode.BAD_VALUE,
      );
      await storageErrorOf(pagesOf(backend.scan('items', { batchSize: 0 })), StorageErrorCode.BAD_VALUE);
      await storageErrorOf(backend.get('kinds', { id: 1.5 }), StorageErrorCode.BAD_VALUE);
    });

    it('a validation error inside a transaction does not poison it', async () => {
      const { backend } = h();
      await backend.transaction(async (tx) => {
        await expect(tx.insertRows('items', [item(1, 1, { name: 5 })])).rejects.toMatchObject({
          code: 'BAD_VALUE',
        });
        await tx.insertRows('items', [item(1, 1)]);
      });
      expect(await backend.get('items', { chain_id: 1, block: 1, idx: 1 })).toEqual(item(1, 1));
    });
  });

  describe('close', () => {
    const h = useConformanceBackend(make);

    it('after close every operation fails with CLOSED (retryable); close is idempotent', async () => {
      const { backend } = h();
      await backend.close();
      await backend.close();
      const err = await storageErrorOf(backend.get('tags', { tag: 'a' }), StorageErrorCode.CLOSED);
      expect(err.retryable).toBe(true);
      await storageErrorOf(backend.getMany('tags', [{ tag: 'a' }]), StorageErrorCode.CLOSED);
      await storageErrorOf(pagesOf(backend.scan('tags')), StorageErrorCode.CLOSED);
      await storageErrorOf(
        backend.transaction(async () => 1),
        StorageErrorCode.CLOSED,
      );
      await storageErrorOf(backend.migrate(), StorageErrorCode.CLOSED);
    });

    it('a transaction still running when close begins may finish; later writes fail CLOSED', async () => {
      const { backend } = h();
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let started!: () => void;
      const running = new Promise<void>((resolve) => (started = resolve));
      const tx = backend.transaction(async (t) => {
        await t.insertRows('tags', [{ tag: 'a' }]);
        started();
        await held;
        await t.insertRows('tags', [{ tag: 'b' }]);
      });
      await running;
      const closing = backend.close();
      release();
      await storageErrorOf(tx, StorageErrorCode.CLOSED);
      await closing;
    });
  });
}
