// The record of what a backfill job finished (docs/backfill.md § Resuming): one JSON Lines file per job,
// `<dir>/<job id>.jsonl`. The first line describes the job (for a person reading the file); then one line
// per unit that SUCCEEDED, appended the moment it succeeded. A rerun of the same job reads the file and
// skips those units.
//
// Crash safety: each line is one appendFileSync, so it reaches the OS before the next unit is counted; a
// crash mid-line leaves a torn last line, which the reader ignores (that unit simply runs again, and the
// idempotent writer makes the second run harmless). Nothing is fsynced: a power loss may forget the last
// units written, with the same harmless outcome.
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';

/** What the engine needs from a journal (a Map in tests). */
export interface BackfillJournal {
  /** Keys of the units already done. */
  readonly done: ReadonlySet<number>;
  /** The run tag in this journal's task ids: fixed for the journal's life, new for a fresh one. */
  readonly runId: string;
  record(entry: JournalEntry): void;
}

export interface JournalEntry {
  readonly key: number;
  readonly taskId: string;
  readonly rows: number | undefined;
}

export interface JournalHeader {
  readonly jobId: string;
  readonly per: string;
  readonly template: unknown;
}

export class FileJournal implements BackfillJournal {
  readonly done: Set<number>;
  readonly file: string;
  readonly runId: string;

  /** Opens (creating) the journal of `header.jobId` under `dir`; `fresh` forgets what it recorded. */
  constructor(dir: string, header: JournalHeader, opts: { fresh?: boolean } = {}) {
    mkdirSync(dir, { recursive: true });
    this.file = path.join(dir, `${header.jobId}.jsonl`);
    if (opts.fresh) rmSync(this.file, { force: true });
    this.done = readDone(this.file);
    // End a torn last line, so the next entry is not glued onto it (and lost with it).
    const text = readText(this.file);
    if (text.length > 0 && !text.endsWith('\n')) appendFileSync(this.file, '\n');
    const existing = runIdOf(this.file);
    if (existing !== undefined) {
      this.runId = existing;
    } else {
      // No header (a new job, or a file whose first line was torn): start a new run, keeping the
      // `done` lines already read.
      this.runId = newRunId();
      rmSync(this.file, { force: true });
      appendFileSync(this.file, `${JSON.stringify({ job: { ...header, run: this.runId } })}\n`);
      for (const key of this.done) appendFileSync(this.file, `${JSON.stringify({ done: key })}\n`);
    }
  }

  record(entry: JournalEntry): void {
    appendFileSync(
      this.file,
      `${JSON.stringify({ done: entry.key, taskId: entry.taskId, rows: entry.rows ?? null })}\n`,
    );
    this.done.add(entry.key);
  }
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw err;
  }
}

/** 6 hex digits: enough to tell the runs of one job apart. */
export function newRunId(): string {
  return randomBytes(3).toString('hex');
}

/** The run tag of the journal's header line, or undefined when there is none. */
function runIdOf(file: string): string | undefined {
  const first = readText(file).split('\n', 1)[0] ?? '';
  try {
    const run = (JSON.parse(first) as { job?: { run?: unknown } }).job?.run;
    return typeof run === 'string' && /^[0-9a-f]{1,16}$/.test(run) ? run : undefined;
  } catch {
    return undefined;
  }
}

/** Keys of the `done` lines; a line that does not parse (a torn last line) is skipped. */
export function readDone(file: string): Set<number> {
  const done = new Set<number>();
  for (const line of readText(file).split('\n')) {
    if (line.length === 0) continue;
    try {
      const entry = JSON.parse(line) as { done?: unknown };
      if (typeof entry.done === 'number' && Number.isSafeInteger(entry.done)) done.add(entry.done);
    } catch {
      // a torn line from a crash mid-write: that unit runs again
    }
  }
  return done;
}
