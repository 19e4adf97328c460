import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Row } from '../../../../src/plugin.js';
import { StorageError, StorageErrorCode } from '../../../../src/services/storage/errors.js';
import { MemoryTaskIo } from '../../../../test/support/memory-task-io.js';
import blockWriter, {
  BlockWriteError,
  BlockWriteErrorCode,
  type BlockWriteResultHandlerConfig,
} from '../src/index.js';
import { itDeclaresItself, packageUnderTest } from '../../../../test/support/plugin-package.js';

const pkg = await packageUnderTest(import.meta.url);
const { validate, taskCtx } = pkg;

/** A token_transfers row; `amount` tells versions apart. */
const transfer = (blockNumber: number, logIdx: number, amount = '1', chainId = 1): Row => ({
  chain_id: chainId,
  block_number: blockNumber,
  log_idx: logIdx,
  token: '0xtoken',
  from_address: '0xfrom',
  to_address: '0xto',
  amount,
});
/** The same row as a function returns it, without chain and block columns. */
const output = (logIdx: number, amount = '2'): Row => {
  const { chain_id: _c, block_number: _b, ...rest } = transfer(0, logIdx, amount);
  return rest;
};

/** `input` as the kernel hands it to the writer: validated, the schema's defaults filled in. */
function resolved(input: object): BlockWriteResultHandlerConfig {
  const copy = structuredClone(input);
  if (!validate(copy)) throw new Error(JSON.stringify(validate.errors));
  return copy as BlockWriteResultHandlerConfig;
}

const config = resolved({ table: 'token_transfers', chainId: 1, block: { number: 1 } });

function seeded(): MemoryTaskIo {
  return MemoryTaskIo.fromConfigFile().seed('token_transfers', [
    transfer(1, 0),
    transfer(1, 1),
    transfer(1, 2),
    transfer(2, 0),
    transfer(1, 0, '1', 2),
  ]);
}

