// The follow core: what a job that keeps an output table equal to a function over the canonical chain
// must run next (docs/follow.md). No IO, no clock: every input carries `now`, timers are data
// (`nextDeadline()`), and effects leave as commands for a driver to perform and answer.
//
// Theory of operation.
//
// The chain tables say, for every height, which block is canonical (its hash and its parent's hash). The
// job's output says, for every height, which block it was computed on (`applied`). The job is correct
// when the two agree at every height from `from` up: the core issues exactly the work that closes the
// difference, and nothing else.
//
//  - `read {lo, hi}`: the driver reads the canonical blocks with lo ≤ number ≤ hi and the head (the
//    highest canonical number), and answers `chain`. The view is a snapshot: a height of [lo, hi] with no
//    block has none (it vanished, or was never there). A pass reads from one below the cursor up to the
//    head, a page (`pageSize` heights) at a time, every `pollIntervalMs`; it holds at most finality +
//    pageSize heights above the cursor, and reads on when the cursor has freed half a page of them.
//  - `run {height, hash}`: compute `height` on exactly the block `hash` (the driver selects the block by
//    hash, so what ran is what the core recorded, whatever the tables say by then). Issued when the
//    canonical hash differs from the applied one: a new height, or one whose canonical hash changed.
//  - `remove {height}`: the height has no canonical block any more; delete its outputs.
//  - At most one run/remove per height is in flight (two writers of one block could commit in either
//    order), and at most `maxInFlight` overall, lowest heights first. A failed one is retried after
//    `retryDelayMs`; until then the height keeps what it had.
//
// Finality. `finalized` is the highest (head − finality) ever seen: blocks at or below it are final. A
// block is seen final when one snapshot shows it at or below `finalized`. The cursor is the lowest height
// not both seen final and applied; below it the core keeps one hash (the block just under the cursor) and
// forgets the rest, so memory is bounded by the unfinalized window. A block the core saw final that
// changes (or vanishes) is a reorg deeper than finality: the core stops with
// ReorgBeyondFinalityError naming the height and both hashes, issues nothing more, and never guesses.
// A change above `finalized` is an ordinary reorg: the core walks the new branch back by parent hash to
// the common ancestor with what it saw before and reports it (`reorg`, with its depth), then re-runs the
// heights whose hash changed and removes those that vanished.
//
// Resuming. A driver that persisted the cursor, the hash below it and the applied map (the `final`
// command says when the cursor moved) passes them back; a height whose state is unknown (a run that was
// in flight when the process died) is passed as UNKNOWN_HASH, which equals no hash, so it is run (or
// removed) again.
import { FollowInputError, ReorgBeyondFinalityError } from './errors.js';

/** One canonical block as the chain tables hold it. */
export interface CanonicalBlock {
  readonly number: number;
  readonly hash: string;
  readonly parentHash: string;
}

/** A height whose output state is not known: it equals no hash, so the height is run or removed again. */
export const UNKNOWN_HASH = '';

export type FollowInput =
  /** Time passed: fires a due read or retry. */
  | { readonly type: 'tick'; readonly now: number }
  /** The answer to `read {lo, hi}`: the canonical blocks of [lo, hi] and the head (null: no blocks). */
  | {
      readonly type: 'chain';
      readonly now: number;
      readonly lo: number;
      readonly hi: number;
      readonly head: number | null;
      readonly blocks: readonly CanonicalBlock[];
    }
  /** Run or remove `seq` committed. */
  | { readonly type: 'applied'; readonly now: number; readonly seq: number }
  /** Run or remove `seq` failed (after the driver's own retries); the height is tried again later. */
  | { readonly type: 'failed'; readonly now: number; readonly seq: number; readonly message: string };

export type FollowCommand =
  | { readonly type: 'read'; readonly lo: number; readonly hi: number }
  | { readonly type: 'run'; readonly seq: number; readonly height: number; readonly hash: string }
  | { readonly type: 'remove'; readonly seq: number; readonly height: number }
  /** Every height below `cursor` is final and applied; `hash` is the block at cursor − 1 (null: none). */
  | { readonly type: 'final'; readonly cursor: number; readonly hash: string | null }
  /** The chain reorganised above the common ancestor `ancestor`; `depth` blocks of the old view left it. */
  | {
      readonly type: 'reorg';
      readonly ancestor: number;
      readonly depth: number;
      readonly oldTip: string;
      readonly newTip: string | null;
    }
  | { readonly type: 'stop'; readonly error: ReorgBeyondFinalityError };

