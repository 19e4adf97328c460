// Timers as data (quinn's TimerTable): a keyed min-heap of absolute deadlines. The core never sleeps;
// it asks "what is due at `now`?" and reports the earliest deadline so the app can arm one OS timer.
// Ties fire in insertion order, so a scan over equal deadlines is deterministic and FIFO.
// Every operation is O(log n); `set` on an existing key moves its deadline.

interface Entry<K> {
  readonly key: K;
  at: number;
  seq: number;
}

export class TimerTable<K> {
  private readonly heap: Entry<K>[] = [];
  private readonly index = new Map<K, number>();
  private seq = 0;

  get size(): number {
    return this.heap.length;
  }

  has(key: K): boolean {
    return this.index.has(key);
  }

  /** The deadline of `key`, if armed. */
  get(key: K): number | undefined {
    const i = this.index.get(key);
    return i === undefined ? undefined : this.at(i).at;
  }

  /** Arms (or re-arms) `key` at `at`. */
  set(key: K, at: number): void {
    const i = this.index.get(key);
    if (i === undefined) {
      this.heap.push({ key, at, seq: this.seq++ });
      this.index.set(key, this.heap.length - 1);
      this.siftUp(this.heap.length - 1);
      return;
    }
    const entry = this.at(i);
    entry.at = at;
    entry.seq = this.seq++;
    this.siftUp(i);
    this.siftDown(this.index.get(key) ?? i);
  }

  /** Disarms `key`; true when it was armed. */
  delete(key: K): boolean {
    const i = this.index.get(key);
    if (i === undefined) return false;
    this.removeAt(i);
    return true;
  }

  /** The earliest deadline, if any. */
  peek(): { readonly key: K; readonly at: number } | undefined {
    const top = this.heap[0];
    return top === undefined ? undefined : { key: top.key, at: top.at };
  }

  /** Removes and returns the earliest key whose deadline is `<= now`, or undefined when none is due. */
  popDue(now: number): K | undefined {
    const top = this.heap[0];
    if (top === undefined || top.at > now) return undefined;
    this.removeAt(0);
    return top.key;
  }

  private at(i: number): Entry<K> {
    const entry = this.heap[i];
    if (entry === undefined) throw new Error(`TimerTable: no entry at ${i}`);
    return entry;
  }

  private less(a: number, b: number): boolean {
    const x = this.at(a);
    const y = this.at(b);
    return x.at < y.at || (x.at === y.at && x.seq < y.seq);
  }

  private swap(a: number, b: number): void {
    const x = this.at(a);
    const y = this.at(b);
    this.heap[a] = y;
    this.heap[b] = x;
    this.index.set(y.key, a);
    this.index.set(x.key, b);
  }

  private removeAt(i: number): void {
    const last = this.heap.length - 1;
    const removed = this.at(i);
    const moved = this.at(last);
    if (i !== last) this.swap(i, last);
    this.heap.pop();
    this.index.delete(removed.key);
    if (moved !== removed) {
      // The former last entry now sits at `i`; it may need to move either way.
      this.siftUp(i);
      this.siftDown(this.index.get(moved.key) ?? i);
    }
  }

  private siftUp(i: number): void {
    let child = i;
    while (child > 0) {
      const parent = (child - 1) >> 1;
      if (!this.less(child, parent)) return;
      this.swap(child, parent);
      child = parent;
    }
  }

  private siftDown(i: number): void {
    let parent = i;
    for (;;) {
      const left = 2 * parent + 1;
      const right = left + 1;
      let smallest = parent;
      if (left < this.heap.length && this.less(left, smallest)) smallest = left;
      if (right < this.heap.length && this.less(right, smallest)) smallest = right;
      if (smallest === parent) return;
      this.swap(parent, smallest);
      parent = smallest;
    }
  }
}
