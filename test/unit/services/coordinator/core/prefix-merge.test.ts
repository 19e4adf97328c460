import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CoordinatorError } from '../../../../../src/services/coordinator/core/errors.js';
import {
  mergeHeartbeats,
  registryEntryWins,
} from '../../../../../src/services/coordinator/core/prefix-merge.js';
import type { RegistryEntry } from '../../../../../src/services/coordinator/core/prefix-merge.js';
import { PrefixMergeView } from '../../../../../src/services/coordinator/core/prefix-merge-view.js';
import type { MergeChange } from '../../../../../src/services/coordinator/core/prefix-merge-view.js';
import type { RegistryPrefixFormat } from '../../../../../src/contracts/registry-prefix.js';
import { hb } from './fixtures.js';

const LEGACY = '/blockx/bundle-workers/';
const PROD = '/blockx/prod/lanes/default/bundle-workers/';
const TEST = '/blockx/test/lanes/default/bundle-workers/';
const FORMAT: Record<string, RegistryPrefixFormat> = { [LEGACY]: 'legacy', [PROD]: 'v2', [TEST]: 'v2' };
const entry = (prefix: string, addr: string, ts: number, over = {}): RegistryEntry => ({
  prefix,
  format: FORMAT[prefix]!,
  heartbeat: hb(addr, { lastHeartbeatMs: ts, ...over }),
});

describe('merge rules', () => {
  const cases: Array<{ name: string; a: RegistryEntry; b: RegistryEntry; winner: 'a' | 'b' }> = [
    { name: 'newer heartbeat wins over v2', a: entry(LEGACY, 'w', 11), b: entry(PROD, 'w', 10), winner: 'a' },
    {
      name: 'newer heartbeat wins (v2 newer)',
      a: entry(LEGACY, 'w', 10),
      b: entry(PROD, 'w', 11),
      winner: 'b',
    },
    { name: 'tie: v2 beats legacy', a: entry(LEGACY, 'w', 10), b: entry(PROD, 'w', 10), winner: 'b' },
    // '/blockx/prod/...' < '/blockx/test/...'
    {
      name: 'tie, both v2: smaller prefix string wins',
      a: entry(TEST, 'w', 10),
      b: entry(PROD, 'w', 10),
      winner: 'b',
    },
  ];
  it.each(cases)('$name', ({ a, b, winner }) => {
    const w = winner === 'a' ? a : b;
    const l = winner === 'a' ? b : a;
    expect(registryEntryWins(w, l)).toBe(true);
    expect(registryEntryWins(l, w)).toBe(false);
    // The result does not depend on the order of the input.
    expect(mergeHeartbeats([a, b]).get('w')).toBe(w);
    expect(mergeHeartbeats([b, a]).get('w')).toBe(w);
  });

  it('an exact tie keeps the first entry', () => {
    const x = entry(PROD, 'w', 5, { taskSlots: 1 });
    const y = entry(PROD, 'w', 5, { taskSlots: 2 });
    expect(registryEntryWins(y, x)).toBe(false);
    expect(mergeHeartbeats([x, y]).get('w')).toBe(x);
  });

  it('merges per address and keeps distinct Workers apart', () => {
    const m = mergeHeartbeats([
      entry(LEGACY, 'a', 1),
      entry(PROD, 'b', 1),
      entry(PROD, 'a', 1),
      entry(LEGACY, 'c', 3),
    ]);
    expect([...m.keys()]).toEqual(['a', 'b', 'c']);
    expect(m.get('a')?.prefix).toBe(PROD);
  });
});

