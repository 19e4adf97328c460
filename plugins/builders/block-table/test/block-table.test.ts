import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { StorageError, StorageErrorCode } from '../../../../src/services/storage/errors.js';
import { blockRow, eventRow } from '../../../../test/support/chain-fixture.js';
import { MemoryTaskIo, withArgValues } from '../../../../test/support/memory-task-io.js';
import blockTableBuilder, {
  BlockTableError,
  BlockTableErrorCode,
  type BlockTableCallConfig,
  type BlockTableCallConfigInput,
} from '../src/index.js';
import { itDeclaresItself, packageUnderTest } from '../../../../test/support/plugin-package.js';

const pkg = await packageUnderTest(import.meta.url);
const { validate, taskCtx } = pkg;

// Chain 1: blocks 1 and 2 canonical, a non-canonical sibling 2b; chain 2 has its own block 1.
const b1 = blockRow(1);
const b2 = blockRow(2);
const b2b = blockRow(2, { fork: 'b' });
const c2b1 = blockRow(1, { chainId: 2 });

function chainIo(): MemoryTaskIo {
  return MemoryTaskIo.fromConfigFile()
    .seed('blocks', [b1, b2, b2b, c2b1])
    .seed('events', [
      eventRow(b1, 0),
      eventRow(b2, 0),
      eventRow(b2, 1, { selector: '0x0000000000000000000000000000000000000000000000000000000000000001' }),
      eventRow(b2, 2),
      eventRow(b2b, 0),
      eventRow(b2b, 7),
      eventRow(c2b1, 0),
    ]);
}

/** A task's config as the kernel hands it to the builder: validated, the schema's defaults filled in. */
function resolved(config: BlockTableCallConfigInput): BlockTableCallConfig {
  const copy = structuredClone(config);
  if (!validate(copy)) throw new Error(`invalid test config: ${JSON.stringify(validate.errors)}`);
  return copy as BlockTableCallConfig;
}

async function build(
  config: Omit<BlockTableCallConfigInput, 'function' | 'chainId'> & { chainId?: number },
  io = chainIo(),
) {
  const full = resolved({ function: 'f', chainId: 1, ...config });
  return withArgValues((await blockTableBuilder.build(taskCtx(), full, io)).calls);
}

const idxs = (calls: readonly { args: readonly unknown[] }[]) =>
  calls.map((c) => [(c.args[0] as { block_hash: string }).block_hash, (c.args[0] as { idx: number }).idx]);

