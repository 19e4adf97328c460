// The built-in writers under concurrency on real storage (docs/storage.md, "Concurrent writes on
// PostgreSQL"): BlockWriteResultHandler, BlockBundleWriteResultHandler and TableUpsertsResultHandler run
// as a Worker's Result phase runs them (task IO scope, shipped retry defaults), on PostgreSQL by four
// modelled workers (a pg pool each) × 64 tasks in flight, and on SQLite by one. The goals:
//   - different blocks of one table at once: not one write fails;
//   - the same block (or a bundle and a block inside it) at once: every write succeeds and each block
//     ends up holding exactly one run's rows — never a mix, never duplicates;
//   - overlapping upserts in opposite output orders: no deadlock, and one run's values win whole.
import { afterAll, describe, expect, it } from 'vitest';
import { COPY_MIN_ROWS } from '../../../src/services/storage/bulk-writes.js';
import type { Row } from '../../../src/services/storage/types.js';
import { testDatabases } from '../io/harness.js';
import {
  blockOutputs,
  describeFailure,
  openFleet,
  runWrites,
  tableRows,
  transferRow,
  type Fleet,
  type WriteJob,
} from './concurrent-writers.js';

const IN_FLIGHT = 64;
// PostgreSQL through testDatabases (io/harness.ts): a fresh database (or SQLite file) per test.
const dbs = testDatabases('cw');

const BACKENDS = [
  {
    name: 'PostgreSQL, 4 workers × 64 in flight',
    open: async () => openFleet(await dbs.makePg(), 4, { poolSize: 16, maxConcurrentOps: IN_FLIGHT }),
  },
  {
    name: 'SQLite, 1 worker × 64 in flight',
    open: async () => openFleet(await dbs.makeSqlite(), 1, { maxConcurrentOps: IN_FLIGHT }),
  },
];

const byBlock = (rows: readonly Row[]): Map<number, Row[]> => {
  const out = new Map<number, Row[]>();
  for (const r of rows) {
    const n = r.block_number as number;
    out.set(n, [...(out.get(n) ?? []), r]);
  }
  return out;
};
const sorted = (rows: readonly Row[]): Row[] =>
  [...rows].sort((a, b) => (a.log_idx as number) - (b.log_idx as number));

