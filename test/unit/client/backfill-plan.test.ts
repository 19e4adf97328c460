// planBackfill (src/client/backfill/plan.ts): the units of a range, the filled task of each, the job id
// and the task ids, and the errors naming the flag or template path at fault.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BackfillPlanError,
  DEFAULT_BUNDLE_SIZE,
  bundleOf,
  bundleRange,
  jobIdOf,
  planBackfill,
  type BackfillTemplate,
} from '../../../src/client/backfill/plan.js';

const WHERE = { selector: '0xddf252ad' };

const blockTemplate = (over: { fn?: string; table?: string; n?: number } = {}): BackfillTemplate => ({
  functionCallConfig: {
    type: 'BlockTableCallConfig',
    config: {
      function: over.fn ?? 'erc20_transfers',
      table: 'events',
      chainId: 1,
      block: { number: over.n ?? 1 },
      where: WHERE,
    },
  },
  resultHandler: {
    type: 'BlockWriteResultHandler',
    config: { table: over.table ?? 'token_transfers', chainId: 1, block: { number: over.n ?? 1 } },
  },
  taskTimeoutMs: 30_000,
});

const bundleTemplate = (
  builder: Record<string, unknown> = {},
  writer: Record<string, unknown> = {},
): BackfillTemplate => ({
  functionCallConfig: {
    type: 'BlockBundleCallConfig',
    config: { function: 'erc20_transfers', table: 'events', chainId: 1, bundle: 1, ...builder },
  },
  resultHandler: {
    type: 'BlockBundleWriteResultHandler',
    config: { table: 'token_transfers', chainId: 1, bundle: 1, ...writer },
  },
});

/** The BackfillPlanError `fn` throws. */
function planError(fn: () => unknown): BackfillPlanError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(BackfillPlanError);
    return err as BackfillPlanError;
  }
  throw new Error('expected a BackfillPlanError');
}

describe('planBackfill: units', () => {
  it('per block: one unit per block of [from, to]', () => {
    const plan = planBackfill({ template: blockTemplate(), from: 5, to: 8, per: 'block' });
    expect(plan.units).toEqual([5, 6, 7, 8].map((n) => ({ key: n, firstBlock: n, lastBlock: n })));
    expect(plan.blocks).toBe(4);
    expect(plan.per).toBe('block');
    expect(planBackfill({ template: blockTemplate(), from: 0, to: 0, per: 'block' }).units).toEqual([
      { key: 0, firstBlock: 0, lastBlock: 0 },
    ]);
  });

  it('per bundle: bundle 0 is genesis only, bundle b is (b−1)·S+1 … b·S', () => {
    const genesis = planBackfill({ template: bundleTemplate(), from: 0, to: 0, per: 'bundle' });
    expect(genesis.units).toEqual([{ key: 0, firstBlock: 0, lastBlock: 0 }]);
    expect(genesis.bundleSize).toBe(DEFAULT_BUNDLE_SIZE);

    const plan = planBackfill({ template: bundleTemplate(), from: 0, to: 2_000, per: 'bundle' });
    expect(plan.units).toEqual([
      { key: 0, firstBlock: 0, lastBlock: 0 },
      { key: 1, firstBlock: 1, lastBlock: 1_000 },
      { key: 2, firstBlock: 1_001, lastBlock: 2_000 },
    ]);
    expect(plan.blocks).toBe(2_001);

    const small = planBackfill({
      template: bundleTemplate({ bundleSize: 10 }, { bundleSize: 10 }),
      from: 11,
      to: 30,
      per: 'bundle',
    });
    expect(small.bundleSize).toBe(10);
    expect(small.units).toEqual([
      { key: 2, firstBlock: 11, lastBlock: 20 },
      { key: 3, firstBlock: 21, lastBlock: 30 },
    ]);
  });

  it('bundleOf and bundleRange agree: bundles tile the chain from genesis (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e9 }), fc.integer({ min: 1, max: 5_000 }), (n, size) => {
        const b = bundleOf(n, size);
        const r = bundleRange(b, size);
        expect(n).toBeGreaterThanOrEqual(r.first);
        expect(n).toBeLessThanOrEqual(r.last);
        expect(bundleRange(b + 1, size).first).toBe(r.last + 1);
        expect(r.last - r.first + 1).toBe(b === 0 ? 1 : size);
      }),
    );
  });
});

