import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Row } from '../../../../src/plugin.js';
import { StorageError, StorageErrorCode } from '../../../../src/services/storage/errors.js';
import { blockRow } from '../../../../test/support/chain-fixture.js';
import { MemoryTaskIo } from '../../../../test/support/memory-task-io.js';
import tableUpsertsWriter, { TableUpsertsError, TableUpsertsErrorCode } from '../src/index.js';
import { collectUpserts, lockOrder } from '../src/upserts.js';
import { itDeclaresItself, packageUnderTest } from '../../../../test/support/plugin-package.js';

const pkg = await packageUnderTest(import.meta.url);
const { validate, taskCtx } = pkg;

const key = (blockNumber: number, logIdx: number) => ({
  chain_id: 1,
  block_number: blockNumber,
  log_idx: logIdx,
});
const values = (amount: string) => ({ token: '0xt', from_address: '0xa', to_address: '0xb', amount });
const upsert = (blockNumber: number, logIdx: number, amount = '1') => ({
  table: 'token_transfers',
  key: key(blockNumber, logIdx),
  values: values(amount),
});
const row = (blockNumber: number, logIdx: number, amount = '1'): Row => ({
  ...key(blockNumber, logIdx),
  ...values(amount),
});

function seeded(): MemoryTaskIo {
  return MemoryTaskIo.fromConfigFile().seed('token_transfers', [row(1, 0), row(1, 1)]);
}

