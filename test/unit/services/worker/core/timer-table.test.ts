import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TimerTable } from '../../../../../src/services/worker/core/timer-table.js';

function drain(table: TimerTable<string>, now: number): string[] {
  const out: string[] = [];
  for (let k = table.popDue(now); k !== undefined; k = table.popDue(now)) out.push(k);
  return out;
}

describe('TimerTable', () => {
  it('pops due keys in deadline order and keeps the rest', () => {
    const t = new TimerTable<string>();
    t.set('c', 30);
    t.set('a', 10);
    t.set('b', 20);
    expect(t.peek()).toEqual({ key: 'a', at: 10 });
    expect(drain(t, 20)).toEqual(['a', 'b']);
    expect(t.size).toBe(1);
    expect(t.peek()).toEqual({ key: 'c', at: 30 });
    expect(t.popDue(29)).toBeUndefined();
  });

  it('fires ties in insertion order', () => {
    const t = new TimerTable<string>();
    for (const k of ['x', 'y', 'z', 'w']) t.set(k, 5);
    expect(drain(t, 5)).toEqual(['x', 'y', 'z', 'w']);
  });

  it('re-arming moves a key; delete disarms it', () => {
    const t = new TimerTable<string>();
    t.set('a', 10);
    t.set('b', 20);
    t.set('a', 30);
    expect(t.get('a')).toBe(30);
    expect(t.peek()?.key).toBe('b');
    expect(t.delete('b')).toBe(true);
    expect(t.delete('b')).toBe(false);
    expect(t.has('b')).toBe(false);
    expect(drain(t, 100)).toEqual(['a']);
    expect(t.peek()).toBeUndefined();
  });

  it('behaves like a sorted list under random operations', () => {
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('set' as const),
        key: fc.integer({ min: 0, max: 9 }),
        at: fc.integer({ min: 0, max: 50 }),
      }),
      fc.record({ kind: fc.constant('delete' as const), key: fc.integer({ min: 0, max: 9 }) }),
      fc.record({ kind: fc.constant('pop' as const), now: fc.integer({ min: 0, max: 50 }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 80 }), (ops) => {
        const t = new TimerTable<string>();
        const model = new Map<string, { at: number; seq: number }>();
        let seq = 0;
        for (const o of ops) {
          if (o.kind === 'set') {
            t.set(String(o.key), o.at);
            model.set(String(o.key), { at: o.at, seq: seq++ });
          } else if (o.kind === 'delete') {
            expect(t.delete(String(o.key))).toBe(model.delete(String(o.key)));
          } else {
            const expected = [...model.entries()]
              .filter(([, v]) => v.at <= o.now)
              .sort(([, a], [, b]) => a.at - b.at || a.seq - b.seq)
              .map(([k]) => k);
            expect(drain(t, o.now)).toEqual(expected);
            for (const k of expected) model.delete(k);
          }
          expect(t.size).toBe(model.size);
          const min = [...model.values()].reduce<number | undefined>(
            (m, v) => (m === undefined || v.at < m ? v.at : m),
            undefined,
          );
          expect(t.peek()?.at).toBe(min);
        }
      }),
    );
  });
});