describe('planBackfill: errors name the flag or path at fault', () => {
  it.each([
    [2, 1_000, '--from', '--from 2 --to 1000 cuts bundle 1; use --from 1 --to 1000'],
    [1, 1_500, '--to', '--from 1 --to 1500 cuts bundles 1..2; use --from 1 --to 2000'],
    [500, 1_500, '--from', 'cuts bundles 1..2; use --from 1 --to 2000'],
    [0, 5, '--to', 'cuts bundles 0..1; use --from 0 --to 1000'],
  ])(
    'per bundle --from %i --to %i cuts a bundle: %s is named, with the aligned range',
    (from, to, where, text) => {
      const e = planError(() => planBackfill({ template: bundleTemplate(), from, to, per: 'bundle' }));
      expect(e.where).toBe(where);
      expect(e.message).toContain(text);
    },
  );

  it('bad range flags', () => {
    const t = blockTemplate();
    expect(planError(() => planBackfill({ template: t, from: -1, to: 3, per: 'block' })).where).toBe(
      '--from',
    );
    expect(planError(() => planBackfill({ template: t, from: 1, to: 2.5, per: 'block' })).where).toBe('--to');
    const below = planError(() => planBackfill({ template: t, from: 9, to: 3, per: 'block' }));
    expect([below.where, below.message]).toEqual(['--to', '--to 3 is below --from 9']);
    const huge = planError(() => planBackfill({ template: t, from: 0, to: 10_000_000, per: 'block' }));
    expect(huge.where).toBe('--to');
    expect(huge.message).toMatch(/10000001 blocks; one job covers at most 10000000/);
  });

  it('a builder without the selector of the mode names the selector path', () => {
    const hello: BackfillTemplate = {
      functionCallConfig: {
        type: 'CallListCallConfig',
        config: { function: 'hello_world', callList: [['x']] },
      },
    };
    const e = planError(() => planBackfill({ template: hello, from: 1, to: 2, per: 'block' }));
    expect(e.where).toBe('/functionCallConfig/config/block');
    expect(e.message).toContain('(CallListCallConfig) has no "block" selector');
    expect(
      planError(() => planBackfill({ template: blockTemplate(), from: 1, to: 1_000, per: 'bundle' })).where,
    ).toBe('/functionCallConfig/config/bundle');
    const notObject: BackfillTemplate = { functionCallConfig: { type: 'X', config: [] } };
    expect(planError(() => planBackfill({ template: notObject, from: 1, to: 1, per: 'block' })).where).toBe(
      '/functionCallConfig/config',
    );
  });

  it("bundleSize comes from the builder; a bad one, or a writer's that differs, is named", () => {
    const bad = planError(() =>
      planBackfill({ template: bundleTemplate({ bundleSize: 0 }), from: 1, to: 10, per: 'bundle' }),
    );
    expect(bad.where).toBe('/functionCallConfig/config/bundleSize');
    const mismatch = planError(() =>
      planBackfill({
        template: bundleTemplate({ bundleSize: 10 }, { bundleSize: 20 }),
        from: 1,
        to: 20,
        per: 'bundle',
      }),
    );
    expect(mismatch.where).toBe('/resultHandler/config/bundleSize');
    expect(mismatch.message).toBe("the writer's bundleSize (20) differs from the builder's (10)");
    // A bundle writer without bundleSize means the default, which differs from the builder's 10.
    expect(
      planError(() =>
        planBackfill({ template: bundleTemplate({ bundleSize: 10 }), from: 1, to: 10, per: 'bundle' }),
      ).where,
    ).toBe('/resultHandler/config/bundleSize');
    // A writer without a bundle selector follows the builder.
    const plain: BackfillTemplate = {
      functionCallConfig: bundleTemplate({ bundleSize: 10 }).functionCallConfig,
      resultHandler: { type: 'ReturnValueResultHandler', config: {} },
    };
    expect(planBackfill({ template: plain, from: 1, to: 10, per: 'bundle' }).bundleSize).toBe(10);
  });
});

