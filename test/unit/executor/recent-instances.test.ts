import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RecentInstances } from '../../../src/executor/recent-instances.js';

/** Uses `task` as thread-modules.ts does: its kept instance, or a new one (`made`) kept from now on. */
function use(r: RecentInstances<string>, task: string, made: string): string {
  const kept = r.get(task);
  if (kept !== undefined) return kept;
  r.set(task, made);
  return made;
}

describe('RecentInstances', () => {
  it.each([
    // [kept, the tasks used in order, the tasks whose instance is still there at the end, dropped]
    [2, ['a', 'b', 'c'], ['a', 'b', 'c'], []], // a rotation keeps the older generation
    [2, ['a', 'b', 'c', 'd', 'e'], ['c', 'd', 'e'], ['a', 'b']], // the second drops it whole
    [2, ['a', 'b', 'c', 'a', 'd', 'e'], ['a', 'c', 'd', 'e'], ['b']], // a re-use moves `a` forward
    [1, ['a', 'b', 'c'], ['b', 'c'], ['a']],
    [3, ['a', 'a', 'a', 'b'], ['a', 'b'], []], // re-using a task inserts nothing
  ])('kept %i, used %j: %j kept, %j dropped', (kept, used, present, dropped) => {
    const r = new RecentInstances<string>(kept);
    for (const t of used) use(r, t, `${t}#1`);
    for (const t of dropped) expect(r.has(t)).toBe(false);
    for (const t of present) expect(r.has(t)).toBe(true);
    // (get would move a task of the older generation forward: the property below checks the values)
  });

  it('refuses a bound that is not a positive integer', () => {
    expect(() => new RecentInstances(0)).toThrow(RangeError);
    expect(() => new RecentInstances(1.5)).toThrow(RangeError);
  });

  it('a task sees only its own instance; the `kept` most recent are never dropped; at most 2 × kept held', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.integer({ min: 0, max: 15 }), { maxLength: 200 }),
        (kept, seq) => {
          const r = new RecentInstances<string>(kept);
          /** Every instance ever made, by task: a kept one must be one of its own task's. */
          const made = new Map<string, Set<string>>();
          const used: string[] = [];
          let n = 0;
          for (const i of seq) {
            const task = `t${i}`;
            const before = r.get(task);
            // The `kept` most recently used other tasks since this task's last use: if fewer than `kept`
            // distinct tasks came since, its instance must still be there.
            const last = used.lastIndexOf(task);
            if (last >= 0 && new Set(used.slice(last + 1)).size < kept) expect(before).toBeDefined();
            const inst = before ?? `${task}#${++n}`;
            if (before === undefined) {
              r.set(task, inst);
              (made.get(task) ?? made.set(task, new Set()).get(task)!).add(inst);
            }
            expect(made.get(task)!.has(inst)).toBe(true);
            expect(r.get(task)).toBe(inst); // the same instance for the task's next call
            used.push(task);
            expect(r.size).toBeLessThanOrEqual(2 * kept);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
