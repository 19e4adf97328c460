// Group commit on PostgreSQL (src/services/storage/pg-group-commit.ts), against a fake of the driver's
// single transaction: a transaction buffers what its callback writes and adds it to the committed table
// at COMMIT, or drops it; COMMITs can be made to fail. Writes that wait for a place share one
// transaction; a failing group runs its members again alone; every write commits exactly once or fails.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_GROUP_MEMBERS, PgGroupCommit } from '../../../../src/services/storage/pg-group-commit.js';

interface Opts {
  readonly deadline: number;
  readonly refuse?: boolean;
}

function fakeDriver(maxGroups: number) {
  const committed: string[] = [];
  /** The keys of each transaction the driver ran, committed or not. */
  const transactions: string[][] = [];
  let commitFailures = 0;
  const solo = async <T>(fn: (q: string[]) => Promise<T>, _opts: Opts): Promise<T> => {
    const tx: string[] = [];
    transactions.push(tx);
    const value = await fn(tx);
    await Promise.resolve();
    if (commitFailures > 0) {
      commitFailures--;
      throw new Error('COMMIT failed');
    }
    committed.push(...tx);
    return value;
  };
  const group = new PgGroupCommit<string[], Opts>(
    solo,
    maxGroups,
    (members) => ({ deadline: Math.min(...members.map((m) => m.deadline)) }),
    (o) => (o.refuse === true ? new Error('refused: deadline passed') : undefined),
  );
  return {
    group,
    committed,
    transactions,
    failCommits: (n: number) => (commitFailures = n),
    write: (key: string, opts: Opts = { deadline: 0 }) =>
      group.run(async (q) => {
        await Promise.resolve();
        q.push(key);
        return key;
      }, opts),
    failing: (key: string, message = 'callback failed') =>
      group.run(
        async (q) => {
          q.push(key);
          await Promise.resolve();
          throw new Error(message);
        },
        { deadline: 0 },
      ),
  };
}

describe('PgGroupCommit', () => {
  it('a write that finds a free place runs at once, alone', async () => {
    const d = fakeDriver(2);
    await expect(Promise.all([d.write('a'), d.write('b')])).resolves.toEqual(['a', 'b']);
    expect(d.transactions).toEqual([['a'], ['b']]);
    expect(d.group.stats).toEqual({ groups: 2, grouped: 0, fallbacks: 0 });
  });

  it('writes that wait while every place is taken share one transaction', async () => {
    const d = fakeDriver(1);
    const results = await Promise.all(['a', 'b', 'c', 'd'].map((k) => d.write(k)));
    expect(results).toEqual(['a', 'b', 'c', 'd']);
    expect(d.transactions).toEqual([['a'], ['b', 'c', 'd']]);
    expect(d.committed).toEqual(['a', 'b', 'c', 'd']);
    expect(d.group.stats).toEqual({ groups: 2, grouped: 3, fallbacks: 0 });
  });

  it(`a group takes at most ${MAX_GROUP_MEMBERS} writes`, async () => {
    const d = fakeDriver(1);
    const keys = Array.from({ length: 2 * MAX_GROUP_MEMBERS + 2 }, (_, i) => `k${i}`);
    await Promise.all(keys.map((k) => d.write(k)));
    expect(d.transactions.map((t) => t.length)).toEqual([1, MAX_GROUP_MEMBERS, MAX_GROUP_MEMBERS, 1]);
    expect(d.committed).toEqual(keys);
  });

  it('a failing member: the group rolls back whole, each member runs again alone, the bad one fails alone', async () => {
    const d = fakeDriver(1);
    const outcomes = await Promise.allSettled([d.write('a'), d.write('b'), d.failing('bad'), d.write('c')]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[2] as PromiseRejectedResult).reason).toMatchObject({ message: 'callback failed' });
    expect(d.committed.sort()).toEqual(['a', 'b', 'c']);
    // The group ran b and bad (c never started in it), rolled back; then b, bad, c alone.
    expect(d.transactions).toEqual([['a'], ['b', 'bad'], ['b'], ['bad'], ['c']]);
    expect(d.group.stats.fallbacks).toBe(1);
  });

  it('a group whose COMMIT fails runs every member again alone, each with its own outcome', async () => {
    const d = fakeDriver(1);
    const first = d.write('a');
    const rest = ['b', 'c'].map((k) => d.write(k));
    await first;
    d.failCommits(1);
    await expect(Promise.all(rest)).resolves.toEqual(['b', 'c']);
    expect(d.committed).toEqual(['a', 'b', 'c']);
    expect(d.transactions).toEqual([['a'], ['b', 'c'], ['b'], ['c']]);
  });

  it('a waiting write that must not start any more is refused when its turn comes; the others run', async () => {
    const d = fakeDriver(1);
    const outcomes = await Promise.allSettled([
      d.write('a'),
      d.write('late', { deadline: 0, refuse: true }),
      d.write('b'),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(d.committed).toEqual(['a', 'b']);
  });

  it('property: every write that resolved is committed exactly once, nothing of a failed one is', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.boolean(), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 3 }),
        async (oks, maxGroups, commitFailures) => {
          const d = fakeDriver(maxGroups);
          d.failCommits(commitFailures);
          const outcomes = await Promise.allSettled(
            oks.map((ok, i) => (ok ? d.write(`w${i}`) : d.failing(`w${i}`))),
          );
          const resolved = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [`w${i}`] : []));
          expect([...d.committed].sort()).toEqual([...resolved].sort());
          // A write that failed is one whose callback fails (or whose lone COMMIT failed).
          oks.forEach((ok, i) => {
            if (!ok) expect(outcomes[i]?.status).toBe('rejected');
          });
          // Each write ran at most twice: once in a group, once alone.
          const runs = new Map<string, number>();
          for (const t of d.transactions) for (const k of t) runs.set(k, (runs.get(k) ?? 0) + 1);
          expect([...runs.values()].every((n) => n <= 2)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});
