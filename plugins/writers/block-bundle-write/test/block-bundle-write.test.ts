import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Row } from '../../../../src/plugin.js';
import { StorageError, StorageErrorCode } from '../../../../src/services/storage/errors.js';
import { MemoryTaskIo } from '../../../../test/support/memory-task-io.js';
import bundleWriter, {
  BlockBundleWriteError,
  BlockBundleWriteErrorCode,
  bundleRange,
  type BlockBundleWriteResultHandlerConfig,
} from '../src/index.js';
import { itDeclaresItself, packageUnderTest } from '../../../../test/support/plugin-package.js';

const pkg = await packageUnderTest(import.meta.url);
const { validate, taskCtx } = pkg;

const transfer = (blockNumber: number, logIdx: number, amount = '1', chainId = 1): Row => ({
  chain_id: chainId,
  block_number: blockNumber,
  log_idx: logIdx,
  token: '0xtoken',
  from_address: '0xfrom',
  to_address: '0xto',
  amount,
});
/** As a function returns it: without the chain column. */
const output = (blockNumber: number, logIdx: number, amount = '2'): Row => {
  const { chain_id: _c, ...rest } = transfer(blockNumber, logIdx, amount);
  return rest;
};

// Bundles of 10 blocks: bundle 2 is blocks 11..20.
/** `input` as the kernel hands it to the writer: validated, the schema's defaults filled in. */
function resolved(input: object): BlockBundleWriteResultHandlerConfig {
  const copy = structuredClone(input);
  if (!validate(copy)) throw new Error(JSON.stringify(validate.errors));
  return copy as BlockBundleWriteResultHandlerConfig;
}

const config = resolved({ table: 'token_transfers', chainId: 1, bundle: 2, bundleSize: 10 });

function seeded(): MemoryTaskIo {
  return MemoryTaskIo.fromConfigFile().seed('token_transfers', [
    transfer(10, 0),
    transfer(11, 0),
    transfer(15, 3),
    transfer(20, 1),
    transfer(21, 0),
    transfer(15, 0, '1', 2),
  ]);
}

describe('BlockBundleWriteResultHandler writer', () => {
  itDeclaresItself(pkg, {
    kind: 'writer',
    type: 'BlockBundleWriteResultHandler',
    errorCodes: BlockBundleWriteErrorCode,
  });

  it.each([
    [0, 1000, { from: 0, to: 0 }],
    [1, 1000, { from: 1, to: 1000 }],
    [2, 1000, { from: 1001, to: 2000 }],
    [2, 10, { from: 11, to: 20 }],
  ])('bundle %i of size %i is blocks %o', (bundle, size, range) => {
    expect(bundleRange(bundle, size)).toEqual(range);
  });

  it('replaces the rows of the bundle: old rows gone, neighbours and other chains untouched', async () => {
    const io = seeded();
    const results = await bundleWriter.execute(
      taskCtx(),
      config,
      [output(11, 5), null, [output(20, 6), output(13, 0)]],
      io,
    );
    expect(results).toEqual([
      {
        pluginName: 'BlockBundleWriteResultHandler',
        success: true,
        result: { table: 'token_transfers', chainId: 1, bundle: 2, range: { from: 11, to: 20 }, rows: 3 },
      },
    ]);
    expect(io.rows('token_transfers')).toEqual([
      transfer(10, 0),
      transfer(11, 5, '2'),
      transfer(13, 0, '2'),
      transfer(20, 6, '2'),
      transfer(21, 0),
      transfer(15, 0, '1', 2),
    ]);
  });

  it('writes genesis rows for bundle 0', async () => {
    const io = seeded();
    await bundleWriter.execute(
      taskCtx(),
      resolved({ table: 'token_transfers', chainId: 1, bundle: 0 }),
      [output(0, 0)],
      io,
    );
    expect(io.rows('token_transfers')[0]).toEqual(transfer(0, 0, '2'));
  });

  it('is idempotent: replaying the same outputs leaves the same state', async () => {
    const io = seeded();
    const outputs = [[output(12, 0), output(19, 1)]];
    await bundleWriter.execute(taskCtx(), config, outputs, io);
    const once = io.snapshot();
    await bundleWriter.execute(taskCtx(), config, outputs, io);
    expect(io.snapshot()).toEqual(once);
  });

  it.each([
    ['a row without its block number', [{ log_idx: 0 }], 0, undefined, /block_number is missing/],
    ['a row before the bundle', [output(11, 0), output(10, 0)], 1, undefined, /number 10, outside .* 11…20/],
    ['a row after the bundle', [[output(21, 0)]], 0, 0, /number 21, outside/],
    ['a row of another chain', [transfer(12, 0, '1', 2)], 0, undefined, /chain_id is number 2/],
    [
      'a block number that is not an integer',
      [{ ...output(12, 0), block_number: 12.5 }],
      0,
      undefined,
      /12\.5/,
    ],
    ['a string output', ['row'], 0, undefined, /expected a row object/],
  ])(
    'rejects %s as BAD_OUTPUT naming the output, and writes nothing',
    async (_name, outputs, outputIndex, rowIndex, message) => {
      const io = seeded();
      const before = io.snapshot();
      const err = await bundleWriter.execute(taskCtx(), config, outputs, io).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BlockBundleWriteError);
      expect(err).toMatchObject({ code: 'BAD_OUTPUT', retryable: false });
      expect((err as BlockBundleWriteError).details).toEqual(
        rowIndex === undefined ? { outputIndex } : { outputIndex, rowIndex },
      );
      expect((err as Error).message).toMatch(message);
      expect(io.snapshot()).toEqual(before);
      expect(io.commits).toBe(0);
    },
  );

  it('a failing commit leaves the prior state and its retryable error propagates unchanged', async () => {
    const reset = new StorageError(StorageErrorCode.CONNECTION, 'connection reset');
    const io = seeded().failNext({ op: 'commit', error: reset });
    const before = io.snapshot();
    await expect(bundleWriter.execute(taskCtx(), config, [output(12, 0)], io)).rejects.toBe(reset);
    expect(reset.retryable).toBe(true);
    expect(io.snapshot()).toEqual(before);
  });

  it('the schema is the only source of defaults: validation fills in bundleSize and the columns', () => {
    expect(resolved({ table: 't', chainId: 1, bundle: 1 })).toMatchObject({
      bundleSize: 1000,
      columns: { chainColumn: 'chain_id', blockColumn: 'block_number' },
    });
    expect(config).toMatchObject({ bundleSize: 10, columns: { chainColumn: 'chain_id' } });
  });

  it('accepts the README example config', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const task = JSON.parse(/```json\n([\s\S]*?)```/.exec(readme)?.[1] ?? 'null') as {
      resultHandler: { type: string; config: unknown };
    };
    expect(task.resultHandler.type).toBe('BlockBundleWriteResultHandler');
    expect(validate(task.resultHandler.config)).toBe(true);
  });

  it.each([
    ['bundle missing', { table: 't', chainId: 1 }, 'required'],
    ['a negative bundle', { table: 't', chainId: 1, bundle: -1 }, 'minimum'],
    ['bundleSize 0', { table: 't', chainId: 1, bundle: 1, bundleSize: 0 }, 'minimum'],
    ['an unknown field', { table: 't', chainId: 1, bundle: 1, block: { number: 1 } }, 'additionalProperties'],
  ])('rejects %s (rule %s)', (_name, cfg, rule) => {
    expect(validate(cfg)).toBe(false);
    expect(validate.errors?.map((e) => e.keyword)).toContain(rule);
  });
});