export interface FollowOptions {
  /** The first height of the job. */
  readonly from: number;
  /** Blocks at or below head − finality are final (docs/follow.md § Finality). */
  readonly finality: number;
  /** Runs and removes in flight at once. */
  readonly maxInFlight: number;
  readonly pollIntervalMs: number;
  /** Wait before a failed run or remove is tried again. */
  readonly retryDelayMs: number;
  /** Heights one read covers. */
  readonly pageSize: number;
  readonly now: number;
  /** State persisted by an earlier driver (see `final`); absent for a new job. */
  readonly resume?: FollowResume;
}

export interface FollowResume {
  readonly cursor: number;
  /** The block at cursor − 1 when it was final; undefined when none was recorded. */
  readonly finalHash?: string | null;
  /** Height → the hash its output was computed on (UNKNOWN_HASH: not known), for heights ≥ cursor. */
  readonly applied: ReadonlyMap<number, string>;
}

/** What the core knows, for status lines and tests. */
export interface FollowSnapshot {
  readonly cursor: number;
  readonly head: number | null;
  readonly finalized: number;
  readonly inFlight: number;
  /** Heights from the cursor to the head whose output differs from the canonical chain (or may). */
  readonly behind: number;
  readonly stopped: ReorgBeyondFinalityError | undefined;
}

interface Work {
  readonly height: number;
  readonly hash: string | null;
}

export class FollowCore {
  private readonly opts: FollowOptions;
  private cursor: number;
  /** The block at cursor − 1, final; undefined when not known. */
  private finalAt: { readonly height: number; readonly hash: string | null } | undefined;
  /** The canonical view of [cursor, observedHi]; a height of that range missing here has no block. */
  private canonical = new Map<number, CanonicalBlock>();
  private observedHi: number;
  private head: number | null = null;
  private finalized = -1;
  private readonly applied: Map<number, string>;
  /** Heights ≥ cursor whose hash (null: no block) a snapshot showed final. */
  private readonly seenFinal = new Map<number, string | null>();
  private readonly inFlight = new Map<number, Work>();
  private readonly busy = new Set<number>();
  private readonly retryAt = new Map<number, number>();
  private nextSeq = 1;
  private pendingRead: { readonly lo: number; readonly hi: number } | undefined;
  private pollDueAt: number;
  /** Where the next read starts: undefined for a new pass (one below the cursor), else a page of this pass. */
  private continueAt: number | undefined;
  /** The last read saw blocks above it: if the pass stopped at the cap, read on when the cursor frees room. */
  private capped = false;
  private stopped: ReorgBeyondFinalityError | undefined;
  private lastNow: number;

  constructor(opts: FollowOptions) {
    for (const [field, v, min] of [
      ['from', opts.from, 0],
      ['finality', opts.finality, 0],
      ['maxInFlight', opts.maxInFlight, 1],
      ['pollIntervalMs', opts.pollIntervalMs, 0],
      ['retryDelayMs', opts.retryDelayMs, 0],
      ['pageSize', opts.pageSize, 1],
    ] as const) {
      if (!Number.isSafeInteger(v) || v < min) {
        throw new FollowInputError(`${field} must be an integer ≥ ${min}, got ${v}`, field);
      }
    }
    this.opts = opts;
    const resume = opts.resume;
    this.cursor = Math.max(opts.from, resume?.cursor ?? opts.from);
    this.finalAt =
      resume?.finalHash !== undefined ? { height: this.cursor - 1, hash: resume.finalHash } : undefined;
    this.applied = new Map([...(resume?.applied ?? [])].filter(([h]) => h >= this.cursor));
    this.observedHi = this.cursor - 1;
    this.pollDueAt = opts.now;
    this.lastNow = opts.now;
  }

  handle(input: FollowInput): FollowCommand[] {
    const out: FollowCommand[] = [];
    if (this.stopped !== undefined) return out;
    this.lastNow = Math.max(this.lastNow, input.now);
    switch (input.type) {
      case 'tick':
        break;
      case 'chain':
        this.onChain(input, out);
        break;
      case 'applied': {
        const work = this.finish(input.seq);
        if (work.hash === null) this.applied.delete(work.height);
        else this.applied.set(work.height, work.hash);
        this.retryAt.delete(work.height);
        break;
      }
      case 'failed': {
        const work = this.finish(input.seq);
        this.retryAt.set(work.height, input.now + this.opts.retryDelayMs);
        break;
      }
      default: {
        const _exhaustive: never = input;
        throw new FollowInputError(`unknown input ${JSON.stringify(_exhaustive)}`, 'type');
      }
    }
    if (this.stopped !== undefined) return out;
    this.advanceCursor(input.now, out);
    this.schedule(input.now, out);
    return out;
  }

