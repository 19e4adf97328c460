// A FIFO of calls waiting for an execution slot with priority over new root calls: children of running
// calls, retries whose backoff ended, and parents ready to resume. Index-based (a head cursor, compacted
// when half the array is consumed), so push and shift are O(1) amortised with no `Array.shift`.
//
// Removal is lazy: each push records the node's `queueToken`; a node that leaves the queue by another
// way (cancelled, resumed early) bumps its token, and `shift` skips entries whose token no longer
// matches. A node is therefore never dispatched twice from stale entries.

export interface Queueable {
  queueToken: number;
}

export class CallQueue<N extends Queueable> {
  private nodes: (N | undefined)[] = [];
  private tokens: number[] = [];
  private head = 0;
  /** Live entries (pushed, not shifted, not invalidated). */
  private live = 0;

  get size(): number {
    return this.live;
  }

  push(node: N): void {
    node.queueToken += 1;
    this.nodes.push(node);
    this.tokens.push(node.queueToken);
    this.live += 1;
  }

  /** Marks `node`'s entry stale (it left the queue some other way). */
  invalidate(node: N): void {
    node.queueToken += 1;
    this.live -= 1;
  }

  /** The oldest live entry, removed; undefined when empty. */
  shift(): N | undefined {
    while (this.head < this.nodes.length) {
      const i = this.head++;
      const node = this.nodes[i] as N;
      const token = this.tokens[i];
      this.nodes[i] = undefined;
      if (this.head > 1024 && this.head * 2 > this.nodes.length) this.compact();
      if (node.queueToken === token) {
        node.queueToken += 1;
        this.live -= 1;
        return node;
      }
    }
    return undefined;
  }

  private compact(): void {
    this.nodes = this.nodes.slice(this.head);
    this.tokens = this.tokens.slice(this.head);
    this.head = 0;
  }
}
