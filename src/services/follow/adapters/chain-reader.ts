// Reads the canonical chain of one chain id from the `blocks` table for the follow core (docs/follow.md
// § Reading the chain): the head first, then the canonical blocks of [lo, hi]. In that order on purpose:
// the core counts a block as final when its height is at or below head − finality, and a head read
// before the blocks can only be lower than the head when they were read, never higher.
//
// The head is found by galloping from the last head seen: one "is there a canonical block at or above
// n" probe (a one-row keyset scan) says the chain did not grow, a few more find how far it did or how
// far a reorg shortened it. Steady state: two probes per poll, whatever the table size.
import type { CanonicalBlock } from '../core/follow-core.js';
import type { StorageBackend } from '../../storage/types.js';

export interface ChainView {
  readonly head: number | null;
  readonly blocks: readonly CanonicalBlock[];
}

export interface ChainSource {
  /** Default "blocks": columns chain_id, number, hash, parent_hash, canonical. */
  readonly blocksTable: string;
  readonly chainId: number;
}

const TOP = Number.MAX_SAFE_INTEGER;

export class StorageChainReader {
  private lastHead: number | null = null;

  constructor(
    private readonly backend: StorageBackend,
    private readonly source: ChainSource,
  ) {}

  async read(lo: number, hi: number, signal?: AbortSignal): Promise<ChainView> {
    const head = await this.findHead(signal);
    const blocks: CanonicalBlock[] = [];
    if (head !== null && hi >= 0 && lo <= head) {
      const rows = this.backend.scan(
        this.source.blocksTable,
        {
          where: { chain_id: this.source.chainId, canonical: true },
          blockRange: { from: Math.max(0, lo), to: Math.min(hi, head) },
          columns: ['number', 'hash', 'parent_hash'],
        },
        signal ? { signal } : {},
      );
      for await (const page of rows) {
        for (const r of page) {
          blocks.push({ number: Number(r.number), hash: String(r.hash), parentHash: String(r.parent_hash) });
        }
      }
    }
    return { head, blocks };
  }

  /** Is there a canonical block at a height ≥ n? */
  private async above(n: number, signal?: AbortSignal): Promise<boolean> {
    const rows = this.backend.scan(
      this.source.blocksTable,
      {
        where: { chain_id: this.source.chainId, canonical: true },
        blockRange: { from: n, to: TOP },
        columns: ['number'],
        limit: 1,
      },
      signal ? { signal } : {},
    );
    for await (const page of rows) if (page.length > 0) return true;
    return false;
  }

  private async findHead(signal?: AbortSignal): Promise<number | null> {
    if (!(await this.above(0, signal))) return (this.lastHead = null);
    // Invariant: a canonical block exists at or above `yes`, none at or above `no`.
    let yes: number;
    let no: number;
    const start = this.lastHead ?? 0;
    if (await this.above(start, signal)) {
      yes = start;
      for (let step = 1; ; step *= 2) {
        const probe = Math.min(yes + step, TOP);
        if (probe >= TOP || !(await this.above(probe, signal))) {
          no = probe;
          break;
        }
        yes = probe;
      }
    } else {
      no = start;
      for (let step = 1; ; step *= 2) {
        const probe = Math.max(no - step, 0);
        if (await this.above(probe, signal)) {
          yes = probe;
          break;
        }
        no = probe;
      }
    }
    while (no - yes > 1) {
      const mid = yes + Math.floor((no - yes) / 2);
      if (await this.above(mid, signal)) yes = mid;
      else no = mid;
    }
    return (this.lastHead = yes);
  }
}