describe.each(BACKENDS)('$name', ({ open }) => {
  let fleet: Fleet;
  const fresh = async (): Promise<Fleet> => {
    await fleet?.close();
    fleet = await open();
    return fleet;
  };
  afterAll(async () => {
    await fleet?.close();
  });

  it('different blocks of one table written at once: no write fails, every block holds its rows', async () => {
    const f = await fresh();
    const blocks = Array.from({ length: 384 }, (_, i) => i + 1);
    // Every 4th block is big enough for PostgreSQL's COPY path; the others take multi-row INSERTs.
    const count = (n: number) => (n % 4 === 0 ? COPY_MIN_ROWS + 6 : 10);
    const jobs: WriteJob[] = blocks.map((n) => ({
      kind: 'block',
      number: n,
      rows: blockOutputs(n, count(n), 'a'),
    }));
    const report = await runWrites(f, jobs, IN_FLIGHT);
    expect(report.failures.map(describeFailure)).toEqual([]);
    const rows = byBlock(await tableRows(f.members[0]!.backend));
    expect(rows.size).toBe(blocks.length);
    for (const n of blocks) expect(sorted(rows.get(n) ?? [])).toEqual(blockOutputs(n, count(n), 'a'));
  });

  it('pairs of writers racing on the same block: every block ends as exactly one complete run', async () => {
    const f = await fresh();
    const blocks = Array.from({ length: 96 }, (_, i) => 5_000 + i);
    // Run b differs from run a in values and in row count (a mix or a leftover shows), except on every
    // third block, where both are the same task (a retry racing its first attempt on another worker).
    // Run a is big enough for PostgreSQL's COPY path, run b takes a multi-row INSERT.
    const A = COPY_MIN_ROWS + 2;
    const runB = (n: number) => (n % 3 === 0 ? blockOutputs(n, A, 'a') : blockOutputs(n, 5, 'b'));
    const jobs: WriteJob[] = blocks.flatMap((n): WriteJob[] => [
      { kind: 'block', number: n, rows: blockOutputs(n, A, 'a') },
      { kind: 'block', number: n, rows: runB(n) },
    ]);
    // Round-robin over the fleet: the two writers of a block run on different workers.
    const report = await runWrites(f, jobs, IN_FLIGHT);
    expect(report.failures.map(describeFailure)).toEqual([]);
    const rows = byBlock(await tableRows(f.members[0]!.backend));
    for (const n of blocks) {
      const got = sorted(rows.get(n) ?? []);
      expect([blockOutputs(n, A, 'a'), runB(n)], `block ${n}`).toContainEqual(got);
    }
  });

  it('a bundle write racing block writes inside and beside it: each block holds one whole run', async () => {
    const f = await fresh();
    // The bundle (blocks 1..1000) writes 2 rows in every 2nd block; block writers hit 60 blocks inside
    // it (some with bundle rows, some without) and 10 blocks of the next bundle, twice each, with six
    // bundle writes (two tasks of the same bundle among them) mixed in.
    const bundleRows = Array.from({ length: 500 }, (_, i) => 2 * i + 1).flatMap((n) => [
      transferRow(n, 0, 'bundle'),
      transferRow(n, 1, 'bundle'),
    ]);
    const inside = Array.from({ length: 60 }, (_, i) => 1 + i * 15);
    const beside = Array.from({ length: 10 }, (_, i) => 1_001 + i);
    const blockJob = (n: number): WriteJob => ({
      kind: 'block',
      number: n,
      rows: blockOutputs(n, 3, 'block'),
    });
    const jobs: WriteJob[] = [];
    [...inside, ...beside, ...inside].forEach((n, i) => {
      jobs.push(blockJob(n));
      if (i % 24 === 3) jobs.push({ kind: 'bundle', bundle: 1, rows: bundleRows });
    });
    const report = await runWrites(f, jobs, IN_FLIGHT);
    expect(report.failures.map(describeFailure)).toEqual([]);

    const rows = byBlock(await tableRows(f.members[0]!.backend));
    const fromBundle = byBlock(bundleRows);
    for (let n = 1; n <= 1_000; n++) {
      const got = sorted(rows.get(n) ?? []);
      const bundleRun = fromBundle.get(n) ?? [];
      if (inside.includes(n))
        expect([bundleRun, blockOutputs(n, 3, 'block')], `block ${n}`).toContainEqual(got);
      else expect(got, `block ${n}`).toEqual(bundleRun);
    }
    for (const n of beside) expect(sorted(rows.get(n) ?? [])).toEqual(blockOutputs(n, 3, 'block'));
  });

  it('overlapping upserts in opposite output orders: no deadlock, one run wins every key', async () => {
    const f = await fresh();
    const pairs = Array.from({ length: 48 }, (_, p) => p);
    // Each pair upserts the same 12 keys over 3 blocks; run b lists them in reverse.
    const keysOf = (p: number) =>
      Array.from({ length: 12 }, (_, i) => ({ block: 20_000 + p * 3 + (i % 3), idx: i }));
    const run = (p: number, name: string): Row[] => keysOf(p).map((k) => transferRow(k.block, k.idx, name));
    const jobs: WriteJob[] = pairs.flatMap((p): WriteJob[] => [
      { kind: 'upserts', rows: run(p, 'a') },
      { kind: 'upserts', rows: run(p, 'b').reverse() },
    ]);
    const report = await runWrites(f, jobs, IN_FLIGHT);
    expect(report.failures.map(describeFailure)).toEqual([]);
    const rows = await tableRows(f.members[0]!.backend, 20_000, 30_000);
    for (const p of pairs) {
      const lo = 20_000 + p * 3;
      const mine = rows.filter(
        (r) => (r.block_number as number) >= lo && (r.block_number as number) < lo + 3,
      );
      const runs = new Set(mine.map((r) => String(r.amount).split(':')[0]));
      expect(mine).toHaveLength(12);
      expect(runs.size, `pair ${p}: ${[...runs].join(', ')}`).toBe(1);
    }
  });
});