describe('planBackfill: job id and task ids', () => {
  const idOf = (template: BackfillTemplate, from = 1, to = 10) =>
    planBackfill({ template, from, to, per: 'block' }).jobId;

  it('is 12 hex digits, the same for templates differing only in block numbers, task_id or range', () => {
    const id = idOf(blockTemplate());
    expect(id).toMatch(/^[0-9a-f]{12}$/);
    expect(idOf(blockTemplate({ n: 777 }))).toBe(id);
    const withTaskId = { ...blockTemplate(), task_id: 'some-id' } as BackfillTemplate;
    expect(idOf(withTaskId)).toBe(id);
    expect(idOf(blockTemplate(), 0, 1_999)).toBe(id);
    expect(jobIdOf(blockTemplate({ n: 3 }), 'block', DEFAULT_BUNDLE_SIZE)).toBe(id);
  });

  it('differs for another function, table, timeout, mode or bundle size', () => {
    const id = idOf(blockTemplate());
    const others = [
      idOf(blockTemplate({ fn: 'other_fn' })),
      idOf(blockTemplate({ table: 'other_table' })),
      idOf({ ...blockTemplate(), taskTimeoutMs: 60_000 }),
      idOf({ ...blockTemplate(), resultHandler: null }),
      jobIdOf(blockTemplate(), 'bundle', DEFAULT_BUNDLE_SIZE),
    ];
    expect(new Set([id, ...others]).size).toBe(others.length + 1);
    expect(jobIdOf(bundleTemplate(), 'bundle', 10)).not.toBe(jobIdOf(bundleTemplate(), 'bundle', 20));
  });

  it('differs for another database, so a journal of one never skips units of another (issue 30)', () => {
    const job = { template: blockTemplate(), from: 1, to: 10, per: 'block' as const };
    const sqlite = planBackfill({ ...job, storage: 'sqlite:/data/chain.db' }).jobId;
    const postgres = planBackfill({ ...job, storage: 'postgres://u@db:5432/chain' }).jobId;
    expect(new Set([sqlite, postgres, idOf(blockTemplate())]).size).toBe(3);
    expect(planBackfill({ ...job, storage: 'sqlite:/data/chain.db' }).jobId).toBe(sqlite);
  });

  it('task ids are bf-<job>-<run>-b<block>-<attempt> per block and bf-<job>-<run>-u<bundle>-<attempt> per bundle', () => {
    const perBlock = planBackfill({ template: blockTemplate(), from: 7, to: 9, per: 'block' });
    const unit = perBlock.units[1];
    if (unit === undefined) throw new Error('no unit');
    expect(perBlock.taskIdOf(unit, 1, 'a1b2c3')).toBe(`bf-${perBlock.jobId}-a1b2c3-b8-1`);
    expect(perBlock.taskIdOf(unit, 4, 'a1b2c3')).toBe(`bf-${perBlock.jobId}-a1b2c3-b8-4`);
    expect(perBlock.taskIdOf(unit, 1, '000001')).not.toBe(perBlock.taskIdOf(unit, 1, 'a1b2c3'));
    const perBundle = planBackfill({ template: bundleTemplate(), from: 1_001, to: 3_000, per: 'bundle' });
    expect(perBundle.units.map((u) => perBundle.taskIdOf(u, 2, 'ff'))).toEqual([
      `bf-${perBundle.jobId}-ff-u2-2`,
      `bf-${perBundle.jobId}-ff-u3-2`,
    ]);
  });
});

describe('planBackfill: filled tasks', () => {
  it('per block: builder and writer get block {number}; every other field is kept; the template is untouched', () => {
    const template = blockTemplate();
    const before = structuredClone(template);
    const plan = planBackfill({ template, from: 41, to: 42, per: 'block' });
    const unit = plan.units[1];
    if (unit === undefined) throw new Error('no unit');
    expect(plan.taskOf(unit)).toEqual({
      functionCallConfig: {
        type: 'BlockTableCallConfig',
        config: {
          function: 'erc20_transfers',
          table: 'events',
          chainId: 1,
          block: { number: 42 },
          where: WHERE,
        },
      },
      resultHandler: {
        type: 'BlockWriteResultHandler',
        config: { table: 'token_transfers', chainId: 1, block: { number: 42 } },
      },
      taskTimeoutMs: 30_000,
    });
    expect(plan.taskOf(unit)).not.toHaveProperty('taskId');
    expect(template).toEqual(before);
  });

  it('per bundle: both selectors get the bundle id; a writer without a selector is unchanged', () => {
    const plan = planBackfill({
      template: bundleTemplate({ stream: { enabled: true } }),
      from: 1,
      to: 2_000,
      per: 'bundle',
    });
    const task = plan.taskOf({ key: 2, firstBlock: 1_001, lastBlock: 2_000 });
    expect(task).toEqual({
      functionCallConfig: {
        type: 'BlockBundleCallConfig',
        config: {
          function: 'erc20_transfers',
          table: 'events',
          chainId: 1,
          bundle: 2,
          stream: { enabled: true },
        },
      },
      resultHandler: {
        type: 'BlockBundleWriteResultHandler',
        config: { table: 'token_transfers', chainId: 1, bundle: 2 },
      },
    });
    const plain = planBackfill({
      template: {
        ...blockTemplate(),
        resultHandler: { type: 'ReturnValueResultHandler', config: { keep: 1 } },
      },
      from: 3,
      to: 3,
      per: 'block',
    });
    expect(plain.taskOf({ key: 3, firstBlock: 3, lastBlock: 3 }).resultHandler).toEqual({
      type: 'ReturnValueResultHandler',
      config: { keep: 1 },
    });
  });
});
