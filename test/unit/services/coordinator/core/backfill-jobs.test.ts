// The backfill job table (src/services/coordinator/core/backfill-jobs.ts): every field bound of a
// report, replacement per (job, run), expiry after the last report, and the table bound.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzRuns } from '../../../../support/fuzz-budget.js';
import {
  BACKFILL_JOB_RETAIN_MS,
  BackfillJobs,
  MAX_JOB_ID_CHARS,
  MAX_RUN_CHARS,
  checkBackfillReport,
  type BackfillProgressReport,
} from '../../../../../src/services/coordinator/core/backfill-jobs.js';
import { BackfillReportError } from '../../../../../src/services/coordinator/core/errors.js';

function progress(over: Partial<BackfillProgressReport> = {}): BackfillProgressReport {
  return {
    jobId: 'a1b2c3d4e5f6',
    run: 'abc123',
    per: 'block',
    fromBlock: 1,
    toBlock: 100,
    units: 100,
    succeeded: 10,
    failed: 1,
    skipped: 5,
    inFlight: 4,
    startedAtMs: 1_000,
    finished: false,
    ...over,
  };
}

describe('checkBackfillReport', () => {
  const refused: [string, Partial<BackfillProgressReport>, string][] = [
    ['empty job id', { jobId: '' }, 'job_id'],
    ['job id over the bound', { jobId: 'j'.repeat(MAX_JOB_ID_CHARS + 1) }, 'job_id'],
    ['job id with a space', { jobId: 'a b' }, 'job_id'],
    ['job id with a control character', { jobId: 'a\nb' }, 'job_id'],
    ['job id with non-ASCII', { jobId: 'jöb' }, 'job_id'],
    ['empty run', { run: '' }, 'run'],
    ['run over the bound', { run: 'r'.repeat(MAX_RUN_CHARS + 1) }, 'run'],
    ['unknown per', { per: 'day' }, 'per'],
    ['negative from_block', { fromBlock: -1 }, 'from_block'],
    ['fractional units', { units: 1.5 }, 'units'],
    ['unsafe integer', { succeeded: 2 ** 60 }, 'succeeded'],
    ['NaN in_flight', { inFlight: Number.NaN }, 'in_flight'],
    ['negative started_at_ms', { startedAtMs: -5 }, 'started_at_ms'],
    ['to below from', { fromBlock: 10, toBlock: 9 }, 'to_block'],
    ['more done than units', { units: 10, succeeded: 5, failed: 3, skipped: 2, inFlight: 1 }, 'units'],
  ];
  it.each(refused)('refuses %s', (_name, over, field) => {
    let caught: unknown;
    try {
      checkBackfillReport(progress(over));
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(BackfillReportError);
    expect(caught).toMatchObject({ code: 'InvalidArgument', field });
  });

  const accepted: [string, Partial<BackfillProgressReport>][] = [
    ['a typical report', {}],
    ['the longest job id and run', { jobId: 'j'.repeat(MAX_JOB_ID_CHARS), run: 'r'.repeat(MAX_RUN_CHARS) }],
    ['per bundle', { per: 'bundle' }],
    ['everything done', { units: 10, succeeded: 5, failed: 3, skipped: 2, inFlight: 0 }],
    [
      'an empty job',
      { units: 0, succeeded: 0, failed: 0, skipped: 0, inFlight: 0, fromBlock: 0, toBlock: 0 },
    ],
  ];
  it.each(accepted)('accepts %s', (_name, over) => {
    expect(() => checkBackfillReport(progress(over))).not.toThrow();
  });
});

describe('BackfillJobs', () => {
  it('stamps the report time and replaces the entry of the same run', () => {
    const jobs = new BackfillJobs();
    jobs.report(progress({ succeeded: 1 }), 10);
    jobs.report(progress({ succeeded: 2 }), 20);
    expect(jobs.list(20)).toEqual([
      expect.objectContaining({ jobId: 'a1b2c3d4e5f6', run: 'abc123', succeeded: 2, updatedAtMs: 20 }),
    ]);
  });

  it('keeps two runs of a job apart, most recently reported first', () => {
    const jobs = new BackfillJobs();
    jobs.report(progress({ run: 'r1' }), 10);
    jobs.report(progress({ run: 'r2' }), 20);
    jobs.report(progress({ run: 'r1' }), 30);
    expect(jobs.list(30).map((j) => j.run)).toEqual(['r1', 'r2']);
  });

  const expiry: [string, number, number][] = [
    ['kept just before the retention ends', BACKFILL_JOB_RETAIN_MS - 1, 1],
    ['dropped when it ends', BACKFILL_JOB_RETAIN_MS, 0],
  ];
  it.each(expiry)('an entry is %s', (_name, age, want) => {
    const jobs = new BackfillJobs();
    jobs.report(progress(), 1_000);
    expect(jobs.list(1_000 + age)).toHaveLength(want);
  });

  it('a full table makes room by dropping the finished job reported least recently', () => {
    const jobs = new BackfillJobs(2);
    jobs.report(progress({ jobId: 'running' }), 1);
    jobs.report(progress({ jobId: 'done', finished: true }), 2);
    jobs.report(progress({ jobId: 'new' }), 3);
    expect(jobs.list(3).map((j) => j.jobId)).toEqual(['new', 'running']);
  });

  it('a full table of running jobs refuses a new one and still takes reports of known ones', () => {
    const jobs = new BackfillJobs(2);
    jobs.report(progress({ jobId: 'a' }), 1);
    jobs.report(progress({ jobId: 'b' }), 2);
    expect(() => jobs.report(progress({ jobId: 'c' }), 3)).toThrow(
      expect.objectContaining({ code: 'TooManyJobs' }),
    );
    expect(() => jobs.report(progress({ jobId: 'a', succeeded: 50 }), 4)).not.toThrow();
    expect(jobs.size).toBe(2);
  });

  it('a full table takes a new job once an entry expired', () => {
    const jobs = new BackfillJobs(1);
    jobs.report(progress({ jobId: 'a' }), 0);
    expect(() => jobs.report(progress({ jobId: 'b' }), BACKFILL_JOB_RETAIN_MS)).not.toThrow();
    expect(jobs.list(BACKFILL_JOB_RETAIN_MS).map((j) => j.jobId)).toEqual(['b']);
  });

  it('a refused report leaves the table unchanged', () => {
    const jobs = new BackfillJobs();
    jobs.report(progress({ succeeded: 1 }), 1);
    expect(() => jobs.report(progress({ succeeded: 1_000 }), 2)).toThrow(BackfillReportError);
    expect(jobs.list(2)).toEqual([expect.objectContaining({ succeeded: 1, updatedAtMs: 1 })]);
  });

  it("another client's report of a job is refused and changes nothing", () => {
    const jobs = new BackfillJobs();
    jobs.report(progress({ succeeded: 1 }), 1, 'alice');
    expect(() => jobs.report(progress({ succeeded: 80 }), 2, 'mallory')).toThrow(
      expect.objectContaining({
        code: 'NotOwner',
        message: expect.stringMatching(/only the client that started it/),
      }),
    );
    expect(jobs.list(2)).toEqual([
      expect.objectContaining({ succeeded: 1, updatedAtMs: 1, client: 'alice' }),
    ]);
    expect(() => jobs.report(progress({ succeeded: 2 }), 3, 'alice')).not.toThrow();
  });

  it('one client holds at most maxJobsPerClient entries; its own finished ones make room; others are unaffected', () => {
    const jobs = new BackfillJobs(256, BACKFILL_JOB_RETAIN_MS, 2);
    jobs.report(progress({ jobId: 'm1' }), 1, 'mallory');
    jobs.report(progress({ jobId: 'm2', finished: true }), 2, 'mallory');
    jobs.report(progress({ jobId: 'm3' }), 3, 'mallory'); // pushes out m2 (finished)
    expect(() => jobs.report(progress({ jobId: 'm4' }), 4, 'mallory')).toThrow(
      expect.objectContaining({
        code: 'TooManyJobs',
        message: expect.stringMatching(/this client already has 2/),
      }),
    );
    jobs.report(progress({ jobId: 'a1' }), 5, 'alice');
    expect(jobs.list(5).map((j) => j.jobId)).toEqual(['a1', 'm3', 'm1']);
  });

  it("property: per client and in all, the bounds hold, and only an entry's owner changes it", () => {
    const owners = ['alice', 'bob', 'mallory'];
    const op = fc.record({
      owner: fc.constantFrom(...owners),
      job: fc.constantFrom('j1', 'j2', 'j3', 'j4', 'j5', 'j6'),
      finished: fc.boolean(),
      dt: fc.integer({ min: 0, max: BACKFILL_JOB_RETAIN_MS / 4 }),
    });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 80 }), (ops) => {
        const jobs = new BackfillJobs(5, BACKFILL_JOB_RETAIN_MS, 2);
        const firstBy = new Map<string, string>();
        let now = 0;
        for (const o of ops) {
          now += o.dt;
          const before = jobs.list(now).find((j) => j.jobId === o.job);
          try {
            jobs.report(
              progress({ jobId: o.job, finished: o.finished, succeeded: ops.indexOf(o) % 10 }),
              now,
              o.owner,
            );
            if (before === undefined) firstBy.set(o.job, o.owner);
            else expect(firstBy.get(o.job)).toBe(o.owner);
          } catch (err) {
            expect(['NotOwner', 'TooManyJobs']).toContain((err as BackfillReportError).code);
            expect(jobs.list(now).find((j) => j.jobId === o.job)).toEqual(before);
          }
          const listed = jobs.list(now);
          expect(listed.length).toBeLessThanOrEqual(5);
          for (const owner of owners)
            expect(listed.filter((j) => firstBy.get(j.jobId) === owner).length).toBeLessThanOrEqual(2);
        }
      }),
      { numRuns: fuzzRuns({ budget: 200, ciCap: 100 }) },
    );
  });
});
