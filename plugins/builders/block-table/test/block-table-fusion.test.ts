// Task fusion of BlockTableCallConfig (docs/task-fusion.md): buildMany over any group of tasks gives each
// task exactly what build gives it alone — the same calls (function, arguments, block) in the same order,
// or the same error — whatever the chain holds (missing heights, forks, two canonical rows at a height,
// rows another selector filters out) and whatever the group (duplicates, gaps, limit, byNumber).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { blockRow, eventRow } from '../../../../test/support/chain-fixture.js';
import { MemoryTaskIo, withArgValues } from '../../../../test/support/memory-task-io.js';
import type { CallList, Row } from '../../../../src/kernel/plugin-types.js';
import blockTableBuilder, {
  type BlockTableCallConfig,
  type BlockTableCallConfigInput,
} from '../src/index.js';
import { packageUnderTest } from '../../../../test/support/plugin-package.js';

const pkg = await packageUnderTest(import.meta.url);
const { validate, taskCtx } = pkg;
const fusion = blockTableBuilder.fusion!;
const OTHER = '0x0000000000000000000000000000000000000000000000000000000000000001';

function resolved(config: BlockTableCallConfigInput): BlockTableCallConfig {
  const copy = structuredClone(config);
  if (!validate(copy)) throw new Error(`invalid test config: ${JSON.stringify(validate.errors)}`);
  return copy as BlockTableCallConfig;
}

/** What a block of the generated chain holds. */
interface Height {
  readonly canonical: 0 | 1 | 2; // canonical rows in the blocks table at this height
  readonly fork: boolean; // a non-canonical sibling too
  readonly events: number;
  readonly others: number; // events of another selector
}

function chain(heights: readonly Height[]): MemoryTaskIo {
  const blocks: Row[] = [];
  const events: Row[] = [];
  heights.forEach((h, n) => {
    const rows: Row[] = [];
    if (h.canonical >= 1) rows.push(blockRow(n));
    if (h.canonical === 2) rows.push(blockRow(n, { fork: 'c', canonical: true }));
    if (h.fork) rows.push(blockRow(n, { fork: 'b' }));
    for (const b of rows) {
      blocks.push(b);
      for (let i = 0; i < h.events; i++) events.push(eventRow(b, i));
      for (let i = 0; i < h.others; i++) events.push(eventRow(b, 100 + i, { selector: OTHER }));
    }
  });
  return MemoryTaskIo.fromConfigFile().seed('blocks', blocks).seed('events', events);
}

const outcome = (r: CallList | Error) =>
  r instanceof Error ? { error: r.message, code: (r as { code?: string }).code } : withArgValues(r.calls);

async function alone(config: BlockTableCallConfig, io: MemoryTaskIo) {
  try {
    return outcome(await blockTableBuilder.build(taskCtx(), config, io));
  } catch (err) {
    return outcome(err as Error);
  }
}

const heightArb = fc.record({
  canonical: fc.constantFrom<0 | 1 | 2>(0, 1, 1, 1, 2),
  fork: fc.boolean(),
  events: fc.integer({ min: 0, max: 4 }),
  others: fc.integer({ min: 0, max: 2 }),
});

describe('BlockTableCallConfig fusion', () => {
  it('buildMany gives every task what build gives it alone', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(heightArb, { minLength: 1, maxLength: 12 }),
        fc.array(fc.nat(15), { minLength: 2, maxLength: 10 }),
        fc.record({
          byNumber: fc.boolean(),
          limit: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
          where: fc.boolean(),
          extra: fc.boolean(),
        }),
        async (heights, picks, opts) => {
          const io = chain(heights);
          const configs = picks.map((n) =>
            resolved({
              function: 'f',
              chainId: 1,
              table: 'events',
              block: { number: n },
              ...(opts.byNumber ? { byNumber: true } : {}),
              ...(opts.limit === undefined ? {} : { limit: opts.limit }),
              ...(opts.where ? { where: { selector: eventRow(blockRow(0), 0).selector } } : {}),
              ...(opts.extra ? { extraArgs: [1, 'x'] } : {}),
            }),
          );
          const keys = new Set(configs.map((c) => fusion.key(c)));
          expect(keys.size).toBe(1);
          const fused = await fusion.buildMany(
            configs.map((config) => ({ taskCtx: taskCtx(), config })),
            io,
          );
          expect(fused).not.toBeNull();
          const want = [];
          for (const c of configs) want.push(await alone(c, io));
          expect((fused ?? []).map(outcome)).toEqual(want);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('one scan of the blocks table and one of the rows for the whole group', async () => {
    const io = chain([1, 2, 3, 4].map(() => ({ canonical: 1, fork: false, events: 2, others: 0 }) as Height));
    const configs = [1, 3, 2].map((n) =>
      resolved({ function: 'f', chainId: 1, table: 'events', block: { number: n } }),
    );
    const before = io.scans.length;
    await fusion.buildMany(
      configs.map((config) => ({ taskCtx: taskCtx(), config })),
      io,
    );
    expect(io.scans.slice(before).map((s) => s.table)).toEqual(['blocks', 'events']);
  });

  it('a hash selector is never fused (key undefined)', () => {
    const config = resolved({
      function: 'f',
      chainId: 1,
      table: 'events',
      block: { hash: blockRow(1).hash as string },
    });
    expect(fusion.key(config)).toBeUndefined();
  });

  it('keys differ when anything but the block number differs', () => {
    const base = { function: 'f', chainId: 1, table: 'events', block: { number: 1 } } as const;
    const key = (c: Partial<BlockTableCallConfigInput>) => fusion.key(resolved({ ...base, ...c }));
    expect(key({ block: { number: 9 } })).toBe(key({}));
    for (const other of [
      { function: 'g' },
      { chainId: 2 },
      { byNumber: true },
      { limit: 1 },
      { extraArgs: [1] },
      { where: { selector: OTHER } },
    ])
      expect(key(other)).not.toBe(key({}));
  });

  it('declines where the rows of its blocks cannot be told apart: a projection without the hash', async () => {
    const io = chain([{ canonical: 1, fork: false, events: 1, others: 0 }]);
    const config = resolved({
      function: 'f',
      chainId: 1,
      table: 'events',
      block: { number: 0 },
      columns: ['idx'],
    });
    expect(await fusion.buildMany([{ taskCtx: taskCtx(), config }], io)).toBeNull();
  });
});
