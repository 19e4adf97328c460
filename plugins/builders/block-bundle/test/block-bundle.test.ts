import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CallSpec, Row } from '../../../../src/plugin.js';
import { StorageError, StorageErrorCode } from '../../../../src/services/storage/errors.js';
import { blockRow, eventRow } from '../../../../test/support/chain-fixture.js';
import { MemoryTaskIo, withArgValues } from '../../../../test/support/memory-task-io.js';
import blockBundleBuilder, {
  BlockBundleError,
  BlockBundleErrorCode,
  bundleOf,
  bundleRange,
  type BlockBundleCallConfig,
  type BlockBundleCallConfigInput,
} from '../src/index.js';
import { itDeclaresItself, packageUnderTest } from '../../../../test/support/plugin-package.js';

const pkg = await packageUnderTest(import.meta.url);
const { validate, taskCtx } = pkg;

// Chain 1, blocks 0..7 canonical, a non-canonical sibling 2b; two events per block; chain 2 block 1.
const blocks = [0, 1, 2, 3, 4, 5, 6, 7].map((n) => blockRow(n));
const sibling = blockRow(2, { fork: 'b' });
const other = blockRow(1, { chainId: 2 });

function chainIo(): MemoryTaskIo {
  const all = [...blocks, sibling, other];
  return MemoryTaskIo.fromConfigFile()
    .seed('blocks', all)
    .seed(
      'events',
      all.flatMap((b) => [eventRow(b, 0), eventRow(b, 1)]),
    );
}

type Config = Omit<BlockBundleCallConfigInput, 'function' | 'chainId' | 'table'> &
  Partial<BlockBundleCallConfigInput>;
/** A task's config as the kernel hands it to the builder: validated, the schema's defaults filled in. */
const full = (config: Config): BlockBundleCallConfig => {
  const copy = structuredClone({ function: 'f', chainId: 1, table: 'events', ...config });
  if (!validate(copy)) throw new Error(`invalid test config: ${JSON.stringify(validate.errors)}`);
  return copy as BlockBundleCallConfig;
};

type ValueCall = ReturnType<typeof withArgValues<CallSpec>>[number];

async function build(config: Config, io = chainIo()): Promise<readonly ValueCall[]> {
  return withArgValues((await blockBundleBuilder.build(taskCtx(), full(config), io)).calls);
}

async function collect(stream: AsyncIterable<CallSpec>): Promise<ValueCall[]> {
  const out: CallSpec[] = [];
  for await (const call of stream) out.push(call);
  return withArgValues(out);
}

const rowsOf = (calls: readonly ValueCall[]) =>
  calls.map((c) => [(c.args[0] as Row).block_number, (c.args[0] as Row).block_hash, (c.args[0] as Row).idx]);

describe('bundle arithmetic', () => {
  it.each([
    [0, 1000, { from: 0, to: 0 }],
    [1, 1000, { from: 1, to: 1000 }],
    [2, 1000, { from: 1001, to: 2000 }],
    [0, 3, { from: 0, to: 0 }],
    [1, 3, { from: 1, to: 3 }],
    [3, 10, { from: 21, to: 30 }],
    [5, 1, { from: 5, to: 5 }],
  ])('bundle %i of size %i covers %o', (bundle, size, range) => {
    expect(bundleRange(bundle, size)).toEqual(range);
  });

  it('defaults to 1000 blocks per bundle, matching floor((n − 1) / 1000) + 1', () => {
    expect(bundleRange(7)).toEqual({ from: 6001, to: 7000 });
    expect([0, 1, 1000, 1001, 2000, 2001].map((n) => bundleOf(n))).toEqual([0, 1, 1, 2, 2, 3]);
  });

  it('every block lies in the range of its own bundle, and bundles tile the chain', () => {
    fc.assert(
      fc.property(fc.nat(10_000_000), fc.integer({ min: 1, max: 5000 }), (n, size) => {
        const b = bundleOf(n, size);
        const { from, to } = bundleRange(b, size);
        expect(n >= from && n <= to).toBe(true);
        if (b > 0) expect(bundleRange(b - 1, size).to).toBe(from - 1);
      }),
    );
  });

  it.each([
    [-1, 1000],
    [1.5, 1000],
    [1, 0],
  ])('rejects bundle %d with size %d', (bundle, size) => {
    expect(() => bundleRange(bundle, size)).toThrow(RangeError);
  });
});

