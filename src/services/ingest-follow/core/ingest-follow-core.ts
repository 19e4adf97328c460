// The ingest-follow core: what `blockx ingest --follow` asks the node and writes next so that the chain
// tables' canonical blocks equal the node's canonical chain (docs/ingest.md § Following the head). No IO, no
// clock: every input carries `now`, the poll and retry timers are data (`nextDeadline()`), and effects leave
// as commands for a driver to perform and answer.
//
// Theory of operation.
//
// The core holds the stored canonical chain: the blocks the job wrote (or found in the store when it
// resumed) from `max(from, finalized)` up to its tip, each linked to the one below by parent hash. It does
// one thing at a time — exactly one command is outstanding — so the order of writes is the order of heights:
//
//  - `poll-head` (every `pollIntervalMs` once caught up, or at once when the node announces a new head
//    through a subscription: `announced`): the node's latest block header.
//  - The head is above the tip: `ingest` tip + 1, naming the parent hash it must have (the stored tip). The
//    writer fetches the node's block at that height and writes it only if its parent is that hash; else it
//    answers `moved` and writes nothing. So the stored canonical blocks always form one linked chain.
//    Written: the next height at once, until the head seen; then `caught-up` and wait for the next poll.
//  - The head is at or below the tip with another hash, or its parent is not the tip, or an ingest answered
//    `moved`: a reorg. Walk back by parent hash: the node's hash at a height is the parent hash of its
//    block one above (`fetch-header` asks for a block when the walk needs its parent), compared with the
//    stored hash, height by height down, to the first height where they agree: the common ancestor. A
//    header whose hash is not the parent hash the walk expected means the node moved during the walk: it
//    starts over with a new poll.
//  - The ancestor found: `reorg` reports it; the stored blocks above it are orphans. The next write carries
//    them — `ingest` ancestor + 1 marks them `canonical = false` (keeping their rows) in the transaction that
//    writes the new block; when the node's chain ends at the ancestor (it got shorter), `orphan` marks them
//    alone.
//
// Finality. Blocks at or below head − `finality` are final, where head is the highest head the follower
// has caught up with (its stored tip equal to the node's head, hash and all; on resume, the stored tip):
// a block counts as final only once the follower has seen it `finality` blocks deep in the node's chain,
// never because the node's head moved past it unseen (a reorg of 1 followed by 10 new blocks between two
// polls is healed, not refused). A walk that finds a stored final block differing from the node's is a
// reorg deeper than finality: `stop` with the height and both hashes, before anything is written, and
// nothing more is issued. The core keeps the stored chain only from `finalized` up, so memory is bounded
// by the finality window and the blocks the follower is behind.
//
// Resuming. The stored canonical chain is the state: a new core is given the canonical blocks the store
// holds in the window below the job's cursor and takes the longest linked run from the lowest of them. A
// write that committed before a crash is in the store; one that did not is redone (writes are idempotent).
import { IngestFollowInputError, IngestReorgBeyondFinalityError } from './errors.js';

/** A block as the node serves it and the `blocks` table stores it (hashes lower-case). */
export interface ChainBlock {
  readonly number: number;
  readonly hash: string;
  readonly parentHash: string;
}

export type IngestFollowInput =
  /** Time passed: fires a due poll. */
  | { readonly type: 'tick'; readonly now: number }
  /** The answer to `poll-head`: the node's latest block. */
  | { readonly type: 'head'; readonly now: number; readonly block: ChainBlock }
  /** The answer to `fetch-header`: the node's block at that height, or null when it has none. */
  | { readonly type: 'header'; readonly now: number; readonly block: ChainBlock | null }
  /** `ingest` or `orphan` committed; `block` is the block an ingest wrote. */
  | { readonly type: 'written'; readonly now: number; readonly block?: ChainBlock }
  /** `ingest` wrote nothing: the node's block at that height has another parent than the one named. */
  | { readonly type: 'moved'; readonly now: number }
  /** The outstanding command failed (after the driver's own retries): polled again after `retryDelayMs`. */
  | { readonly type: 'failed'; readonly now: number; readonly message: string }
  /**
   * The node announced a new head (an `eth_subscribe newHeads` notification): poll now instead of at the
   * next interval, or as soon as the outstanding command is answered; not before a failure's retry delay.
   */
  | { readonly type: 'announced'; readonly now: number };