describe('PrefixMergeView', () => {
  const view = () =>
    new PrefixMergeView([
      { prefix: LEGACY, format: 'legacy' },
      { prefix: PROD, format: 'v2' },
    ]);

  it('a Worker under two prefixes appears once and leaves only when gone from both', () => {
    const v = view();
    expect(v.put(LEGACY, hb('w', { lastHeartbeatMs: 10 }))).toMatchObject({
      type: 'upsert',
      entry: { prefix: LEGACY },
    });
    expect(v.put(PROD, hb('w', { lastHeartbeatMs: 10 }))).toMatchObject({
      type: 'upsert',
      entry: { prefix: PROD },
    });
    expect(v.size).toBe(1);
    // The legacy entry is refreshed with a newer heartbeat: it takes over.
    expect(v.put(LEGACY, hb('w', { lastHeartbeatMs: 12 }))).toMatchObject({
      type: 'upsert',
      entry: { prefix: LEGACY },
    });
    // The v2 entry is refreshed with an older heartbeat than the winner: nothing changes.
    expect(v.put(PROD, hb('w', { lastHeartbeatMs: 11 }))).toBeUndefined();
    // The winner disappears: the other prefix's entry takes over.
    expect(v.delete(LEGACY, 'w')).toMatchObject({
      type: 'upsert',
      entry: { prefix: PROD, heartbeat: { lastHeartbeatMs: 11 } },
    });
    expect(v.merged().map((h) => h.workerAddr)).toEqual(['w']);
    expect(v.delete(PROD, 'w')).toEqual({ type: 'remove', workerAddr: 'w' });
    expect(v.size).toBe(0);
    expect(v.delete(PROD, 'w')).toBeUndefined();
  });

  it('replacePrefix reports upserts and removals for that prefix only', () => {
    const v = view();
    v.put(LEGACY, hb('a', { lastHeartbeatMs: 5 }));
    v.put(LEGACY, hb('b', { lastHeartbeatMs: 5 }));
    v.put(PROD, hb('b', { lastHeartbeatMs: 4 }));
    const changes = v.replacePrefix(LEGACY, [hb('c', { lastHeartbeatMs: 1 })]);
    const byAddr = Object.fromEntries(changes.map((c) => [c.workerAddr, c]));
    expect(byAddr['a']).toEqual({ type: 'remove', workerAddr: 'a' });
    expect(byAddr['b']).toMatchObject({ type: 'upsert', entry: { prefix: PROD } });
    expect(byAddr['c']).toMatchObject({ type: 'upsert', entry: { prefix: LEGACY } });
    expect(changes).toHaveLength(3);
    expect(
      v
        .merged()
        .map((h) => h.workerAddr)
        .sort(),
    ).toEqual(['b', 'c']);
    expect(v.countsByFormat()).toEqual({ legacy: 1, v2: 1 });
  });

  it('counts Workers per format, a Worker under both counting in both', () => {
    const v = view();
    v.put(LEGACY, hb('a'));
    v.put(PROD, hb('a'));
    v.put(PROD, hb('b'));
    expect(v.countsByFormat()).toEqual({ legacy: 1, v2: 2 });
  });

  it('rejects unknown, empty and duplicate prefixes with a typed error', () => {
    expect(() => view().put(TEST, hb('a'))).toThrow(CoordinatorError);
    expect(() => new PrefixMergeView([])).toThrow(/at least one/);
    expect(
      () =>
        new PrefixMergeView([
          { prefix: PROD, format: 'v2' },
          { prefix: PROD, format: 'v2' },
        ]),
    ).toThrow(/duplicate/);
    expect(view().prefixes).toEqual([LEGACY, PROD]);
  });

  it('(property) the changes replayed onto a map equal mergeHeartbeats of every current entry', () => {
    const prefixes = [LEGACY, PROD, TEST];
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('put' as const),
        prefix: fc.constantFrom(...prefixes),
        addr: fc.constantFrom('a', 'b', 'c'),
        ts: fc.integer({ min: 0, max: 3 }),
        slots: fc.integer({ min: 1, max: 3 }),
      }),
      fc.record({
        kind: fc.constant('delete' as const),
        prefix: fc.constantFrom(...prefixes),
        addr: fc.constantFrom('a', 'b', 'c'),
      }),
      fc.record({
        kind: fc.constant('replace' as const),
        prefix: fc.constantFrom(...prefixes),
        addrs: fc.uniqueArray(fc.constantFrom('a', 'b', 'c')),
        ts: fc.integer({ min: 0, max: 3 }),
      }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const v = new PrefixMergeView(prefixes.map((prefix) => ({ prefix, format: FORMAT[prefix]! })));
        const contents = new Map(prefixes.map((p) => [p, new Map<string, RegistryEntry>()]));
        const applied = new Map<string, RegistryEntry>();
        const replay = (c: MergeChange | undefined) => {
          if (c?.type === 'upsert') applied.set(c.workerAddr, c.entry);
          if (c?.type === 'remove') applied.delete(c.workerAddr);
        };
        for (const o of ops) {
          const m = contents.get(o.prefix)!;
          if (o.kind === 'put') {
            replay(v.put(o.prefix, hb(o.addr, { lastHeartbeatMs: o.ts, taskSlots: o.slots })));
            m.set(o.addr, entry(o.prefix, o.addr, o.ts, { taskSlots: o.slots }));
          } else if (o.kind === 'delete') {
            replay(v.delete(o.prefix, o.addr));
            m.delete(o.addr);
          } else {
            v.replacePrefix(
              o.prefix,
              o.addrs.map((a) => hb(a, { lastHeartbeatMs: o.ts })),
            ).forEach(replay);
            m.clear();
            for (const a of o.addrs) m.set(a, entry(o.prefix, a, o.ts));
          }
          const expected = mergeHeartbeats(prefixes.flatMap((p) => [...contents.get(p)!.values()]));
          const norm = (mm: Map<string, RegistryEntry>) =>
            [...mm.entries()]
              .map(([k, e]) => [k, e.prefix, e.heartbeat])
              .sort((x, y) => String(x[0]).localeCompare(String(y[0])));
          expect(norm(applied)).toEqual(norm(expected));
          expect(v.merged().length).toBe(expected.size);
        }
      }),
      { numRuns: 300 },
    );
  });
});
