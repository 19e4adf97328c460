// JSON text of values the Worker sends to its Executor again and again: the block a builder attached to
// every call of a task, the cached row every call of a task reads. Serialising them once per object
// instead of once per frame matters at 10,000 calls per task.
//
// Only frozen objects are memoised: a frozen object cannot change after its text was taken, so the text
// is always right. The read cache freezes the rows it shares, and block builders freeze the block they
// attach to every call; anything else is serialised each time, as before.

const memo = new WeakMap<object, string>();

/** JSON.stringify(value), remembered per frozen object. Throws what JSON.stringify throws. */
export function jsonOf(value: unknown): string {
  if (typeof value !== 'object' || value === null || !Object.isFrozen(value))
    return JSON.stringify(value) ?? 'null';
  let text = memo.get(value);
  if (text === undefined) {
    text = JSON.stringify(value) ?? 'null';
    memo.set(value, text);
  }
  return text;
}