  /** When the driver must feed a `tick` next (undefined: only answers are awaited, or stopped). */
  nextDeadline(): number | undefined {
    if (this.stopped !== undefined) return undefined;
    let at = this.pendingRead === undefined ? this.pollDueAt : Infinity;
    // A retry already due waits for a free place, which an `applied` or `failed` input makes: no tick.
    for (const t of this.retryAt.values()) if (t > this.lastNow && t < at) at = t;
    return at === Infinity ? undefined : at;
  }

  snapshot(): FollowSnapshot {
    let behind = 0;
    const top = Math.max(this.observedHi, this.head ?? -1);
    for (let h = this.cursor; h <= top; h++) {
      if (h > this.observedHi || this.want(h) !== (this.applied.get(h) ?? null)) behind++;
    }
    return {
      cursor: this.cursor,
      head: this.head,
      finalized: this.finalized,
      inFlight: this.inFlight.size,
      behind,
      stopped: this.stopped,
    };
  }

  private finish(seq: number): Work {
    const work = this.inFlight.get(seq);
    if (work === undefined) throw new FollowInputError(`no run or remove ${seq} is in flight`, 'seq');
    this.inFlight.delete(seq);
    this.busy.delete(work.height);
    return work;
  }

  private want(height: number): string | null {
    return this.canonical.get(height)?.hash ?? null;
  }

  private onChain(input: Extract<FollowInput, { type: 'chain' }>, out: FollowCommand[]): void {
    const read = this.pendingRead;
    if (read === undefined || read.lo !== input.lo || read.hi !== input.hi) {
      throw new FollowInputError(
        `chain view [${input.lo}, ${input.hi}] answers no read in progress` +
          (read ? ` (the read is [${read.lo}, ${read.hi}])` : ''),
        'lo',
      );
    }
    const view = new Map<number, CanonicalBlock>();
    for (const b of input.blocks) {
      if (b.number < input.lo || b.number > input.hi) {
        throw new FollowInputError(
          `block ${b.number} is outside the read [${input.lo}, ${input.hi}]`,
          'blocks',
        );
      }
      if (view.has(b.number)) {
        throw new FollowInputError(`two canonical blocks at height ${b.number}`, 'blocks');
      }
      view.set(b.number, b);
    }
    this.pendingRead = undefined;
    if (this.deepReorg(input, view)) {
      out.push({ type: 'stop', error: this.stopped as ReorgBeyondFinalityError });
      return;
    }
    this.reportReorg(view, input.lo, input.hi, out);

    if (input.head !== null) this.finalized = Math.max(this.finalized, input.head - this.opts.finality);
    this.head = input.head;
    for (let h = Math.max(input.lo, this.cursor); h <= input.hi; h++) {
      const b = view.get(h);
      if (b === undefined) this.canonical.delete(h);
      else this.canonical.set(h, b);
      if (h <= this.finalized) this.seenFinal.set(h, b?.hash ?? null);
    }
    // A pass re-reads every height it holds, and reads on up to the head but no further than the cap
    // above the cursor; the next page comes at once, and a finished pass waits pollIntervalMs.
    const held = this.observedHi;
    this.observedHi = Math.max(this.observedHi, input.hi);
    const reach = input.head === null ? -1 : Math.min(input.head, this.capTop());
    if (input.hi < Math.max(held, reach)) {
      this.continueAt = input.hi + 1;
      this.pollDueAt = input.now;
    } else {
      this.continueAt = undefined;
      this.pollDueAt = input.now + this.opts.pollIntervalMs;
    }
    this.capped = input.head !== null && input.head > input.hi;
  }

  /**
   * A block seen final that changed: stop (returns true). A hash counts as seen final only when one
   * snapshot showed it together with a head at least `finality` above it (or the highest head before
   * was): a hash read on one page and a head read on a later one prove nothing about each other.
   */
  private deepReorg(
    input: Extract<FollowInput, { type: 'chain' }>,
    view: Map<number, CanonicalBlock>,
  ): boolean {
    for (let h = input.lo; h <= input.hi; h++) {
      const seen = h === this.finalAt?.height ? this.finalAt.hash : this.seenFinal.get(h);
      if (seen === undefined) continue;
      const now = view.get(h)?.hash ?? null;
      if (now !== seen) {
        this.stopped = new ReorgBeyondFinalityError(h, seen, now, this.opts.finality, input.head ?? -1);
        return true;
      }
    }
    return false;
  }