export type IngestFollowCommand =
  | { readonly type: 'poll-head' }
  | { readonly type: 'fetch-header'; readonly number: number }
  /**
   * Write the node's block at `height` if its parent is `parentHash` (null: no check, the job's first
   * block), marking `orphans` non-canonical in the same transaction; answer `written` or `moved`.
   */
  | {
      readonly type: 'ingest';
      readonly height: number;
      readonly parentHash: string | null;
      readonly orphans: readonly ChainBlock[];
    }
  /** Mark `orphans` non-canonical (the node's chain got shorter); answer `written`. */
  | { readonly type: 'orphan'; readonly orphans: readonly ChainBlock[] }
  /** A reorg: the stored blocks above `ancestor` left the node's chain (`orphans`, `depth` of them). */
  | {
      readonly type: 'reorg';
      readonly ancestor: number;
      readonly depth: number;
      readonly oldTip: string;
      readonly newTip: string;
      readonly orphans: readonly ChainBlock[];
    }
  /** The stored chain equals the node's up to its head (said once each time the job catches up). */
  | { readonly type: 'caught-up'; readonly head: number; readonly hash: string }
  | { readonly type: 'stop'; readonly error: IngestReorgBeyondFinalityError };

export interface IngestFollowOptions {
  /** The job's first height: nothing below it is written or compared. */
  readonly from: number;
  /** Blocks at or below head − finality are final (docs/ingest.md § Following the head). */
  readonly finality: number;
  readonly pollIntervalMs: number;
  /** Wait before polling again after a failed command. */
  readonly retryDelayMs: number;
  readonly now: number;
  /** The canonical blocks the store holds for this job (any order); the longest linked run from the lowest is used. */
  readonly stored?: readonly ChainBlock[];
}

/** What the core knows, for status lines and tests. */
export interface IngestFollowSnapshot {
  /** The stored tip (null: the job has stored nothing yet). */
  readonly tip: ChainBlock | null;
  /** The highest head the node showed. */
  readonly head: number | null;
  /** Stored blocks at or below it are final. */
  readonly finalized: number;
  readonly stopped: IngestReorgBeyondFinalityError | undefined;
}

type Pending = IngestFollowCommand['type'] | undefined;

interface Walk {
  /** The height being compared. */
  readonly height: number;
  /** The node's hash at `height`. */
  readonly nodeHash: string;
  /** The node's block at `height` when fetched (its parent hash continues the walk). */
  readonly block: ChainBlock | null;
  /** The head that started the walk (the reorg's new tip). */
  readonly head: ChainBlock;
}

export class IngestFollowCore {
  private readonly opts: IngestFollowOptions;
  /** Stored canonical chain, height → block, contiguous from its lowest height to the tip. */
  private readonly stored = new Map<number, ChainBlock>();
  private tipHeight: number;
  private maxHead: number | null = null;
  private finalized: number;
  /** The node's head block as last seen. */
  private head: ChainBlock | null = null;
  private pending: Pending;
  /** What an outstanding ingest/orphan removes from the stored chain when it commits. */
  private pendingOrphans: readonly ChainBlock[] = [];
  private walk: Walk | undefined;
  /** The next write must walk back first (an ingest answered `moved`). */
  private suspect = false;
  private caughtUp = false;
  private pollDueAt: number;
  /** A failed command's retry delay ends here: announcements do not poll before it. */
  private retryDueAt = -Infinity;
  /** A head was announced while a command was outstanding: the next wait is none. */
  private announced = false;
  private stopped: IngestReorgBeyondFinalityError | undefined;

  constructor(opts: IngestFollowOptions) {
    for (const [field, v] of [
      ['from', opts.from],
      ['finality', opts.finality],
      ['pollIntervalMs', opts.pollIntervalMs],
      ['retryDelayMs', opts.retryDelayMs],
    ] as const) {
      if (!Number.isSafeInteger(v) || v < 0) {
        throw new IngestFollowInputError(`${field} must be an integer ≥ 0, got ${v}`, field);
      }
    }
    this.opts = opts;
    this.tipHeight = opts.from - 1;
    const byHeight = new Map<number, ChainBlock>();
    for (const b of opts.stored ?? []) if (b.number >= opts.from) byHeight.set(b.number, b);
    const lowest = Math.min(...byHeight.keys());
    for (let h = lowest; byHeight.has(h); h++) {
      const b = byHeight.get(h) as ChainBlock;
      const below = this.stored.get(h - 1);
      if (below !== undefined && below.hash !== b.parentHash) break;
      this.stored.set(h, b);
      this.tipHeight = h;
    }
    // A stored block was the node's head or below it when written: the head was at least the tip.
    this.finalized = this.tipHeight - opts.finality;
    this.prune();
    this.pollDueAt = opts.now;
  }