describe('BlockBundleCallConfig builder', () => {
  itDeclaresItself(pkg, { kind: 'builder', type: 'BlockBundleCallConfig', errorCodes: BlockBundleErrorCode });

  it('builds one call per row of the canonical blocks of the bundle, never the sibling rows', async () => {
    const io = chainIo();
    const calls = await build({ bundle: 1, bundleSize: 3 }, io);
    expect(rowsOf(calls)).toEqual([1, 1, 2, 2, 3, 3].map((n, i) => [n, blockRow(n).hash, i % 2]));
    expect(calls[2]).toEqual({
      function: 'f',
      args: [eventRow(blocks[2] as Row, 0)],
      block: { chain_id: 1, number: 2, hash: blockRow(2).hash },
    });
    expect(io.scans).toEqual([
      {
        table: 'blocks',
        query: {
          blockRange: { from: 1, to: 3 },
          where: { chain_id: 1, canonical: true },
          columns: ['number', 'hash'],
        },
      },
      { table: 'events', query: { blockRange: { from: 1, to: 3 }, where: { chain_id: 1 } } },
    ]);
  });

  it.each([
    [0, 3, [0]],
    [2, 3, [4, 5, 6]],
    [3, 3, [7]],
    [1, 1000, [1, 2, 3, 4, 5, 6, 7]],
    [2, 1000, []],
  ])('bundle %i of size %i holds the rows of blocks %o', async (bundle, bundleSize, numbers) => {
    const calls = await build({ bundle, bundleSize });
    expect([...new Set(calls.map((c) => (c.block as { number: number }).number))]).toEqual(numbers);
  });

  it('skips the table scan when the range has no canonical block', async () => {
    const io = chainIo();
    expect(await build({ bundle: 9, bundleSize: 3 }, io)).toEqual([]);
    expect(io.scans.map((s) => s.table)).toEqual(['blocks']);
  });

  it('applies filters, projection (plus the block columns), extraArgs and the chain', async () => {
    const calls = await build({
      bundle: 1,
      bundleSize: 2,
      where: { idx: 1, chain_id: 2 },
      columns: ['idx'],
      extraArgs: [42],
    });
    expect(calls.map((c) => c.args)).toEqual([
      [{ idx: 1, block_number: 1, block_hash: blockRow(1).hash }, 42],
      [{ idx: 1, block_number: 2, block_hash: blockRow(2).hash }, 42],
    ]);
  });

  it('keeps every row of a table without a hash column (hashColumn null)', async () => {
    const transfer = (n: number) => ({
      chain_id: 1,
      block_number: n,
      log_idx: 0,
      token: '0xt',
      from_address: '0xa',
      to_address: '0xb',
      amount: '1',
    });
    const io = chainIo().seed('token_transfers', [transfer(4), transfer(9)]);
    const calls = await build({ table: 'token_transfers', bundle: 1, bundleSize: 10, hashColumn: null }, io);
    expect(calls.map((c) => c.block)).toEqual([
      { chain_id: 1, number: 4, hash: blockRow(4).hash },
      { chain_id: 1, number: 9, hash: null },
    ]);
  });

  it('stream() yields the same calls as build()', async () => {
    for (const config of [
      { bundle: 1, bundleSize: 3 },
      { bundle: 0, bundleSize: 3, extraArgs: ['x'] },
      { bundle: 1, bundleSize: 1000, where: { idx: [0] }, columns: ['selector'] },
    ]) {
      const built = await build(config);
      const streamed = await collect(blockBundleBuilder.stream!(taskCtx(), full(config), chainIo()));
      expect(streamed).toEqual(built);
      expect(built.length).toBeGreaterThan(0);
    }
  });

  it('streams lazily: a consumer that takes one call has read one table row', async () => {
    const io = chainIo();
    const iterator = blockBundleBuilder.stream!(taskCtx(), full({ bundle: 1, bundleSize: 1000 }), io)[
      Symbol.asyncIterator
    ]();
    await iterator.next();
    expect(io.rowsRead).toBe(7 /* canonical blocks */ + 1);
    await iterator.return?.();
  });

  it('stream() stops when the task signal aborts', async () => {
    const controller = new AbortController();
    const io = chainIo();
    const seen: CallSpec[] = [];
    for await (const call of blockBundleBuilder.stream!(
      taskCtx(controller.signal),
      full({ bundle: 1 }),
      io,
    )) {
      seen.push(call);
      if (seen.length === 3) controller.abort();
    }
    expect(seen).toHaveLength(3);
    expect(io.rowsRead).toBe(7 + 3);
  });

  it('build() fails on an aborted signal instead of returning part of the list', async () => {
    const controller = new AbortController();
    controller.abort(new Error('task timed out'));
    await expect(
      blockBundleBuilder.build(taskCtx(controller.signal), full({ bundle: 1 }), chainIo()),
    ).rejects.toThrow('task timed out');
  });

  it('build() refuses a streaming config and says to use stream(); streams() reports the mode', async () => {
    const config = full({ bundle: 1, stream: { enabled: true } });
    const err = await Promise.resolve()
      .then(() => blockBundleBuilder.build(taskCtx(), config, chainIo()))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BlockBundleError);
    expect(err).toMatchObject({ code: 'STREAM_ENABLED', retryable: false });
    expect((err as Error).message).toContain('stream()');
    expect(blockBundleBuilder.streams?.(config)).toBe(true);
    expect(blockBundleBuilder.streams?.(full({ bundle: 1, stream: { enabled: false } }))).toBe(false);
    expect(blockBundleBuilder.streams?.(full({ bundle: 1 }))).toBe(false);
  });

  it('fails with AMBIGUOUS_BLOCK when a height has two canonical blocks', async () => {
    const io = chainIo().seed('blocks', [blockRow(3, { fork: 'b', canonical: true })]);
    await expect(build({ bundle: 1, bundleSize: 3 }, io)).rejects.toMatchObject({
      code: 'AMBIGUOUS_BLOCK',
      retryable: false,
      details: { blockNumber: 3 },
    });
  });

  it('passes IO errors through unchanged, from build and from stream', async () => {
    const reset = new StorageError(StorageErrorCode.CONNECTION, 'reset');
    const io = () => chainIo().failNext({ op: 'scan', table: 'events', error: reset, afterRows: 2 });
    await expect(build({ bundle: 1 }, io())).rejects.toBe(reset);
    await expect(collect(blockBundleBuilder.stream!(taskCtx(), full({ bundle: 1 }), io()))).rejects.toBe(
      reset,
    );
  });

  it('accepts the README example config', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const task = JSON.parse(/```json\n([\s\S]*?)```/.exec(readme)?.[1] ?? 'null') as {
      functionCallConfig: { type: string; config: unknown };
    };
    expect(task.functionCallConfig.type).toBe('BlockBundleCallConfig');
    expect(validate(task.functionCallConfig.config)).toBe(true);
  });

  const base = { function: 'f', table: 'events', chainId: 1 };
  it.each([
    ['bundle missing', base, 'required'],
    ['a negative bundle', { ...base, bundle: -1 }, 'minimum'],
    ['bundleSize 0', { ...base, bundle: 1, bundleSize: 0 }, 'minimum'],
    ['stream without enabled', { ...base, bundle: 1, stream: {} }, 'required'],
    ['hashColumn empty', { ...base, bundle: 1, hashColumn: '' }, 'oneOf'],
    ['an unknown field', { ...base, bundle: 1, size: 3 }, 'additionalProperties'],
  ])('rejects %s (rule %s)', (_name, config, rule) => {
    expect(validate(config)).toBe(false);
    expect(validate.errors?.map((e) => e.keyword)).toContain(rule);
  });

  it('accepts hashColumn null', () => {
    expect(validate({ ...base, bundle: 1, hashColumn: null })).toBe(true);
  });
});
