// Task fusion of BlockWriteResultHandler (docs/task-fusion.md): executeMany writes every accepted task's
// block in one transaction and leaves the table as the same tasks' executes one after the other would;
// a task whose outputs are refused gets its own BAD_OUTPUT and writes nothing; a failing transaction
// rejects (the Worker then writes each task alone) and commits nothing.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Row } from '../../../../src/plugin.js';
import { StorageError, StorageErrorCode } from '../../../../src/services/storage/errors.js';
import { MemoryTaskIo } from '../../../../test/support/memory-task-io.js';
import blockWriter, { BlockWriteErrorCode, type BlockWriteResultHandlerConfig } from '../src/index.js';
import { packageUnderTest } from '../../../../test/support/plugin-package.js';

const pkg = await packageUnderTest(import.meta.url);
const { validate, taskCtx } = pkg;
const fusion = blockWriter.fusion!;

const transfer = (blockNumber: number, logIdx: number, amount = '1', chainId = 1): Row => ({
  chain_id: chainId,
  block_number: blockNumber,
  log_idx: logIdx,
  token: '0xtoken',
  from_address: '0xfrom',
  to_address: '0xto',
  amount,
});
const output = (logIdx: number, amount: string): Row => {
  const { chain_id: _c, block_number: _b, ...rest } = transfer(0, logIdx, amount);
  return rest;
};

function config(number: number): BlockWriteResultHandlerConfig {
  const copy = { table: 'token_transfers', chainId: 1, block: { number } };
  if (!validate(copy)) throw new Error(JSON.stringify(validate.errors));
  return copy as BlockWriteResultHandlerConfig;
}

function seeded(): MemoryTaskIo {
  const rows: Row[] = [];
  for (let b = 0; b < 6; b++) for (let i = 0; i < 3; i++) rows.push(transfer(b, i, 'old'));
  rows.push(transfer(1, 0, 'other chain', 2));
  return MemoryTaskIo.fromConfigFile().seed('token_transfers', rows);
}

const sorted = (rows: readonly Row[]) =>
  [...rows].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

describe('BlockWriteResultHandler fusion', () => {
  it('one transaction leaves the table the tasks would leave one after the other', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            block: fc.nat(7),
            rows: fc.array(fc.nat(4), { maxLength: 4 }),
            bad: fc.boolean(),
          }),
          { minLength: 1, maxLength: 8 },
        ),
        async (tasks) => {
          const writes = tasks.map((t, k) => ({
            taskCtx: taskCtx(),
            config: config(t.block),
            // A bad task's outputs name another block: BAD_OUTPUT, alone.
            outputs: t.bad
              ? [{ ...output(0, 'bad'), block_number: t.block + 100 }]
              : t.rows.map((i) => output(i, `t${k}`)),
          }));
          const fusedIo = seeded();
          const results = await fusion.executeMany(writes, fusedIo);
          const aloneIo = seeded();
          const want: unknown[] = [];
          for (const w of writes) {
            try {
              want.push(await blockWriter.execute(w.taskCtx, w.config, w.outputs, aloneIo));
            } catch (err) {
              want.push((err as { code?: string }).code);
            }
          }
          expect(results.map((r) => (r instanceof Error ? (r as { code?: string }).code : r))).toEqual(want);
          expect(sorted(fusedIo.rows('token_transfers'))).toEqual(sorted(aloneIo.rows('token_transfers')));
          expect(fusedIo.commits).toBe(tasks.every((t) => t.bad) ? 0 : 1);
          for (const [i, t] of tasks.entries())
            if (t.bad) expect(results[i]).toMatchObject({ code: BlockWriteErrorCode.BAD_OUTPUT });
        },
      ),
      { numRuns: 150 },
    );
  });

  it('a transaction that fails rejects and commits nothing', async () => {
    const io = seeded();
    const before = io.rows('token_transfers');
    io.failNext({
      op: 'commit',
      error: new StorageError(StorageErrorCode.QUERY_FAILED, 'disk full'),
    });
    const writes = [1, 2].map((n) => ({
      taskCtx: taskCtx(),
      config: config(n),
      outputs: [output(9, 'new')],
    }));
    await expect(fusion.executeMany(writes, io)).rejects.toThrow(/disk full/);
    expect(io.rows('token_transfers')).toEqual(before);
  });

  it('keys: one table, chain, columns and fence; the block number does not count', () => {
    expect(fusion.key(config(1))).toBe(fusion.key(config(2)));
    const fenced = { ...config(1), fence: { jobId: 'j', term: 1 } };
    expect(fusion.key(fenced)).not.toBe(fusion.key(config(1)));
    expect(fusion.key({ ...config(1), chainId: 2 })).not.toBe(fusion.key(config(1)));
  });
});