  handle(input: IngestFollowInput): IngestFollowCommand[] {
    const out: IngestFollowCommand[] = [];
    if (this.stopped !== undefined) return out;
    switch (input.type) {
      case 'tick':
        if (this.pending === undefined && input.now >= this.pollDueAt) this.issue({ type: 'poll-head' }, out);
        break;
      case 'head':
        this.expect('poll-head', input.type);
        this.onHead(input.block, input.now, out);
        break;
      case 'header':
        this.expect('fetch-header', input.type);
        this.onHeader(input.block, input.now, out);
        break;
      case 'written':
        this.onWritten(input, out);
        break;
      case 'moved':
        this.expect('ingest', input.type);
        this.suspect = true;
        this.pollNow(input.now, out);
        break;
      case 'failed':
        if (this.pending === undefined)
          throw new IngestFollowInputError('failed: nothing is outstanding', 'type');
        this.pending = undefined;
        this.walk = undefined;
        this.pollDueAt = input.now + this.opts.retryDelayMs;
        this.retryDueAt = this.pollDueAt;
        break;
      case 'announced':
        if (this.pending !== undefined) this.announced = true;
        else {
          this.pollDueAt = Math.min(this.pollDueAt, Math.max(input.now, this.retryDueAt));
          if (input.now >= this.pollDueAt) this.issue({ type: 'poll-head' }, out);
        }
        break;
      default: {
        const _exhaustive: never = input;
        throw new IngestFollowInputError(`unknown input ${JSON.stringify(_exhaustive)}`, 'type');
      }
    }
    return out;
  }

  /** When the driver must feed a `tick` next (undefined: an answer is awaited, or stopped). */
  nextDeadline(): number | undefined {
    return this.stopped !== undefined || this.pending !== undefined ? undefined : this.pollDueAt;
  }

  snapshot(): IngestFollowSnapshot {
    return {
      tip: this.stored.get(this.tipHeight) ?? null,
      head: this.maxHead,
      finalized: this.finalized,
      stopped: this.stopped,
    };
  }

  private expect(command: Exclude<Pending, undefined>, input: string): void {
    if (this.pending !== command) {
      throw new IngestFollowInputError(
        `${input} answers no ${command} (outstanding: ${this.pending ?? 'nothing'})`,
        'type',
      );
    }
    this.pending = undefined;
  }

  private issue(c: IngestFollowCommand, out: IngestFollowCommand[]): void {
    if (c.type === 'poll-head' || c.type === 'fetch-header' || c.type === 'ingest' || c.type === 'orphan') {
      this.pending = c.type;
    }
    // A poll sees every head announced before it.
    if (c.type === 'poll-head') this.announced = false;
    out.push(c);
  }

  private pollNow(now: number, out: IngestFollowCommand[]): void {
    this.pollDueAt = now;
    this.issue({ type: 'poll-head' }, out);
  }

  private onHead(head: ChainBlock, now: number, out: IngestFollowCommand[]): void {
    this.head = head;
    this.maxHead = Math.max(this.maxHead ?? -1, head.number);
    const tip = this.stored.get(this.tipHeight);
    if (tip === undefined) {
      // Nothing stored yet: the job's first block, or wait for the node to reach it.
      if (head.number >= this.opts.from) this.ingest(this.opts.from, null, [], out);
      else this.idle(now);
      return;
    }
    if (this.suspect) {
      // An ingest found the node's block above the tip on another parent: the tip itself is in question.
      this.suspect = false;
      this.startWalk({ height: this.tipHeight, nodeHash: '', block: null, head }, now, out);
    } else if (head.number > this.tipHeight) {
      if (head.number === this.tipHeight + 1 && head.parentHash !== tip.hash) {
        this.compare({ height: this.tipHeight, nodeHash: head.parentHash, block: null, head }, now, out);
      } else this.ingest(this.tipHeight + 1, tip.hash, [], out);
    } else if (head.number === this.tipHeight && head.hash === tip.hash) {
      this.onCaughtUp(now, out);
    } else {
      this.compare({ height: head.number, nodeHash: head.hash, block: head, head }, now, out);
    }
  }

  /** Asks for the node's block at `walk.height` (its hash is not known yet). */
  private startWalk(walk: Walk, now: number, out: IngestFollowCommand[]): void {
    if (this.belowStored(walk.height)) {
      this.found(walk.height, walk.head, now, out);
      return;
    }
    this.walk = walk;
    this.issue({ type: 'fetch-header', number: walk.height }, out);
  }

  private onHeader(block: ChainBlock | null, now: number, out: IngestFollowCommand[]): void {
    const walk = this.walk as Walk;
    this.walk = undefined;
    const expected = walk.nodeHash === '' ? undefined : walk.nodeHash;
    if (
      block === null ||
      block.number !== walk.height ||
      (expected !== undefined && block.hash !== expected)
    ) {
      // The node moved during the walk (or has no block there now): start over from its new head.
      this.pollNow(now, out);
      return;
    }
    this.compare({ ...walk, nodeHash: block.hash, block }, now, out);
  }

