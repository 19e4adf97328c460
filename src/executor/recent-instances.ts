// The task instances a thread keeps for one module (thread-modules.ts, isolation `task`): at least the
// `kept` tasks that used the module most recently, at most twice as many.
//
// Why not an exact LRU: a JavaScript Map used as one (delete the oldest key, re-insert on use) costs a
// hash delete and an iterator over the table's leading holes for every new task, and under `blockx submit`
// every task is new. Measured on an execution thread (perf, one-call tasks of hello_world at ~25,000
// tasks/s): `Map.prototype.delete` and the hash lookups were the thread's two largest items, 6-7 % of its
// CPU. Here a new task costs one lookup in each of two maps and one insert; no deletes, no iteration.
//
// Two generations: `current` takes new and re-used tasks; when it holds `kept`, it becomes `previous`
// and the old `previous` is dropped whole (garbage: nothing else holds those instances). A task found in
// `previous` moves to `current`. So a task is dropped only after at least `kept` other tasks used the
// module since it last did, and never more than 2 × `kept` instances are held. Pure: no IO.

export class RecentInstances<V> {
  private current = new Map<string, V>();
  private previous = new Map<string, V>();

  constructor(private readonly kept: number) {
    if (!Number.isInteger(kept) || kept < 1)
      throw new RangeError(`kept must be a positive integer, got ${kept}`);
  }

  /** The instance of `task`, if still kept; a hit in the older generation moves it to the newer. */
  get(task: string): V | undefined {
    const v = this.current.get(task);
    if (v !== undefined) return v;
    const old = this.previous.get(task);
    if (old !== undefined) this.insert(task, old); // its entry in `previous` goes with that generation
    return old;
  }

  /** Whether `task`'s instance is still kept (moves nothing). */
  has(task: string): boolean {
    return this.current.has(task) || this.previous.has(task);
  }

  /** Keep `value` as `task`'s instance (replacing its earlier one). */
  set(task: string, value: V): void {
    if (this.current.has(task)) this.current.set(task, value);
    else this.insert(task, value);
  }

  /** Instances held (a task moved from the older generation may be counted in both until it is dropped). */
  get size(): number {
    return this.current.size + this.previous.size;
  }

  private insert(task: string, value: V): void {
    if (this.current.size >= this.kept) {
      this.previous = this.current;
      this.current = new Map();
    }
    this.current.set(task, value);
  }
}