  /**
   * The common ancestor of the new view and the old one, found by walking the new branch back from its
   * tip by parent hash; reported when the old view had blocks above it that the new one replaced or lost.
   */
  private reportReorg(view: Map<number, CanonicalBlock>, lo: number, hi: number, out: FollowCommand[]): void {
    const from = Math.max(lo, this.cursor);
    const oldTop = Math.min(hi, this.observedHi);
    let oldTip: CanonicalBlock | undefined;
    for (let h = oldTop; h >= from && oldTip === undefined; h--) oldTip = this.canonical.get(h);
    if (oldTip === undefined) return;
    let newTip: CanonicalBlock | undefined;
    for (let h = hi; h >= from && newTip === undefined; h--) newTip = view.get(h);
    // Walk back: from the new tip through each block's parent, to the first block the old view shares.
    let at = newTip;
    let ancestor = from - 1;
    while (at !== undefined && at.number >= from) {
      if (this.canonical.get(at.number)?.hash === at.hash) {
        ancestor = at.number;
        break;
      }
      const parent: CanonicalBlock | undefined = view.get(at.number - 1);
      at = parent !== undefined && parent.hash === at.parentHash ? parent : undefined;
    }
    if (at === undefined) {
      // The branch does not link down to the window's bottom (the tables are mid-update): the ancestor
      // is the highest height both views agree on.
      ancestor = from - 1;
      for (let h = Math.min(oldTip.number, newTip?.number ?? -1); h >= from; h--) {
        if (view.get(h)?.hash === this.canonical.get(h)?.hash && view.has(h)) {
          ancestor = h;
          break;
        }
      }
    }
    if (ancestor >= oldTip.number) return; // the old tip is on the new chain: no reorg, just growth
    out.push({
      type: 'reorg',
      ancestor,
      depth: oldTip.number - ancestor,
      oldTip: oldTip.hash,
      newTip: newTip?.hash ?? null,
    });
  }

  private advanceCursor(now: number, out: FollowCommand[]): void {
    const start = this.cursor;
    while (
      this.seenFinal.has(this.cursor) &&
      !this.busy.has(this.cursor) &&
      (this.applied.get(this.cursor) ?? null) === this.want(this.cursor)
    ) {
      const h = this.cursor;
      this.finalAt = { height: h, hash: this.want(h) };
      this.canonical.delete(h);
      this.seenFinal.delete(h);
      this.applied.delete(h);
      this.retryAt.delete(h);
      this.cursor++;
    }
    if (this.cursor === start) return;
    out.push({ type: 'final', cursor: this.cursor, hash: this.finalAt?.hash ?? null });
    // A pass that stopped at the cap reads on as soon as half a page of room is free.
    if (
      this.capped &&
      this.pendingRead === undefined &&
      this.continueAt === undefined &&
      this.capTop() - this.observedHi >= this.opts.pageSize / 2
    ) {
      this.capped = false;
      this.continueAt = this.observedHi + 1;
      this.pollDueAt = now;
    }
  }

  /**
   * The highest height the core may hold: the cursor plus finality + pageSize (the unfinalized window
   * and one page of work), so memory stays bounded however far behind the head the job starts.
   */
  private capTop(): number {
    return this.cursor - 1 + this.opts.finality + this.opts.pageSize;
  }

  private schedule(now: number, out: FollowCommand[]): void {
    if (this.pendingRead === undefined && now >= this.pollDueAt) {
      const lo = this.continueAt ?? this.cursor - 1;
      this.pendingRead = { lo, hi: lo + this.opts.pageSize - 1 };
      out.push({ type: 'read', ...this.pendingRead });
    }
    for (let h = this.cursor; h <= this.observedHi && this.inFlight.size < this.opts.maxInFlight; h++) {
      if (this.busy.has(h) || (this.retryAt.get(h) ?? -Infinity) > now) continue;
      const want = this.want(h);
      const have = this.applied.get(h) ?? null;
      if (want === have) continue;
      const seq = this.nextSeq++;
      this.retryAt.delete(h);
      this.inFlight.set(seq, { height: h, hash: want });
      this.busy.add(h);
      out.push(
        want === null ? { type: 'remove', seq, height: h } : { type: 'run', seq, height: h, hash: want },
      );
    }
  }
}
