// The record of what a backfill job finished (docs/backfill.md § Resuming): one JSON Lines file per job,
// `<dir>/<job id>.jsonl`. The first line describes the job (for a person reading the file); then one line
// per unit that SUCCEEDED, appended the moment it succeeded. A rerun of the same job reads the file and
// skips those units.
//
// Resuming after a crash (docs/backfill.md § Resuming): before starting units, the engine appends a
// `started` line naming the highest key it will start before the next such line (one line per
// `concurrency` units). A rerun reads the highest one: the units up to it that are not done may still
// run, or have run, on a Worker, and the engine asks the Workers for them before placing them again.
//
// Who owns a run (docs/backfill.md § Task ids): the header names the identity that started it (the
// client certificate's, with TLS); opening the journal as another identity throws JournalOwnerError
// before anything runs. The Workers and the Coordinator enforce the same on their side (a task id and a
// job's progress belong to their submitter: docs/security.md § Roles); this check says so up front, with
// what to do, instead of a unit-by-unit refusal. Run tags are 128 random bits, so nobody else can claim
// a run's task ids first; a journal written with the earlier 6-hex tag keeps it (it is read and resumed
// as before: its task ids are those already on the Workers), and says so through `shortRunId`.
//
// Crash safety: each line is one synchronous write, so it reaches the OS before the next unit is counted;
// a crash mid-line leaves a torn last line, which the reader ignores (that unit simply runs again, and the
// idempotent writer makes the second run harmless). Nothing is fsynced: a power loss may forget the last
// units written, with the same harmless outcome. The file stays open for appending from the first entry
// to close(): opening and closing it per unit (appendFileSync) was ~45 µs of the CLI's CPU per task in a
// per-block backfill (docs/performance.md § Per-task costs of a per-block backfill).
import { randomBytes } from 'node:crypto';
import {
  appendFileSync,
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { BlockxError } from '../../kernel/errors.js';

/** What the engine needs from a journal (a Map in tests). */
export interface BackfillJournal {
  /** Keys of the units already done. */
  readonly done: ReadonlySet<number>;
  /** The run tag in this journal's task ids: fixed for the journal's life, new for a fresh one. */
  readonly runId: string;
  /** The highest key an earlier run said it was starting units up to; undefined when none did. */
  readonly startedThrough?: number | undefined;
  record(entry: JournalEntry): void;
  /** Units up to `key` are about to start (written before they do). Optional: without it nothing is resumed. */
  recordStarted?(key: number): void;
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
  /** Where the rows go (password masked), for a person reading the file; the job id already hashes it. */
  readonly storage?: string;
  /** The identity that starts the run (its certificate's); absent without TLS, where identities are claims. */
  readonly client?: string;
}

/** The journal's run was started by another identity (see the header). */
export class JournalOwnerError extends BlockxError {
  declare readonly code: 'JOURNAL_NOT_OWNED';
  constructor(
    readonly file: string,
    readonly runId: string,
    readonly owner: string,
    readonly caller: string | undefined,
  ) {
    super(
      'JOURNAL_NOT_OWNED',
      `the journal ${file} is run ${runId} of ${owner}, and this process is ${caller ?? 'not identified (no TLS)'}: ` +
        'a run belongs to the identity that started it (docs/backfill.md § Task ids); ' +
        'use a --state-dir of your own, or --fresh to start a run of your own there',
    );
  }
}

export class FileJournal implements BackfillJournal {
  readonly done: Set<number>;
  readonly file: string;
  readonly runId: string;
  readonly startedThrough: number | undefined;
  /** The run tag is one of the short ones drawn before 128-bit tags (guessable: finish the job, then --fresh). */
  readonly shortRunId: boolean;

  /**
   * Opens (creating) the journal of `header.jobId` under `dir`; `fresh` forgets what it recorded. Throws
   * JournalOwnerError when the journal's run is another identity's (`header.client` against the file's).
   */
  constructor(dir: string, header: JournalHeader, opts: { fresh?: boolean } = {}) {
    mkdirSync(dir, { recursive: true });
    this.file = path.join(dir, `${header.jobId}.jsonl`);
    if (opts.fresh) rmSync(this.file, { force: true });
    const text = readText(this.file);
    const parsed = parseJournal(text);
    this.done = parsed.done;
    this.startedThrough = parsed.startedThrough;
    if (parsed.runId !== undefined) {
      if (parsed.client !== undefined && parsed.client !== header.client) {
        throw new JournalOwnerError(this.file, parsed.runId, parsed.client, header.client);
      }
      this.runId = parsed.runId;
      // End a torn last line, so the next entry is not glued onto it (and lost with it).
      if (!text.endsWith('\n')) appendFileSync(this.file, '\n');
    } else {
      // No header (a new job, or a file whose first line was torn): start a new run, keeping the
      // `done` lines already read.
      this.runId = newRunId();
      const lines = [
        { job: { ...header, run: this.runId } },
        ...[...this.done].map((key) => ({ done: key })),
      ];
      writeFileSync(this.file, lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
    }
    this.shortRunId = this.runId.length < RUN_ID_HEX;
  }

  /** The file, open for appending, from the first record to close(). */
  private fd: number | undefined;

  record(entry: JournalEntry): void {
    this.append(`${JSON.stringify({ done: entry.key, taskId: entry.taskId, rows: entry.rows ?? null })}\n`);
    this.done.add(entry.key);
  }

  private append(text: string): void {
    const line = Buffer.from(text);
    this.fd ??= openSync(this.file, 'a');
    for (let at = 0; at < line.length;) at += writeSync(this.fd, line, at);
  }

  /** Closes the file; a later record opens it again. */
  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }

  recordStarted(key: number): void {
    this.append(`${JSON.stringify({ started: key })}\n`);
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

const RUN_TAG = /^[0-9a-f]{1,32}$/;

/** Hex digits of a run tag: 128 random bits, so nobody can guess a run's task ids and claim them first. */
export const RUN_ID_HEX = 32;

/** A new run tag (RUN_ID_HEX hex digits from the system's cryptographic random source). */
export function newRunId(): string {
  return randomBytes(RUN_ID_HEX / 2).toString('hex');
}

/**
 * The run tag and owner of the header line (undefined without one; tags of 1 to RUN_ID_HEX hex digits, so
 * the short tags of older journals are read too), the keys of the `done` lines, the highest `started`.
 */
function parseJournal(text: string): {
  runId: string | undefined;
  client: string | undefined;
  done: Set<number>;
  startedThrough: number | undefined;
} {
  const done = new Set<number>();
  let runId: string | undefined;
  let client: string | undefined;
  let startedThrough: number | undefined;
  text.split('\n').forEach((line, i) => {
    if (line.length === 0) return;
    let entry: { done?: unknown; started?: unknown; job?: { run?: unknown; client?: unknown } } | null;
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      return; // a torn line from a crash mid-write: that unit runs again
    }
    if (typeof entry !== 'object' || entry === null) return;
    if (typeof entry.done === 'number' && Number.isSafeInteger(entry.done)) done.add(entry.done);
    const started = entry.started;
    if (
      typeof started === 'number' &&
      Number.isSafeInteger(started) &&
      !(started <= (startedThrough ?? -Infinity))
    )
      startedThrough = started;
    const run = entry.job?.run;
    if (i === 0 && typeof run === 'string' && RUN_TAG.test(run)) {
      runId = run;
      const owner = entry.job?.client;
      client = typeof owner === 'string' ? owner : undefined;
    }
  });
  return { runId, client, done, startedThrough };
}

/** Keys of the `done` lines of a journal file; a line that does not parse (a torn last line) is skipped. */
export function readDone(file: string): Set<number> {
  return parseJournal(readText(file)).done;
}
