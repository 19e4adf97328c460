// Group commit on the SQLite connection (docs/storage.md § Group commit on SQLite): the write
// transactions that queue for the connection one behind the other share one BEGIN … COMMIT, each
// inside a savepoint of its own, instead of paying a COMMIT (and the WAL frames of the pages they
// share) each.
//
// Theory of operation. The connection lock (sqlite-backend.ts) still admits one transaction at a time,
// in FIFO order, and a member's callback runs exactly as a lone transaction's did, holding the lock:
//
//   - the first member opens the group (BEGIN IMMEDIATE) and runs bare: if it fails, the group is empty
//     and rolls back whole, as a lone transaction did;
//   - every later member runs between SAVEPOINT and RELEASE; if it fails, ROLLBACK TO its savepoint
//     undoes its writes alone and it rejects at once, and the group carries on;
//   - when a member is done, the group stays open only if the lock's next holder is a write transaction
//     (and the group has fewer than MAX_GROUP_MEMBERS): the lock passes to it with the group open. Any
//     other next holder (a read, a migration, nobody) and the group commits first, so nothing outside a
//     group ever sees its uncommitted writes. No member waits for work that is not already queued: a
//     group is what queued while its members ran, never a timer;
//   - a member's promise resolves only after the COMMIT that made its writes durable;
//   - a COMMIT that fails, or SQLite dropping the whole transaction under a member (it does on some
//     errors: disk full, I/O), loses the writes of every member so far. Those members then run again,
//     each alone (BEGIN, callback, COMMIT), and each settles with its own outcome, so one bad write
//     fails alone. Running a callback again is what the task IO scope's retries already do
//     (retry-runner.ts in src/services/worker/adapters/io): a block writer's writes depend only on its task.
//
// All or nothing holds per member: a member's writes are either all in the COMMIT that resolves it or
// in none (its savepoint rolled back, or the group's transaction lost and the member run alone).

/** What the group needs of the connection: better-sqlite3's `Database`. */
export interface SqliteConnection {
  exec(sql: string): unknown;
  readonly inTransaction: boolean;
}

/** The most write transactions one COMMIT covers: bounds how long the first member waits. */
export const MAX_GROUP_MEMBERS = 32;

interface Member {
  readonly run: () => Promise<unknown>;
  readonly value: unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: unknown) => void;
}

type Outcome<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };

export class SqliteGroupCommit {
  /** The members whose writes are in the open transaction, waiting for its COMMIT; undefined: none open. */
  private open: Member[] | undefined;

  constructor(private readonly db: SqliteConnection) {}

  /** Whether a group transaction is open (for tests and invariants). */
  get isOpen(): boolean {
    return this.open !== undefined;
  }

  /**
   * Runs `fn` as a member of the open group, opening one if none is. The caller holds the connection
   * lock; `release` gives it back (called exactly once, before this settles or when the lock passes on
   * with the group open). `nextIsWrite` says whether the lock's next holder is a write transaction.
   */
  async run<T>(fn: () => Promise<T>, release: () => void, nextIsWrite: () => boolean): Promise<T> {
    let group = this.open;
    if (group === undefined) {
      try {
        // IMMEDIATE takes the write lock now, so a conflict with another process surfaces at BEGIN
        // (SQLITE_BUSY after busy_timeout) rather than halfway through the callback.
        this.db.exec('BEGIN IMMEDIATE');
      } catch (err) {
        release();
        throw err;
      }
      group = this.open = [];
    }
    const savepoint = group.length === 0 ? undefined : `blockx_member_${group.length}`;
    const outcome = await this.attempt(fn, savepoint);
    let done: Promise<T> | undefined;
    if (outcome.ok) {
      const value = outcome.value;
      done = new Promise<T>((resolve, reject) =>
        group.push({ run: fn, value, resolve: resolve as (v: unknown) => void, reject }),
      );
      // It may reject (run alone, it failed) before it is returned: not an unhandled rejection.
      done.catch(() => undefined);
    }
    if (!this.db.inTransaction) {
      // The whole transaction is gone (SQLite dropped it on an error, or the connection closed): every
      // member so far lost its writes.
      this.open = undefined;
      await this.runEachAlone(group);
      release();
    } else if (group.length < MAX_GROUP_MEMBERS && nextIsWrite()) {
      release(); // the next write transaction joins this group
    } else {
      await this.commit(group);
      release();
    }
    return done ?? settled(outcome);
  }

  /** Runs one member's callback: bare when `savepoint` is undefined, else undone alone on failure. */
  private async attempt<T>(fn: () => Promise<T>, savepoint: string | undefined): Promise<Outcome<T>> {
    try {
      if (savepoint !== undefined) this.db.exec(`SAVEPOINT ${savepoint}`);
      const value = await fn();
      if (savepoint !== undefined) this.db.exec(`RELEASE ${savepoint}`);
      return { ok: true, value };
    } catch (error) {
      if (savepoint === undefined) this.rollback();
      else if (this.db.inTransaction) {
        try {
          this.db.exec(`ROLLBACK TO ${savepoint}`);
          this.db.exec(`RELEASE ${savepoint}`);
        } catch {
          this.rollback(); // the earlier members are run again, alone
        }
      }
      return { ok: false, error };
    }
  }

  private async commit(group: readonly Member[]): Promise<void> {
    this.open = undefined;
    try {
      this.db.exec('COMMIT');
    } catch {
      this.rollback();
      await this.runEachAlone(group);
      return;
    }
    for (const m of group) m.resolve(m.value);
  }

  /** Each member in a transaction of its own, settling with its own outcome. */
  private async runEachAlone(group: readonly Member[]): Promise<void> {
    for (const m of group) {
      try {
        this.db.exec('BEGIN IMMEDIATE');
        const value = await m.run();
        this.db.exec('COMMIT');
        m.resolve(value);
      } catch (err) {
        this.rollback();
        m.reject(err);
      }
    }
  }

  private rollback(): void {
    if (!this.db.inTransaction) return;
    try {
      this.db.exec('ROLLBACK');
    } catch {
      // The transaction is gone already (SQLite rolls back on some errors by itself).
    }
  }
}

function settled<T>(outcome: Outcome<T>): T {
  if (outcome.ok) return outcome.value;
  throw outcome.error;
}
