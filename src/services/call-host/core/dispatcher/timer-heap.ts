// Timers as data: an intrusive binary min-heap of deadlines. Each entry carries its own heap position,
// so arming, moving and disarming are O(log n) with no side map, and `peek` is O(1). With 100,000 calls
// the heap holds at most the executing attempts (deadlines), the calls in retry backoff and one
// deadline per task; `tick` pops only what is due, never scans.
// Ties pop in arming order (a sequence number), so equal deadlines fire FIFO and runs are deterministic.

export interface TimerEntry {
  /** Position in the heap; -1 when not armed. Owned by the heap. */
  heapIndex: number;
  /** Absolute deadline (ms) while armed. */
  timerAt: number;
  /** Arming order, for FIFO ties. Owned by the heap. */
  timerSeq: number;
}

export class TimerHeap<E extends TimerEntry> {
  private readonly heap: E[] = [];
  private seq = 0;

  get size(): number {
    return this.heap.length;
  }

  /** Arms `entry` at `at`, or moves it there if already armed. */
  arm(entry: E, at: number): void {
    entry.timerAt = at;
    entry.timerSeq = this.seq++;
    if (entry.heapIndex < 0) {
      entry.heapIndex = this.heap.length;
      this.heap.push(entry);
      this.up(entry.heapIndex);
    } else {
      this.up(entry.heapIndex);
      this.down(entry.heapIndex);
    }
  }

  /** Disarms `entry`; a no-op when it is not armed. */
  disarm(entry: E): void {
    const i = entry.heapIndex;
    if (i < 0) return;
    entry.heapIndex = -1;
    const last = this.heap.pop() as E;
    if (i === this.heap.length) return; // it was the last one
    this.heap[i] = last;
    last.heapIndex = i;
    this.up(i);
    this.down(last.heapIndex);
  }

  /** The earliest entry, if any. */
  peek(): E | undefined {
    return this.heap[0];
  }

  /** Removes and returns the earliest entry whose deadline is `<= now`. */
  popDue(now: number): E | undefined {
    const top = this.heap[0];
    if (top === undefined || top.timerAt > now) return undefined;
    this.disarm(top);
    return top;
  }

  private less(a: E, b: E): boolean {
    return a.timerAt < b.timerAt || (a.timerAt === b.timerAt && a.timerSeq < b.timerSeq);
  }

  private up(i: number): void {
    const heap = this.heap;
    const e = heap[i] as E;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = heap[p] as E;
      if (!this.less(e, parent)) break;
      heap[i] = parent;
      parent.heapIndex = i;
      i = p;
    }
    heap[i] = e;
    e.heapIndex = i;
  }

  private down(i: number): void {
    const heap = this.heap;
    const n = heap.length;
    const e = heap[i] as E;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      let c = l;
      if (r < n && this.less(heap[r] as E, heap[l] as E)) c = r;
      const child = heap[c] as E;
      if (!this.less(child, e)) break;
      heap[i] = child;
      child.heapIndex = i;
      i = c;
    }
    heap[i] = e;
    e.heapIndex = i;
  }
}
