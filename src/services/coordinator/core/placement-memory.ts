// Which Worker each recent task id was placed on (docs/placement.md § One execution per task id).
//
// A Worker's idempotency is per task id: asked again for an id it holds, it answers with the same slot,
// RUNNING, or the retained result, and runs nothing twice. That helps only if the second request reaches
// it. So the Coordinator remembers where it sent each id and sends the id back there while that Worker is
// alive, whatever the placement policy would pick: a duplicate from upstream, a client retrying after a
// lost answer, a backfill resubmitting its in-flight units after a crash.
//
// An entry is written when a candidate is claimed (not when the slot is granted), so a duplicate that
// arrives while the first request is still in flight follows it. It lives `retentionMs` (the Workers'
// result retention by default: past it a Worker no longer answers for the id anyway), and at most
// `maxEntries` are kept, the oldest forgotten first. The Map keeps insertion order and a write moves its
// id to the end, so expiry and the size cap both cut from the front: O(1) amortised per write. Pure: the
// time comes in as `now`.

interface Placement {
  readonly workerAddr: string;
  readonly atMs: number;
}

export class PlacementMemory {
  private readonly entries = new Map<string, Placement>();

  /** `retentionMs` or `maxEntries` 0: nothing is remembered. */
  constructor(
    private readonly retentionMs: number,
    private readonly maxEntries: number,
  ) {}

  /** `taskId` was just sent to `workerAddr`. */
  remember(taskId: string, workerAddr: string, now: number): void {
    if (this.retentionMs === 0 || this.maxEntries === 0) return;
    this.entries.delete(taskId);
    this.entries.set(taskId, { workerAddr, atMs: now });
    this.prune(now);
  }

  /** The Worker `taskId` was last sent to, unless that was more than `retentionMs` before `now`. */
  workerOf(taskId: string, now: number): string | undefined {
    const p = this.entries.get(taskId);
    return p === undefined || now - p.atMs > this.retentionMs ? undefined : p.workerAddr;
  }

  /** Task ids remembered (expired ones included until the next write cuts them). */
  get size(): number {
    return this.entries.size;
  }

  private prune(now: number): void {
    for (const [taskId, p] of this.entries) {
      if (this.entries.size <= this.maxEntries && now - p.atMs <= this.retentionMs) return;
      this.entries.delete(taskId);
    }
  }
}
