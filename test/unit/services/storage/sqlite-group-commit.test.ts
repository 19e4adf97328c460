// Group commit on the SQLite connection (src/services/storage/sqlite-group-commit.ts): write transactions
// queued behind each other share one COMMIT, each member all or nothing, one bad member fails alone.
// Real SQLite in memory (savepoints behave as they do in production), the real connection lock
// (Admission, capacity 1), the statements the group runs logged and failures injected into them.
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Admission } from '../../../../src/services/storage/admission.js';
import {
  MAX_GROUP_MEMBERS,
  SqliteGroupCommit,
} from '../../../../src/services/storage/sqlite-group-commit.js';

interface Harness {
  readonly raw: Database.Database;
  /** Every statement the group ran, in order. */
  readonly log: string[];
  /** The next exec of this statement throws (once). */
  failNext(sql: string): void;
  /** A write transaction through the lock and the group, as SqliteDriver runs one. */
  write<T>(fn: () => Promise<T>): Promise<T>;
  /** A read through the lock: the keys in the table. */
  read(): Promise<string[]>;
  keys(): string[];
  readonly group: SqliteGroupCommit;
}

function harness(): Harness {
  const raw = new Database(':memory:');
  raw.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
  const log: string[] = [];
  const failing = new Set<string>();
  const db = {
    exec(sql: string) {
      log.push(sql);
      if (failing.delete(sql)) throw new Error(`injected failure of ${sql}`);
      return raw.exec(sql);
    },
    get inTransaction() {
      return raw.inTransaction;
    },
  };
  const lock = new Admission(1, 60_000, 'test.db', 'SQLite connection');
  const group = new SqliteGroupCommit(db);
  const keys = () => (raw.prepare('SELECT k FROM t ORDER BY k').all() as { k: string }[]).map((r) => r.k);
  return {
    raw,
    log,
    group,
    keys,
    failNext: (sql) => failing.add(sql),
    write: async (fn) => {
      const release = await lock.acquire({ tag: 'write' });
      return group.run(fn, release, () => lock.nextTag() === 'write');
    },
    read: async () => {
      const release = await lock.acquire({ tag: 'read' });
      try {
        log.push('READ');
        return keys();
      } finally {
        release();
      }
    },
  };
}

/** A member that inserts `key` (a callback spans awaits, as a real one does). */
const insert = (h: Harness, key: string) => async () => {
  await Promise.resolve();
  h.raw.prepare('INSERT INTO t VALUES (?)').run(key);
  await Promise.resolve();
  return key;
};

const commits = (log: readonly string[]) => log.filter((s) => s === 'COMMIT').length;