  /** One step of the walk back: compares the node's hash at a height with the stored one. */
  private compare(walk: Walk, now: number, out: IngestFollowCommand[]): void {
    const { height, nodeHash } = walk;
    if (this.belowStored(height)) return this.found(height, walk.head, now, out);
    const stored = this.stored.get(height) as ChainBlock;
    if (stored.hash === nodeHash) return this.found(height, walk.head, now, out);
    if (height <= this.finalized) {
      this.stopped = new IngestReorgBeyondFinalityError(
        height,
        stored.hash,
        nodeHash,
        this.opts.finality,
        this.finalized + this.opts.finality,
      );
      out.push({ type: 'stop', error: this.stopped });
      return;
    }
    if (walk.block === null) {
      this.startWalk(walk, now, out);
      return;
    }
    this.compare(
      { height: height - 1, nodeHash: walk.block.parentHash, block: null, head: walk.head },
      now,
      out,
    );
  }

  /** No stored block of the job at `height`: below `from` (or below the window, which is below final). */
  private belowStored(height: number): boolean {
    return height < this.opts.from || !this.stored.has(height);
  }

  /** The common ancestor is `ancestor`: the stored blocks above it are orphans. */
  private found(ancestor: number, head: ChainBlock, now: number, out: IngestFollowCommand[]): void {
    const orphans: ChainBlock[] = [];
    for (let h = ancestor + 1; h <= this.tipHeight; h++) {
      const b = this.stored.get(h);
      if (b !== undefined) orphans.push(b);
    }
    if (orphans.length === 0) {
      // Nothing of the stored chain left it: the walk found the tip on the node's chain.
      if (head.number > this.tipHeight) this.ingest(this.tipHeight + 1, this.tipHash(), [], out);
      else this.onCaughtUp(now, out);
      return;
    }
    out.push({
      type: 'reorg',
      ancestor,
      depth: orphans.length,
      oldTip: (orphans.at(-1) as ChainBlock).hash,
      newTip: head.hash,
      orphans,
    });
    const parent = ancestor >= this.opts.from ? (this.stored.get(ancestor)?.hash ?? null) : null;
    if (head.number > ancestor) this.ingest(ancestor + 1, parent, orphans, out);
    else {
      this.pendingOrphans = orphans;
      this.caughtUp = false;
      this.issue({ type: 'orphan', orphans }, out);
    }
  }

  private ingest(
    height: number,
    parentHash: string | null,
    orphans: readonly ChainBlock[],
    out: IngestFollowCommand[],
  ): void {
    this.pendingOrphans = orphans;
    this.caughtUp = false;
    this.issue({ type: 'ingest', height, parentHash, orphans }, out);
  }

  private tipHash(): string | null {
    return this.stored.get(this.tipHeight)?.hash ?? null;
  }

  private onWritten(
    input: Extract<IngestFollowInput, { type: 'written' }>,
    out: IngestFollowCommand[],
  ): void {
    const was = this.pending;
    if (was !== 'ingest' && was !== 'orphan') {
      throw new IngestFollowInputError(
        `written answers no ingest or orphan (outstanding: ${was ?? 'nothing'})`,
        'type',
      );
    }
    if (was === 'ingest' && input.block === undefined) {
      throw new IngestFollowInputError('written answers an ingest without the block written', 'block');
    }
    this.pending = undefined;
    const lowestOrphan = Math.min(...this.pendingOrphans.map((b) => b.number));
    for (let h = lowestOrphan; h <= this.tipHeight; h++) this.stored.delete(h);
    if (this.pendingOrphans.length > 0) this.tipHeight = lowestOrphan - 1;
    this.pendingOrphans = [];
    if (input.block !== undefined) {
      this.stored.set(input.block.number, input.block);
      this.tipHeight = input.block.number;
    }
    this.prune();
    const head = this.head;
    if (head !== null && this.tipHeight < head.number) {
      this.ingest(this.tipHeight + 1, this.tipHash(), [], out);
    } else if (head !== null && this.tipHeight === head.number && this.tipHash() === head.hash) {
      this.onCaughtUp(input.now, out);
    } else this.pollNow(input.now, out);
  }

  private onCaughtUp(now: number, out: IngestFollowCommand[]): void {
    const tip = this.stored.get(this.tipHeight);
    // The stored chain is the node's up to its head: what lies finality below it is final.
    this.finalized = Math.max(this.finalized, this.tipHeight - this.opts.finality);
    this.prune();
    if (!this.caughtUp && tip !== undefined)
      out.push({ type: 'caught-up', head: tip.number, hash: tip.hash });
    this.caughtUp = true;
    this.idle(now);
  }

  private idle(now: number): void {
    this.pollDueAt = this.announced ? now : now + this.opts.pollIntervalMs;
    this.announced = false;
  }

  /** Forgets stored blocks below `finalized` (the walk never goes below it). */
  private prune(): void {
    for (const h of this.stored.keys()) if (h < this.finalized && h < this.tipHeight) this.stored.delete(h);
  }
}
