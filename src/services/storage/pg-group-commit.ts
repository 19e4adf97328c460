// Group commit on PostgreSQL (docs/storage.md § Group commit on PostgreSQL): write transactions that
// wait for a turn share one transaction on one connection, instead of paying BEGIN and COMMIT (two
// round trips of the ~five a block replacement makes) each.
//
// Theory of operation. At most `maxGroups` groups run at once, each on one leased connection through the
// driver's own single transaction (`solo`). A write that finds a free group place runs at once, alone:
// a quiet backend adds no wait and no batching. A write that finds every place taken waits in `pending`;
// when a group ends, the next one takes every waiting write (up to MAX_GROUP_MEMBERS) and runs their
// callbacks one after the other inside one transaction. So a group is what queued while the others ran,
// never a timer. A waiting write whose signal aborted or whose admission deadline passed meanwhile is
// refused when its turn comes (CANCELLED / OVERLOADED, as a wait for a connection ends).
//
// All or nothing per group, and per member in the end: if any member's callback fails (its own error,
// a statement error, its signal) or the COMMIT fails, the group's transaction rolls back whole and every
// member runs again, alone, in a transaction of its own (`solo`), and settles with that outcome: one bad
// write fails alone, the others commit. Running a transaction callback again is what the task IO
// scope's retries already do (src/services/worker/adapters/io/retry-runner.ts): a block writer's writes
// depend only on its task. A member resolves only after the COMMIT that holds its writes.
//
// Pure of IO itself: it calls `solo`, which the driver gives.

/** The most write transactions one group runs. */
export const MAX_GROUP_MEMBERS = 16;

/** Runs `fn` in one transaction of its own (the driver's BEGIN … COMMIT on a leased connection). */
export type SoloTransaction<Q, O> = <T>(fn: (q: Q) => Promise<T>, opts: O) => Promise<T>;

interface Member<Q, O> {
  readonly fn: (q: Q) => Promise<unknown>;
  readonly opts: O;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: unknown) => void;
}

export interface GroupCommitStats {
  /** Groups run (a write run alone counts as a group of one). */
  readonly groups: number;
  /** Writes that committed inside a group of two or more. */
  readonly grouped: number;
  /** Groups that failed and had their members run alone. */
  readonly fallbacks: number;
}

export class PgGroupCommit<Q, O> {
  private readonly pending: Member<Q, O>[] = [];
  private running = 0;
  private counts = { groups: 0, grouped: 0, fallbacks: 0 };

  constructor(
    private readonly solo: SoloTransaction<Q, O>,
    /** Groups at once: each holds one connection for its whole run. */
    private readonly maxGroups: number,
    /** The options the group's own transaction runs with, from its members' (e.g. the earliest deadline). */
    private readonly groupOptions: (members: readonly O[]) => O,
    /**
     * Why a write that waited must not start after all (its signal aborted, its admission deadline
     * passed), checked when a place comes up; undefined: it may start.
     */
    private readonly refusal: (opts: O) => Error | undefined = () => undefined,
  ) {
    if (!Number.isSafeInteger(maxGroups) || maxGroups <= 0)
      throw new RangeError(`maxGroups must be a positive integer, got ${maxGroups}`);
  }

  get stats(): GroupCommitStats {
    return { ...this.counts };
  }

  /** Runs `fn` in a transaction, alone or in a group; resolves once its writes are committed. */
  run<T>(fn: (q: Q) => Promise<T>, opts: O): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ fn, opts, resolve: resolve as (v: unknown) => void, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.pending.length > 0 && this.running < this.maxGroups) {
      const members: Member<Q, O>[] = [];
      while (members.length < MAX_GROUP_MEMBERS && this.pending.length > 0) {
        const m = this.pending.shift() as Member<Q, O>;
        const refused = this.refusal(m.opts);
        if (refused === undefined) members.push(m);
        else m.reject(refused);
      }
      if (members.length === 0) continue;
      this.running++;
      this.counts.groups++;
      void this.runGroup(members).finally(() => {
        this.running--;
        this.pump();
      });
    }
  }

  private async runGroup(members: readonly Member<Q, O>[]): Promise<void> {
    if (members.length === 1) {
      await this.runAlone(members[0] as Member<Q, O>);
      return;
    }
    let values: unknown[];
    try {
      values = await this.solo(
        async (q) => {
          const out: unknown[] = [];
          for (const m of members) out.push(await m.fn(q));
          return out;
        },
        this.groupOptions(members.map((m) => m.opts)),
      );
    } catch {
      // Nothing of the group was committed: each member again, alone, with its own outcome.
      this.counts.fallbacks++;
      for (const m of members) await this.runAlone(m);
      return;
    }
    this.counts.grouped += members.length;
    members.forEach((m, i) => m.resolve(values[i]));
  }

  private async runAlone(m: Member<Q, O>): Promise<void> {
    try {
      m.resolve(await this.solo(m.fn, m.opts));
    } catch (err) {
      m.reject(err);
    }
  }
}
