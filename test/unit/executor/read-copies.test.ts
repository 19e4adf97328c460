import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ReadCopies, deepFreeze, readCopyHits, readCopyKey } from '../../../src/executor/read-copies.js';

const get = (key: unknown, table = 'accounts') => ({ kind: 'io', op: 'get', table, key }) as const;
const tick = () => new Promise((r) => setImmediate(r));

describe('readCopyKey', () => {
  it.each([
    ['get keys in any column order are one entry', get({ a: 1, b: 2 }), get({ b: 2, a: 1 }), true],
    ['tables differ', get({ a: 1 }, 't1'), get({ a: 1 }, 't2'), false],
    ['values differ by type', get({ a: 1 }), get({ a: '1' }), false],
    [
      'get and a one-key getMany differ',
      get({ a: 1 }),
      { kind: 'io', op: 'getMany', table: 'accounts', keys: [{ a: 1 }] } as const,
      false,
    ],
  ])('%s', (_name, a, b, same) => {
    expect(readCopyKey(a) === readCopyKey(b)).toBe(same);
  });

  it('scans and keys JSON cannot hold are not copied', () => {
    expect(readCopyKey({ kind: 'io', op: 'scan', table: 'accounts', options: {} })).toBeUndefined();
    expect(readCopyKey(get({ n: 1n }))).toBeUndefined();
  });

  it('counts a hit per key', () => {
    expect(readCopyHits(get('a'))).toBe(1);
    expect(readCopyHits({ kind: 'io', op: 'getMany', table: 't', keys: ['a', 'b', 'a'] })).toBe(3);
  });
});

describe('ReadCopies', () => {
  it('keeps an answer, frozen, for its scope only', async () => {
    const copies = new ReadCopies(10);
    const answer = await copies.track('s1', 'k', Promise.resolve({ id: 'a', nested: { n: 1 } }));
    expect(Object.isFrozen(answer)).toBe(true);
    expect(Object.isFrozen((answer as { nested: object }).nested)).toBe(true);
    expect(copies.lookup('s1', 'k')).toMatchObject({ settled: true, value: answer });
    expect(copies.lookup('s2', 'k')).toBeUndefined();
    expect(copies.size).toBe(1);
  });

  it('shares a read in flight, then forgets it if it fails', async () => {
    const copies = new ReadCopies(10);
    let fail!: (e: Error) => void;
    const read = copies.track('s', 'k', new Promise((_r, reject) => (fail = reject)));
    const inFlight = copies.lookup('s', 'k');
    expect(inFlight?.settled).toBe(false);
    fail(new Error('reset'));
    await expect(read).rejects.toThrow('reset');
    await expect(inFlight!.read).rejects.toThrow('reset');
    await tick();
    expect(copies.lookup('s', 'k')).toBeUndefined();
    expect(copies.size).toBe(0);
  });

  it('drop forgets a scope and frees its room, even with a read still in flight', async () => {
    const copies = new ReadCopies(2);
    await copies.track('s', 'a', Promise.resolve(1));
    let fail!: (e: Error) => void;
    const pending = copies.track('s', 'b', new Promise((_r, reject) => (fail = reject)));
    copies.drop('s');
    expect(copies.size).toBe(0);
    await copies.track('t', 'a', Promise.resolve(2));
    fail(new Error('late'));
    await expect(pending).rejects.toThrow('late');
    await tick();
    expect(copies.size).toBe(1); // the dropped scope's late failure did not touch the count
    expect(copies.lookup('t', 'a')).toMatchObject({ settled: true, value: 2 });
  });

  it('weighs a getMany answer by its keys: one large getMany cannot hold more rows than the bound', async () => {
    const copies = new ReadCopies(5);
    await copies.track('s', 'many-4', Promise.resolve([1, 2, 3, 4]), 4);
    expect(copies.size).toBe(4);
    expect(await copies.track('s', 'many-2', Promise.resolve([5, 6]), 2)).toEqual([5, 6]);
    expect(copies.lookup('s', 'many-2')).toBeUndefined(); // 4 + 2 > 5: not kept
    await copies.track('s', 'one', Promise.resolve(7)); // 4 + 1 = 5: kept
    expect(copies.size).toBe(5);
    copies.drop('s');
    expect(copies.size).toBe(0);
  });

  it('past its bound it answers without keeping; 0 keeps nothing', async () => {
    const copies = new ReadCopies(1);
    await copies.track('s', 'a', Promise.resolve(1));
    expect(await copies.track('s', 'b', Promise.resolve(2))).toBe(2);
    expect(copies.lookup('s', 'b')).toBeUndefined();
    const off = new ReadCopies(0);
    expect(off.enabled).toBe(false);
    expect(await off.track('s', 'a', Promise.resolve(3))).toBe(3);
    expect(off.size).toBe(0);
  });

  it('never holds more rows than its bound, and its count is what it holds (property)', async () => {
    const op = fc.oneof(
      fc.record({
        t: fc.constant('track' as const),
        scope: fc.integer({ min: 0, max: 3 }),
        key: fc.integer({ min: 0, max: 5 }),
        ok: fc.boolean(),
        weight: fc.integer({ min: 1, max: 3 }),
      }),
      fc.record({ t: fc.constant('drop' as const), scope: fc.integer({ min: 0, max: 3 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 6 }), fc.array(op, { maxLength: 40 }), async (max, ops) => {
        const copies = new ReadCopies(max);
        const reads: Promise<unknown>[] = [];
        for (const o of ops) {
          if (o.t === 'drop') copies.drop(`s${o.scope}`);
          else if (copies.lookup(`s${o.scope}`, `k${o.key}`) === undefined)
            reads.push(
              copies
                .track(
                  `s${o.scope}`,
                  `k${o.key}`,
                  o.ok ? Promise.resolve({ key: o.key, weight: o.weight }) : Promise.reject(new Error('x')),
                  o.weight,
                )
                .catch(() => undefined),
            );
          expect(copies.size).toBeLessThanOrEqual(max);
        }
        await Promise.all(reads);
        await tick();
        let held = 0;
        for (let s = 0; s <= 3; s++)
          for (let k = 0; k <= 5; k++) {
            const c = copies.lookup(`s${s}`, `k${k}`);
            if (c === undefined) continue;
            expect(c).toMatchObject({ settled: true, value: { key: k } }); // failures are never kept
            held += (c.value as { weight: number }).weight;
          }
        expect(copies.size).toBe(held); // the rows held, each answer weighed by its keys
      }),
    );
  });
});

describe('deepFreeze', () => {
  it('freezes arrays and nested objects, and leaves scalars', () => {
    const v = deepFreeze([{ a: [1, { b: 2 }] }]);
    expect(Object.isFrozen(v[0]!.a[1])).toBe(true);
    expect(deepFreeze(null)).toBeNull();
    expect(deepFreeze(5)).toBe(5);
  });
});
