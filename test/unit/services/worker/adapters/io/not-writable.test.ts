// The writer's TaskIoTransaction refuses every write to a table not declared `writable: true`
// (docs/storage.md, "Which tables tasks may write"): NOT_WRITABLE, not retried, before any storage call,
// and the transaction rolls back; reads of that table stay allowed.
import { describe, expect, it } from 'vitest';
import type { TableConfig } from '../../../../../../src/kernel/config-types.js';
import type { TaskIoTransaction } from '../../../../../../src/kernel/plugin-types.js';
import { StorageIoScopeFactory } from '../../../../../../src/services/worker/adapters/io/index.js';
import { MemoryStorageBackend } from '../../../../../support/memory-storage-backend.js';
import { rejection, storageConfig, TABLES, tx } from './fixture.js';

const READ_ONLY: Record<string, TableConfig> = {
  ...TABLES,
  transactions: { ...TABLES.transactions!, writable: false },
};

async function setup() {
  const backend = new MemoryStorageBackend(READ_ONLY, 2);
  backend.seed('transactions', [tx(10, '0xa', 0), tx(10, '0xa', 1)]);
  const factory = new StorageIoScopeFactory({
    backend,
    storage: storageConfig(),
    sleep: () => Promise.resolve(),
    random: () => 0,
  });
  const scope = await factory.open('t1');
  return { backend, io: scope.io('result') };
}

const WRITES: [string, (t: TaskIoTransaction) => Promise<unknown>][] = [
  ['upsert', (t) => t.upsert('transactions', { chain_id: 1 }, {})],
  ['insertRows', (t) => t.insertRows('transactions', [tx(10, '0xa', 9)])],
  ['delete', (t) => t.delete('transactions', { chain_id: 1 })],
  ['deleteWhere', (t) => t.deleteWhere('transactions', {})],
  ['replaceBlockRows', (t) => t.replaceBlockRows('transactions', { number: 10, chainId: 1 }, [])],
  ['replaceBlockRangeRows', (t) => t.replaceBlockRangeRows('transactions', { from: 1, to: 99 }, [])],
];

describe('writes to a table tasks may not write', () => {
  it.each(WRITES)('%s is NOT_WRITABLE, never retried, and reaches no storage', async (op, write) => {
    const { backend, io } = await setup();
    const err = await rejection(io.transaction(write));
    expect(err).toMatchObject({ code: 'NOT_WRITABLE', retryable: false });
    expect(String(err.message)).toContain(`${op}: table "transactions" is not writable by tasks`);
    expect(String(err.message)).toContain('tables.transactions.writable');
    expect(backend.txLog).toEqual([]);
    expect(backend.rows('transactions')).toHaveLength(2);
  });

  it('rolls back the writes to writable tables made before it in the same transaction', async () => {
    const { backend, io } = await setup();
    await rejection(
      io.transaction(async (t) => {
        await t.insertRows('heights', [{ number: 1, note: 'x' }]);
        await t.deleteWhere('transactions', {});
      }),
    );
    expect(backend.rows('heights')).toEqual([]);
    expect(backend.rows('transactions')).toHaveLength(2);
  });

  it('reads stay allowed', async () => {
    const { io } = await setup();
    const rows = [];
    for await (const row of io.scan('transactions')) rows.push(row);
    expect(rows).toHaveLength(2);
  });
});
