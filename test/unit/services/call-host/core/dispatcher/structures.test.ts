// The dispatcher's data structures against simple reference models.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CallQueue } from '../../../../../../src/services/call-host/core/dispatcher/call-queue.js';
import { LiveList } from '../../../../../../src/services/call-host/core/dispatcher/live-list.js';
import {
  TimerHeap,
  type TimerEntry,
} from '../../../../../../src/services/call-host/core/dispatcher/timer-heap.js';

interface T extends TimerEntry {
  id: number;
}
const entry = (id: number): T => ({ id, heapIndex: -1, timerAt: 0, timerSeq: 0 });

describe('TimerHeap', () => {
  it('pops due entries in deadline order, ties in arming order, like a sorted list', () => {
    const op = fc.oneof(
      fc.record({ op: fc.constant('arm' as const), id: fc.nat(30), at: fc.nat(100) }),
      fc.record({ op: fc.constant('disarm' as const), id: fc.nat(30) }),
      fc.record({ op: fc.constant('pop' as const), now: fc.nat(100) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), (ops) => {
        const heap = new TimerHeap<T>();
        const entries = Array.from({ length: 31 }, (_, i) => entry(i));
        let model: { id: number; at: number; seq: number }[] = [];
        let seq = 0;
        for (const o of ops) {
          if (o.op === 'arm') {
            heap.arm(entries[o.id]!, o.at);
            model = model.filter((m) => m.id !== o.id);
            model.push({ id: o.id, at: o.at, seq: seq++ });
          } else if (o.op === 'disarm') {
            heap.disarm(entries[o.id]!);
            model = model.filter((m) => m.id !== o.id);
          } else {
            model.sort((a, b) => a.at - b.at || a.seq - b.seq);
            const popped: number[] = [];
            for (let e = heap.popDue(o.now); e !== undefined; e = heap.popDue(o.now)) popped.push(e.id);
            const due = model.filter((m) => m.at <= o.now).map((m) => m.id);
            model = model.filter((m) => m.at > o.now);
            expect(popped).toEqual(due);
          }
          expect(heap.size).toBe(model.length);
          const min = model.reduce((acc, m) => Math.min(acc, m.at), Infinity);
          expect(heap.peek()?.timerAt ?? Infinity).toBe(min);
          for (const e of entries) expect(e.heapIndex >= 0).toBe(model.some((m) => m.id === e.id));
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe('CallQueue', () => {
  it('is FIFO, skips invalidated entries, and never returns a node twice for one push', () => {
    const q = new CallQueue<{ queueToken: number; id: number }>();
    const nodes = Array.from({ length: 3_000 }, (_, id) => ({ queueToken: 0, id }));
    for (const n of nodes) q.push(n);
    for (const n of nodes) if (n.id % 3 === 0) q.invalidate(n);
    q.push(nodes[0]!); // re-queued after invalidation: goes to the back
    expect(q.size).toBe(2_001);
    const out: number[] = [];
    for (let n = q.shift(); n !== undefined; n = q.shift()) out.push(n.id);
    expect(out).toEqual([...nodes.filter((n) => n.id % 3 !== 0).map((n) => n.id), 0]);
    expect(q.size).toBe(0);
  });
});

describe('LiveList', () => {
  it('keeps insertion order through O(1) deletes, including deleting while iterating', () => {
    type N = { id: number; prevLive: N | undefined; nextLive: N | undefined; linked: boolean };
    const list = new LiveList<N>();
    const nodes: N[] = Array.from({ length: 6 }, (_, id) => ({
      id,
      prevLive: undefined,
      nextLive: undefined,
      linked: false,
    }));
    for (const n of nodes) list.add(n);
    list.add(nodes[0]!); // already in: no-op
    list.delete(nodes[2]!);
    list.delete(nodes[2]!); // already out: no-op
    const seen: number[] = [];
    for (const n of list) {
      seen.push(n.id);
      list.delete(n);
    }
    expect(seen).toEqual([0, 1, 3, 4, 5]);
    expect(list.size).toBe(0);
    expect([...list]).toEqual([]);
  });
});