describe('BlockTableCallConfig builder', () => {
  itDeclaresItself(pkg, { kind: 'builder', type: 'BlockTableCallConfig', errorCodes: BlockTableErrorCode });

  it('a number selects the canonical block: its rows only, with the block row attached to each call', async () => {
    const io = chainIo();
    const calls = await build({ table: 'events', block: { number: 2 } }, io);
    expect(idxs(calls)).toEqual([
      [b2.hash, 0],
      [b2.hash, 1],
      [b2.hash, 2],
    ]);
    expect(calls[0]).toEqual({ function: 'f', args: [eventRow(b2, 0)], block: b2 });
    // The table was scanned by the resolved hash (never by height alone: a sibling block shares it),
    // narrowed to that height so storage can use its (chain, block number, ...) key.
    expect(io.scans[1]).toEqual({
      table: 'events',
      query: { block: b2.hash, blockRange: { from: 2, to: 2 }, where: { chain_id: 1 } },
    });
  });

  it('a hash selects that exact block, even a non-canonical sibling', async () => {
    const calls = await build({ table: 'events', block: { hash: b2b.hash as string } });
    expect(idxs(calls)).toEqual([
      [b2b.hash, 0],
      [b2b.hash, 7],
    ]);
    expect(calls.every((c) => c.block === calls[0]?.block)).toBe(true);
    expect(calls[0]?.block).toEqual(b2b);
  });

  it('restricts block and rows to chainId, whatever `where` says', async () => {
    const calls = await build({ table: 'events', block: { number: 1 }, where: { chain_id: 2 } });
    expect(calls.map((c) => (c.args[0] as { chain_id: number }).chain_id)).toEqual([1]);
    const chain2 = await build({ table: 'events', block: { number: 1 }, chainId: 2 });
    expect(chain2.map((c) => c.block)).toEqual([c2b1]);
  });

  it('applies filters (array = any of), projection, limit and extraArgs', async () => {
    const base = { table: 'events', block: { number: 2 } } as const;
    expect(idxs(await build({ ...base, where: { idx: [0, 2] } }))).toEqual([
      [b2.hash, 0],
      [b2.hash, 2],
    ]);
    const projected = await build({
      ...base,
      columns: ['idx', 'selector'],
      limit: 1,
      extraArgs: ['x', { y: 1 }],
    });
    expect(projected).toEqual([
      { function: 'f', args: [{ idx: 0, selector: eventRow(b2, 0).selector }, 'x', { y: 1 }], block: b2 },
    ]);
    expect(await build({ ...base, where: { idx: 99 } })).toEqual([]);
  });

  it('byNumber scans by height, for tables without a hash column', async () => {
    const row = (n: number, logIdx: number) => ({
      chain_id: 1,
      block_number: n,
      log_idx: logIdx,
      token: '0xt',
      from_address: '0xa',
      to_address: '0xb',
      amount: '1',
    });
    const io = chainIo().seed('token_transfers', [row(1, 0), row(2, 0), row(2, 1)]);
    const calls = await build({ table: 'token_transfers', block: { number: 2 }, byNumber: true }, io);
    expect(calls.map((c) => c.args[0])).toEqual([row(2, 0), row(2, 1)]);
    expect(io.scans[1]?.query.block).toBe(2);
    // Without byNumber the scan asks for a hash column token_transfers does not have.
    await expect(build({ table: 'token_transfers', block: { number: 2 } }, io)).rejects.toMatchObject({
      code: StorageErrorCode.BAD_VALUE,
    });
  });

  it.each([
    ['no block at that height', { number: 9 }, 1],
    ['only a non-canonical block at that height', { number: 3 }, 1],
    ['an unknown hash', { hash: '0xdead' }, 1],
    ['a block of another chain', { hash: c2b1.hash as string }, 1],
  ])('fails with BLOCK_NOT_FOUND, not retryable, for %s', async (_name, block, chainId) => {
    const io = chainIo().seed('blocks', [blockRow(3, { fork: 'b' })]);
    const err = await build({ table: 'events', block, chainId }, io).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BlockTableError);
    expect(err).toMatchObject({ code: 'BLOCK_NOT_FOUND', retryable: false, details: { chainId, block } });
    expect(io.scans.map((s) => s.table)).toEqual(['blocks']);
  });

  it('fails with AMBIGUOUS_BLOCK when two blocks at one height are canonical', async () => {
    const io = chainIo().seed('blocks', [blockRow(4), blockRow(4, { fork: 'b', canonical: true })]);
    await expect(build({ table: 'events', block: { number: 4 } }, io)).rejects.toMatchObject({
      code: 'AMBIGUOUS_BLOCK',
      retryable: false,
    });
  });

  it('passes IO errors through unchanged (their retryable flag decides)', async () => {
    const conflict = new StorageError(StorageErrorCode.CONFLICT, 'busy');
    const io = chainIo().failNext({ op: 'scan', table: 'events', error: conflict, afterRows: 1 });
    await expect(build({ table: 'events', block: { number: 2 } }, io)).rejects.toBe(conflict);
    expect(conflict.retryable).toBe(true);
  });

  it('stops with the abort reason once the task signal fires', async () => {
    const controller = new AbortController();
    controller.abort(new Error('task timed out'));
    const config = resolved({ function: 'f', chainId: 1, table: 'events', block: { number: 2 } });
    await expect(blockTableBuilder.build(taskCtx(controller.signal), config, chainIo())).rejects.toThrow(
      'task timed out',
    );
  });

  it('accepts the README example config', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const task = JSON.parse(/```json\n([\s\S]*?)```/.exec(readme)?.[1] ?? 'null') as {
      functionCallConfig: { type: string; config: unknown };
    };
    expect(task.functionCallConfig.type).toBe('BlockTableCallConfig');
    expect(validate(task.functionCallConfig.config)).toBe(true);
  });

  it.each([
    ['block missing', { function: 'f', table: 'events', chainId: 1 }, 'required'],
    [
      'both number and hash',
      { function: 'f', table: 'events', chainId: 1, block: { number: 1, hash: '0x1' } },
      'oneOf',
    ],
    ['a negative height', { function: 'f', table: 'events', chainId: 1, block: { number: -1 } }, 'minimum'],
    [
      'a hash that is not hex',
      { function: 'f', table: 'events', chainId: 1, block: { hash: 'abc' } },
      'pattern',
    ],
    ['limit 0', { function: 'f', table: 'events', chainId: 1, block: { number: 1 }, limit: 0 }, 'minimum'],
    [
      'extraArgs not an array',
      { function: 'f', table: 'events', chainId: 1, block: { number: 1 }, extraArgs: 1 },
      'type',
    ],
    [
      'an unknown field',
      { function: 'f', table: 'events', chainId: 1, block: { number: 1 }, x: 1 },
      'additionalProperties',
    ],
  ])('rejects %s (rule %s)', (_name, config, rule) => {
    expect(validate(config)).toBe(false);
    expect(validate.errors?.map((e) => e.keyword)).toContain(rule);
  });
});