describe('BlockWriteResultHandler writer', () => {
  itDeclaresItself(pkg, { kind: 'writer', type: 'BlockWriteResultHandler', errorCodes: BlockWriteErrorCode });

  it('replaces the rows of the block: old rows gone, other blocks and chains untouched', async () => {
    const io = seeded();
    const results = await blockWriter.execute(
      taskCtx(),
      config,
      [output(5), null, [output(6), output(7)], undefined],
      io,
    );
    expect(results).toEqual([
      {
        pluginName: 'BlockWriteResultHandler',
        success: true,
        result: { table: 'token_transfers', block: { chainId: 1, number: 1 }, rows: 3 },
      },
    ]);
    expect(io.rows('token_transfers')).toEqual([
      transfer(1, 5, '2'),
      transfer(1, 6, '2'),
      transfer(1, 7, '2'),
      transfer(2, 0),
      transfer(1, 0, '1', 2),
    ]);
    expect(io.commits).toBe(1);
  });

  it('keeps rows that already name the right chain and block', async () => {
    const io = seeded();
    await blockWriter.execute(taskCtx(), config, [transfer(1, 9, '3')], io);
    expect(io.rows('token_transfers').filter((r) => r.block_number === 1 && r.chain_id === 1)).toEqual([
      transfer(1, 9, '3'),
    ]);
  });

  it('with no rows in the outputs, empties the block', async () => {
    const io = seeded();
    const [result] = await blockWriter.execute(taskCtx(), config, [null, []], io);
    expect(result?.result).toMatchObject({ rows: 0 });
    expect(io.rows('token_transfers')).toEqual([transfer(2, 0), transfer(1, 0, '1', 2)]);
  });

  it('is idempotent: replaying the same outputs leaves the same state', async () => {
    const io = seeded();
    const outputs = [output(5), [output(6)]];
    await blockWriter.execute(taskCtx(), config, outputs, io);
    const once = io.snapshot();
    await blockWriter.execute(taskCtx(), config, outputs, io);
    expect(io.snapshot()).toEqual(once);
    expect(io.commits).toBe(2);
  });

  it('does not mutate the outputs it fills', async () => {
    const out = output(5);
    await blockWriter.execute(taskCtx(), config, [out], seeded());
    expect(out).toEqual(output(5));
  });

  it('fills and checks the configured column names', async () => {
    const io = new MemoryTaskIo({
      totals: {
        columns: {
          chain: { type: 'integer', nullable: false },
          height: { type: 'bigint', nullable: false },
          total: { type: 'integer', nullable: false },
        },
        primaryKey: ['chain', 'height'],
        blockColumn: 'height',
        chainColumn: 'chain',
      },
    });
    const custom = {
      table: 'totals',
      chainId: 7,
      block: { number: 3 },
      columns: { chainColumn: 'chain', blockColumn: 'height' },
    };
    await blockWriter.execute(taskCtx(), custom, [{ total: 10 }], io);
    expect(io.rows('totals')).toEqual([{ chain: 7, height: 3, total: 10 }]);
    await expect(blockWriter.execute(taskCtx(), custom, [{ total: 1, height: 4 }], io)).rejects.toMatchObject(
      {
        code: 'BAD_OUTPUT',
      },
    );
  });

  it.each([
    ['a string', ['x'], 0, undefined, /output 0: expected a row object/],
    ['a number after a good row', [output(1), 5], 1, undefined, /output 1: .*number 5/],
    ['a non-object inside an array', [null, [output(1), 'y']], 1, 1, /output 1 row 1: /],
    ['a nested array', [[[output(1)]]], 0, 0, /output 0 row 0: .*an array/],
    [
      'a row of another block',
      [transfer(2, 0)],
      0,
      undefined,
      /block_number is number 2 .* block_number 1 only/,
    ],
    ['a row of another chain', [[transfer(1, 0, '1', 2)]], 0, 0, /chain_id is number 2/],
    [
      'a block number given as a string',
      [{ ...output(1), block_number: '1' }],
      0,
      undefined,
      /block_number is "1"/,
    ],
  ])(
    'rejects %s as BAD_OUTPUT naming the output, and writes nothing',
    async (_name, outputs, outputIndex, rowIndex, message) => {
      const io = seeded();
      const before = io.snapshot();
      const err = await blockWriter.execute(taskCtx(), config, outputs, io).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BlockWriteError);
      expect(err).toMatchObject({ code: 'BAD_OUTPUT', retryable: false });
      expect((err as BlockWriteError).details).toEqual(
        rowIndex === undefined ? { outputIndex } : { outputIndex, rowIndex },
      );
      expect((err as Error).message).toMatch(message);
      expect(io.snapshot()).toEqual(before);
      expect(io.commits).toBe(0);
    },
  );

  it('a failing commit leaves the prior state and its retryable error propagates unchanged', async () => {
    const conflict = new StorageError(StorageErrorCode.CONFLICT, 'serialization failure');
    const io = seeded().failNext({ op: 'commit', error: conflict });
    const before = io.snapshot();
    await expect(blockWriter.execute(taskCtx(), config, [output(5)], io)).rejects.toBe(conflict);
    expect(conflict.retryable).toBe(true);
    expect(io.snapshot()).toEqual(before);
    // The retry (a resubmitted task) then writes normally.
    await blockWriter.execute(taskCtx(), config, [output(5)], io);
    expect(io.rows('token_transfers').filter((r) => r.block_number === 1 && r.chain_id === 1)).toHaveLength(
      1,
    );
  });

  it('a row the table rejects fails the whole write after the delete, leaving the prior state', async () => {
    const io = seeded();
    const before = io.snapshot();
    const { token: _t, ...missingToken } = output(6);
    const err = await blockWriter
      .execute(taskCtx(), config, [output(5), missingToken], io)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageError);
    expect(err).toMatchObject({ code: StorageErrorCode.BAD_VALUE, retryable: false });
    expect(io.snapshot()).toEqual(before);
  });

  it('the schema is the only source of defaults: validation fills in the columns', () => {
    expect(config.columns).toEqual({ chainColumn: 'chain_id', blockColumn: 'block_number' });
    expect(
      resolved({ table: 't', chainId: 1, block: { number: 1 }, columns: { chainColumn: 'c' } }).columns,
    ).toEqual({ chainColumn: 'c', blockColumn: 'block_number' });
  });

  it('with a fence, writes while its term is the newest and writes nothing once a newer one is claimed', async () => {
    const io = seeded();
    const fenced = resolved({ ...config, fence: { jobId: 'fl-a', term: 3 } });
    io.terms.set('fl-a', 3);
    await blockWriter.execute(taskCtx(), fenced, [output(5)], io);
    expect(io.rows('token_transfers').filter((r) => r.block_number === 1 && r.chain_id === 1)).toEqual([
      transfer(1, 5, '2'),
    ]);
    const before = io.snapshot();
    for (const newest of [4, undefined]) {
      if (newest === undefined) io.terms.delete('fl-a');
      else io.terms.set('fl-a', newest);
      const refused = blockWriter.execute(taskCtx(), fenced, [output(6)], io);
      await expect(refused).rejects.toMatchObject({ code: StorageErrorCode.FENCED, retryable: false });
      expect(io.snapshot()).toEqual(before);
    }
  });

  it('refuses a fence without a job id or a positive term', () => {
    for (const fence of [
      { term: 1 },
      { jobId: '', term: 1 },
      { jobId: 'fl-a', term: 0 },
      { jobId: 'fl-a' },
    ]) {
      expect(validate(structuredClone({ ...config, fence })), JSON.stringify(fence)).toBe(false);
    }
  });

  it('accepts the README example config', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const task = JSON.parse(/```json\n([\s\S]*?)```/.exec(readme)?.[1] ?? 'null') as {
      resultHandler: { type: string; config: unknown };
    };
    expect(task.resultHandler.type).toBe('BlockWriteResultHandler');
    expect(validate(task.resultHandler.config)).toBe(true);
  });

  it.each([
    ['block missing', { table: 't', chainId: 1 }, 'required'],
    [
      'a block hash instead of a number',
      { table: 't', chainId: 1, block: { hash: '0x1' } },
      'additionalProperties',
    ],
    ['a negative block', { table: 't', chainId: 1, block: { number: -1 } }, 'minimum'],
    [
      'an unknown column role',
      { table: 't', chainId: 1, block: { number: 1 }, columns: { hash: 'h' } },
      'additionalProperties',
    ],
    ['an unknown field', { table: 't', chainId: 1, block: { number: 1 }, mode: 'x' }, 'additionalProperties'],
  ])('rejects %s (rule %s)', (_name, cfg, rule) => {
    expect(validate(cfg)).toBe(false);
    expect(validate.errors?.map((e) => e.keyword)).toContain(rule);
  });
});
