// FileJournal (src/client/backfill/journal.ts): what a backfill job finished, on disk, across reruns.
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileJournal, JournalOwnerError, newRunId, readDone } from '../../../src/client/backfill/journal.js';

const HEADER = {
  jobId: 'abc123def456',
  per: 'block',
  template: { functionCallConfig: { type: 'X', config: {} } },
};

const dirs: string[] = [];
function scratch(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'blockx-journal-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean);

describe('FileJournal', () => {
  it('creates <dir>/<job id>.jsonl with a header line and a run tag; what it records, a reopen skips', () => {
    const dir = path.join(scratch(), 'nested', 'state');
    const journal = new FileJournal(dir, HEADER);
    expect(journal.file).toBe(path.join(dir, 'abc123def456.jsonl'));
    expect(journal.done.size).toBe(0);
    expect(journal.runId).toMatch(/^[0-9a-f]{32}$/);
    const header = { job: { ...HEADER, run: journal.runId } };
    expect(lines(journal.file).map((l) => JSON.parse(l) as unknown)).toEqual([header]);

    journal.record({ key: 7, taskId: 'bf-abc123def456-x-b7-1', rows: 12 });
    journal.record({ key: 9, taskId: 'bf-abc123def456-x-b9-2', rows: undefined });
    expect([...journal.done]).toEqual([7, 9]);

    const again = new FileJournal(dir, HEADER);
    expect([...again.done].sort()).toEqual([7, 9]);
    expect(again.runId).toBe(journal.runId);
    // The reopen wrote no second header.
    expect(lines(again.file).map((l) => JSON.parse(l) as unknown)).toEqual([
      header,
      { done: 7, taskId: 'bf-abc123def456-x-b7-1', rows: 12 },
      { done: 9, taskId: 'bf-abc123def456-x-b9-2', rows: null },
    ]);
  });

  it('a torn header line: a new run starts, keeping the done lines', () => {
    const dir = scratch();
    const file = path.join(dir, `${HEADER.jobId}.jsonl`);
    writeFileSync(file, ['{"job":{"jobId":"abc', '{"done":4}', '{"done":5}', ''].join('\n'));
    const journal = new FileJournal(dir, HEADER);
    expect([...journal.done].sort()).toEqual([4, 5]);
    expect(journal.runId).toMatch(/^[0-9a-f]{32}$/);
    const reopened = new FileJournal(dir, HEADER);
    expect(reopened.runId).toBe(journal.runId);
    expect([...reopened.done].sort()).toEqual([4, 5]);
  });

  it('another job id is another file', () => {
    const dir = scratch();
    new FileJournal(dir, HEADER).record({ key: 1, taskId: 't', rows: 0 });
    expect(new FileJournal(dir, { ...HEADER, jobId: 'ffffffffffff' }).done.size).toBe(0);
  });

  it('a torn last line (a crash mid-write) is ignored, and the journal goes on after it', () => {
    const dir = scratch();
    const journal = new FileJournal(dir, HEADER);
    journal.record({ key: 1, taskId: 't1', rows: 3 });
    journal.record({ key: 2, taskId: 't2', rows: 3 });
    appendFileSync(journal.file, '{"done":3,"taskId":"t');
    expect([...readDone(journal.file)].sort()).toEqual([1, 2]);

    const reopened = new FileJournal(dir, HEADER);
    expect([...reopened.done].sort()).toEqual([1, 2]);
    // The unit of the torn line runs again; its new line is not glued onto the torn one.
    reopened.record({ key: 3, taskId: 't3', rows: 1 });
    expect([...new FileJournal(dir, HEADER).done].sort()).toEqual([1, 2, 3]);
  });

  it('started marks: a reopen reads the highest one; a journal without any has none', () => {
    const dir = scratch();
    const header = HEADER;
    const j = new FileJournal(dir, header);
    expect(j.startedThrough).toBeUndefined();
    j.recordStarted(64);
    j.recordStarted(128);
    j.record({ key: 1, taskId: 't1', rows: 0 });
    expect(new FileJournal(dir, header).startedThrough).toBe(128);
    expect(new FileJournal(dir, header, { fresh: true }).startedThrough).toBeUndefined();
  });

  it('lines that are not done entries are not counted', () => {
    const file = path.join(scratch(), 'x.jsonl');
    writeFileSync(
      file,
      ['{"job":{}}', '{"done":"4"}', '{"done":1.5}', '[1]', 'null', '{"done":5}', ''].join('\n'),
    );
    expect([...readDone(file)]).toEqual([5]);
    expect(readDone(path.join(path.dirname(file), 'missing.jsonl')).size).toBe(0);
  });

  it('`fresh` forgets what was recorded and starts a new file under a new run tag', () => {
    const dir = scratch();
    const first = new FileJournal(dir, HEADER);
    first.record({ key: 1, taskId: 't1', rows: 3 });
    const fresh = new FileJournal(dir, HEADER, { fresh: true });
    expect(fresh.done.size).toBe(0);
    expect(fresh.runId).not.toBe(first.runId);
    expect(lines(fresh.file)).toHaveLength(1);
    expect(new FileJournal(dir, HEADER).done.size).toBe(0);
  });

  it('each entry is in the file when record returns; after close() a record opens the file again', () => {
    const dir = scratch();
    const journal = new FileJournal(dir, HEADER);
    journal.record({ key: 1, taskId: 't1', rows: 3 });
    // Read back by another reader before anything is closed: the line reached the OS.
    expect([...readDone(journal.file)]).toEqual([1]);
    journal.close();
    journal.close();
    journal.record({ key: 2, taskId: 't2', rows: 4 });
    expect([...readDone(journal.file)].sort()).toEqual([1, 2]);
    journal.close();
    expect(lines(journal.file)).toHaveLength(3);
  });
});

describe('who owns a run (docs/backfill.md § Task ids)', () => {
  it('run tags are 128 random bits, never repeated', () => {
    const tags = new Set(Array.from({ length: 1_000 }, () => newRunId()));
    expect(tags.size).toBe(1_000);
    for (const tag of tags) expect(tag).toMatch(/^[0-9a-f]{32}$/);
  });

  it('the header names the identity that started the run; the same identity resumes, another is refused and nothing changes', () => {
    const dir = scratch();
    const alice = new FileJournal(dir, { ...HEADER, client: 'alice' });
    alice.record({ key: 3, taskId: 't3', rows: 1 });
    alice.close();
    expect(JSON.parse(lines(alice.file)[0]!)).toEqual({
      job: { ...HEADER, client: 'alice', run: alice.runId },
    });
    const before = readFileSync(alice.file, 'utf8');
    expect(new FileJournal(dir, { ...HEADER, client: 'alice' }).runId).toBe(alice.runId);
    for (const caller of ['mallory', undefined]) {
      let err: unknown;
      try {
        new FileJournal(dir, { ...HEADER, ...(caller === undefined ? {} : { client: caller }) });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(JournalOwnerError);
      expect(err).toMatchObject({ code: 'JOURNAL_NOT_OWNED', owner: 'alice', runId: alice.runId });
      expect((err as Error).message).toMatch(
        new RegExp(
          `is run ${alice.runId} of alice, and this process is ${caller ?? 'not identified'}.*--state-dir of your own, or --fresh`,
        ),
      );
    }
    expect(readFileSync(alice.file, 'utf8')).toBe(before);
    // --fresh starts a run of the caller's own.
    const own = new FileJournal(dir, { ...HEADER, client: 'mallory' }, { fresh: true });
    expect(own.runId).not.toBe(alice.runId);
    expect(own.done.size).toBe(0);
  });

  it('an older journal (a 6-hex tag, no owner) is read and resumed under its tag, and says its tag is short', () => {
    const dir = scratch();
    const file = path.join(dir, `${HEADER.jobId}.jsonl`);
    writeFileSync(
      file,
      [JSON.stringify({ job: { ...HEADER, run: 'a1b2c3' } }), '{"done":4}', '{"started":8}', ''].join('\n'),
    );
    const journal = new FileJournal(dir, { ...HEADER, client: 'alice' });
    expect(journal.runId).toBe('a1b2c3');
    expect(journal.shortRunId).toBe(true);
    expect([...journal.done]).toEqual([4]);
    expect(journal.startedThrough).toBe(8);
    expect(new FileJournal(scratch(), HEADER).shortRunId).toBe(false);
  });
});