describe('SqliteGroupCommit', () => {
  it('a lone write is one plain transaction: BEGIN IMMEDIATE, COMMIT, no savepoint', async () => {
    const h = harness();
    await expect(h.write(insert(h, 'a'))).resolves.toBe('a');
    expect(h.log).toEqual(['BEGIN IMMEDIATE', 'COMMIT']);
    expect(h.group.isOpen).toBe(false);
  });

  it.each([2, 5, MAX_GROUP_MEMBERS])('%i writes queued together share one COMMIT', async (n) => {
    const h = harness();
    const keys = Array.from({ length: n }, (_, i) => `k${String(i).padStart(3, '0')}`);
    const results = await Promise.all(keys.map((k) => h.write(insert(h, k))));
    expect(results).toEqual(keys);
    expect(commits(h.log)).toBe(1);
    expect(h.log.filter((s) => s === 'BEGIN IMMEDIATE')).toHaveLength(1);
    expect(h.keys()).toEqual(keys);
  });

  it(`a group holds at most ${MAX_GROUP_MEMBERS} members`, async () => {
    const h = harness();
    const n = 2 * MAX_GROUP_MEMBERS + 1;
    await Promise.all(Array.from({ length: n }, (_, i) => h.write(insert(h, `k${i}`))));
    expect(commits(h.log)).toBe(3);
    expect(h.keys()).toHaveLength(n);
  });

  it('a member resolves only once the COMMIT covering it ran', async () => {
    const h = harness();
    const settledAt: number[] = [];
    await Promise.all(
      ['a', 'b', 'c'].map((k) => h.write(insert(h, k)).then(() => settledAt.push(h.log.length))),
    );
    const commitAt = h.log.indexOf('COMMIT') + 1;
    expect(settledAt.every((at) => at >= commitAt)).toBe(true);
  });

  it('a failing member is undone alone (its savepoint) and rejects; the others commit together', async () => {
    const h = harness();
    const bad = async () => {
      await insert(h, 'bad')();
      throw new Error('callback failed');
    };
    const outcomes = await Promise.allSettled([
      h.write(insert(h, 'a')),
      h.write(bad),
      h.write(insert(h, 'c')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ message: 'callback failed' });
    expect(h.keys()).toEqual(['a', 'c']);
    expect(commits(h.log)).toBe(1);
    expect(h.log).toContain('ROLLBACK TO blockx_member_1');
  });

  it('a statement error inside a member (duplicate key) is undone alone', async () => {
    const h = harness();
    h.raw.prepare('INSERT INTO t VALUES (?)').run('taken');
    const outcomes = await Promise.allSettled([
      h.write(insert(h, 'a')),
      h.write(insert(h, 'taken')),
      h.write(insert(h, 'c')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(h.keys()).toEqual(['a', 'c', 'taken']);
  });

  it('the first member failing rolls the group back whole; the next write starts a group of its own', async () => {
    const h = harness();
    const bad = async () => {
      await insert(h, 'bad')();
      throw new Error('first failed');
    };
    const outcomes = await Promise.allSettled([h.write(bad), h.write(insert(h, 'b'))]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'fulfilled']);
    expect(h.keys()).toEqual(['b']);
  });

  it('a COMMIT that fails runs every member again, each alone, each with its own outcome', async () => {
    const h = harness();
    h.failNext('COMMIT');
    const runs = new Map<string, number>();
    const counted = (k: string) => async () => {
      runs.set(k, (runs.get(k) ?? 0) + 1);
      return insert(h, k)();
    };
    const results = await Promise.all(['a', 'b', 'c'].map((k) => h.write(counted(k))));
    expect(results).toEqual(['a', 'b', 'c']);
    expect(h.keys()).toEqual(['a', 'b', 'c']);
    expect([...runs.values()]).toEqual([2, 2, 2]);
    // The group's COMMIT (failed), then one per member.
    expect(commits(h.log)).toBe(4);
  });

  it('SQLite dropping the whole transaction under a member: the members before it run again alone', async () => {
    const h = harness();
    const drops = async () => {
      await Promise.resolve();
      h.raw.exec('ROLLBACK'); // what SQLite does by itself on a full disk or an I/O error
      throw new Error('disk full');
    };
    const outcomes = await Promise.allSettled([
      h.write(insert(h, 'a')),
      h.write(insert(h, 'b')),
      h.write(drops),
      h.write(insert(h, 'd')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(h.keys()).toEqual(['a', 'b', 'd']);
  });

  it('a BEGIN that fails (another process holds the file) rejects that write alone', async () => {
    const h = harness();
    h.failNext('BEGIN IMMEDIATE');
    const outcomes = await Promise.allSettled([h.write(insert(h, 'a')), h.write(insert(h, 'b'))]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'fulfilled']);
    expect(h.keys()).toEqual(['b']);
  });

  it('a read queued between writes gets the lock only after the group before it committed', async () => {
    const h = harness();
    const [, , seen] = await Promise.all([
      h.write(insert(h, 'a')),
      h.write(insert(h, 'b')),
      h.read(),
      h.write(insert(h, 'c')),
    ]);
    expect(seen).toEqual(['a', 'b']);
    expect(h.log.indexOf('COMMIT')).toBeLessThan(h.log.indexOf('READ'));
    expect(commits(h.log)).toBe(2);
    expect(h.keys()).toEqual(['a', 'b', 'c']);
  });

  it('property: the table holds exactly the keys of the members that resolved; none runs more than twice', async () => {
    type Kind = 'ok' | 'throws' | 'duplicate' | 'drops';
    const kind = fc.constantFrom<Kind>('ok', 'ok', 'ok', 'throws', 'duplicate', 'drops');
    await fc.assert(
      fc.asyncProperty(
        fc.array(kind, { minLength: 1, maxLength: 40 }),
        fc.array(fc.constantFrom('COMMIT', 'BEGIN IMMEDIATE', 'RELEASE blockx_member_1'), { maxLength: 2 }),
        async (kinds, failures) => {
          const h = harness();
          h.raw.prepare('INSERT INTO t VALUES (?)').run('existing');
          for (const f of failures) h.failNext(f);
          const runs: number[] = kinds.map(() => 0);
          const member = (k: Kind, i: number) => async () => {
            runs[i] = (runs[i] as number) + 1;
            if (k === 'drops') {
              await Promise.resolve();
              if (h.raw.inTransaction) h.raw.exec('ROLLBACK');
              throw new Error('dropped');
            }
            await insert(h, k === 'duplicate' ? 'existing' : `m${i}`)();
            if (k === 'throws') throw new Error('throws');
            return i;
          };
          const outcomes = await Promise.allSettled(kinds.map((k, i) => h.write(member(k, i))));
          const expected = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [`m${i}`] : []));
          expect(h.keys()).toEqual(['existing', ...expected].sort());
          kinds.forEach((k, i) => {
            if (k !== 'ok') expect(outcomes[i]?.status).toBe('rejected');
          });
          // A member whose BEGIN failed never ran; one whose group was lost ran again, once.
          expect(runs.every((r) => r <= 2)).toBe(true);
          outcomes.forEach((o, i) => {
            if (o.status === 'fulfilled') expect(runs[i]).toBeGreaterThan(0);
          });
          expect(h.group.isOpen).toBe(false);
          expect(h.raw.inTransaction).toBe(false);
        },
      ),
      { numRuns: 200 },
    );
  });
});