describe('TableUpsertsResultHandler writer', () => {
  itDeclaresItself(pkg, {
    kind: 'writer',
    type: 'TableUpsertsResultHandler',
    errorCodes: TableUpsertsErrorCode,
  });

  it('applies every upsert in one transaction and counts them per table', async () => {
    const io = seeded();
    const block = blockRow(9);
    const { chain_id, number, hash, ...rest } = block;
    const outputs = [
      upsert(1, 0, '5'),
      null,
      [upsert(2, 0), { table: 'blocks', key: { chain_id, number, hash }, values: rest }],
      [],
    ];
    const results = await tableUpsertsWriter.execute(taskCtx(), {}, outputs, io);
    expect(results).toEqual([
      {
        pluginName: 'TableUpsertsResultHandler',
        success: true,
        result: { upserts: 3, tables: { blocks: 1, token_transfers: 2 } },
      },
    ]);
    expect(io.commits).toBe(1);
    expect(io.rows('token_transfers')).toEqual([row(1, 0, '5'), row(1, 1), row(2, 0)]);
    expect(io.rows('blocks')).toEqual([block]);
  });

  it('lets a later upsert of the same key win, and is idempotent on replay', async () => {
    const io = seeded();
    const outputs = [upsert(3, 0, 'first'), [upsert(3, 0, 'second')]];
    await tableUpsertsWriter.execute(taskCtx(), {}, outputs, io);
    expect(io.rows('token_transfers')).toContainEqual(row(3, 0, 'second'));
    const once = io.snapshot();
    await tableUpsertsWriter.execute(taskCtx(), {}, outputs, io);
    expect(io.snapshot()).toEqual(once);
  });

  it('applies upserts in table and key order (no deadlocks), equal keys in output order', () => {
    const outputs = [upsert(3, 1, 'x'), upsert(1, 2), upsert(3, 1, 'y'), upsert(1, 0)];
    const order = (list: unknown[]) =>
      lockOrder(collectUpserts(list, undefined)).map((u) => [
        u.key.block_number,
        u.key.log_idx,
        u.values.amount,
      ]);
    expect(order(outputs)).toEqual([
      [1, 0, '1'],
      [1, 2, '1'],
      [3, 1, 'x'],
      [3, 1, 'y'],
    ]);
    // Another task's output order does not change the order of distinct keys.
    expect(order([outputs[3], outputs[1], outputs[0], outputs[2]])).toEqual(order(outputs));
  });

  it('writes nothing and opens no transaction when no output holds an upsert', async () => {
    const io = seeded();
    const [result] = await tableUpsertsWriter.execute(taskCtx(), {}, [null, undefined, []], io);
    expect(result?.result).toEqual({ upserts: 0, tables: {} });
    expect(io.commits).toBe(0);
  });

  it('accepts tables in the allow-list and rejects any other as BAD_OUTPUT', async () => {
    const io = seeded();
    await tableUpsertsWriter.execute(taskCtx(), { tables: ['token_transfers'] }, [upsert(4, 0)], io);
    const before = io.snapshot();
    const outputs = [
      upsert(5, 0),
      [{ table: 'blocks', key: { chain_id: 1, number: 1, hash: '0x1' }, values: {} }],
    ];
    const err = await tableUpsertsWriter
      .execute(taskCtx(), { tables: ['token_transfers'] }, outputs, io)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TableUpsertsError);
    expect(err).toMatchObject({
      code: 'BAD_OUTPUT',
      retryable: false,
      details: { outputIndex: 1, upsertIndex: 0, table: 'blocks' },
    });
    expect((err as Error).message).toMatch(
      /output 1 upsert 0: table "blocks" is not in this writer's tables \(token_transfers\)/,
    );
    expect(io.snapshot()).toEqual(before);
  });

  it.each([
    ['a string', ['x'], /expected an upsert/],
    ['a row instead of an upsert', [row(1, 0)], /unknown upsert field/],
    ['a missing table', [{ key: key(1, 0), values: {} }], /table must be a non-empty string, got undefined/],
    ['an empty key', [{ table: 'token_transfers', key: {}, values: {} }], /key must be an object/],
    ['a key that is an array', [{ table: 'token_transfers', key: [1], values: {} }], /key must be an object/],
    ['values missing', [{ table: 'token_transfers', key: key(1, 0) }], /values must be an object/],
    ['an extra field', [{ ...upsert(1, 0), op: 'delete' }], /unknown upsert field\(s\) "op"/],
  ])('rejects %s as BAD_OUTPUT and writes nothing', async (_name, outputs, message) => {
    const io = seeded();
    const before = io.snapshot();
    const err = await tableUpsertsWriter
      .execute(taskCtx(), {}, [upsert(7, 0), ...outputs], io)
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'BAD_OUTPUT', retryable: false, details: { outputIndex: 1 } });
    expect((err as Error).message).toMatch(message);
    expect(io.snapshot()).toEqual(before);
    expect(io.commits).toBe(0);
  });

  it('a storage error fails the whole transaction, leaving the prior state; retryable passes through', async () => {
    const io = seeded();
    const before = io.snapshot();
    // The second upsert lacks non-nullable columns: storage rejects it (not retryable).
    const bad = { table: 'token_transfers', key: key(6, 0), values: { amount: '1' } };
    const err = await tableUpsertsWriter
      .execute(taskCtx(), {}, [upsert(6, 1), bad], io)
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: StorageErrorCode.BAD_VALUE, retryable: false });
    expect(io.snapshot()).toEqual(before);

    const overloaded = new StorageError(StorageErrorCode.OVERLOADED, 'no backend slot');
    io.failNext({ op: 'commit', error: overloaded });
    await expect(tableUpsertsWriter.execute(taskCtx(), {}, [upsert(6, 1)], io)).rejects.toBe(overloaded);
    expect(overloaded.retryable).toBe(true);
    expect(io.snapshot()).toEqual(before);
  });

  it('accepts the README example config', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const task = JSON.parse(/```json\n([\s\S]*?)```/.exec(readme)?.[1] ?? 'null') as {
      resultHandler: { type: string; config: unknown };
    };
    expect(task.resultHandler.type).toBe('TableUpsertsResultHandler');
    expect(validate(task.resultHandler.config)).toBe(true);
    expect(validate({})).toBe(true);
  });

  it.each([
    ['tables not an array', { tables: 'blocks' }, 'type'],
    ['a duplicate table', { tables: ['a', 'a'] }, 'uniqueItems'],
    ['an empty table name', { tables: [''] }, 'minLength'],
    ['an unknown field', { table: 'blocks' }, 'additionalProperties'],
  ])('rejects %s (rule %s)', (_name, cfg, rule) => {
    expect(validate(cfg)).toBe(false);
    expect(validate.errors?.map((e) => e.keyword)).toContain(rule);
  });
});
