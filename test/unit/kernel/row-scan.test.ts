// rowScan: the one scan result of plugins and functions (docs/plugins.md § What a plugin is given).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rowScan } from '../../../src/kernel/row-scan.js';

function counting<R>(rows: readonly R[]) {
  let opened = 0;
  const scan = rowScan<R>(() => {
    opened++;
    let i = 0;
    return {
      next: async () =>
        i < rows.length ? { done: false, value: rows[i++]! } : { done: true, value: undefined },
    };
  });
  return { scan, opened: () => opened };
}

describe('rowScan', () => {
  it('iterates and collects the same rows, in order, opening the scan once per pass', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer()), async (rows) => {
        const { scan, opened } = counting(rows);
        const seen: number[] = [];
        for await (const r of scan) seen.push(r);
        expect(seen).toEqual(rows);
        expect(await scan.toArray()).toEqual(rows);
        expect(opened()).toBe(2);
      }),
    );
  });

  it('passes a failure of the source to the reader', async () => {
    const scan = rowScan<number>(() => ({ next: () => Promise.reject(new Error('storage down')) }));
    await expect(scan.toArray()).rejects.toThrow('storage down');
  });
});
