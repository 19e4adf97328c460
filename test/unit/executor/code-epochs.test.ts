import { mkdtempSync, rmSync, utimesSync, writeFileSync, unlinkSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { computeEpochId, FunctionCodeView } from '../../../src/executor/code-epochs.js';
import { EpochUnknownError, FunctionsDirError } from '../../../src/executor/errors.js';
import { FunctionCompiler } from '../../../src/executor/function-compiler.js';
import { parseFunctionFileName } from '../../../src/executor/function-source.js';

let dir: string;
let now: number;
const view = (ttlMs = 0) => new FunctionCodeView({ dir, ttlMs, clock: () => now });
const write = (file: string, body: string) => writeFileSync(join(dir, file), body);

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'bx-epochs-'));
  now = 1_000;
  write('a.ts', 'export default () => "a1";\n');
  write('b.mjs', 'export default () => "b";\n');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('function file names', () => {
  it.each([
    ['hello_world.ts', { name: 'hello_world', ext: '.ts' }],
    ['x-1.mjs', { name: 'x-1', ext: '.mjs' }],
    ['plain.js', { name: 'plain', ext: '.js' }],
    ['types.d.ts', null],
    ['x.test.ts', null],
    ['.hidden.ts', null],
    ['README.md', null],
    ['1abc.ts', null],
  ])('%s → %j', (file, expected) => {
    expect(parseFunctionFileName(file)).toEqual(expected);
  });
});

describe('FunctionCodeView', () => {
  it('gives the same epoch for the same content, in any process (content hash)', async () => {
    const v = view();
    const e1 = await v.currentEpoch();
    const e2 = await view().currentEpoch();
    expect(e1).toMatch(/^[0-9a-f]{16}$/);
    expect(e2).toBe(e1);
    expect(computeEpochId(v.snapshot(e1)!.files)).toBe(e1);
  });

  it('changes the epoch when a file is edited, added or removed, not when one is touched', async () => {
    const v = view();
    const e1 = await v.currentEpoch();
    utimesSync(join(dir, 'a.ts'), new Date(5_000_000), new Date(5_000_000));
    expect(await v.currentEpoch()).toBe(e1);
    write('a.ts', 'export default () => "a2";\n');
    const e2 = await v.currentEpoch();
    expect(e2).not.toBe(e1);
    write('c.js', 'export default () => "c";\n');
    const e3 = await v.currentEpoch();
    expect(new Set([e1, e2, e3]).size).toBe(3);
    unlinkSync(join(dir, 'c.js'));
    expect(await v.currentEpoch()).toBe(e2);
  });

  it('ignores files that are not functions', async () => {
    const v = view();
    const e1 = await v.currentEpoch();
    write('README.md', 'docs');
    write('types.d.ts', 'export type X = 1;');
    write('.scratch.ts', 'x');
    mkdirSync(join(dir, 'lib.ts')); // a directory named like a function file
    expect(await v.currentEpoch()).toBe(e1);
    expect(v.snapshot(e1)!.files.map((f) => f.fileName)).toEqual(['a.ts', 'b.mjs']);
  });

  it('keeps a pinned epoch loadable with its old code after an edit', async () => {
    const v = view();
    const old = await v.pinCurrent();
    write('a.ts', 'export default () => "a2";\n');
    const next = await v.currentEpoch();
    expect(next).not.toBe(old);
    expect(v.snapshot(old)!.files.find((f) => f.name === 'a')!.source).toContain('"a1"');
    expect(v.snapshot(next)!.files.find((f) => f.name === 'a')!.source).toContain('"a2"');

    const compiler = new FunctionCompiler();
    const oldModule = await compiler.compile(v.snapshot(old)!, 'a');
    const newModule = await compiler.compile(v.snapshot(next)!, 'a');
    expect(oldModule.ok && oldModule.code).toContain('"a1"');
    expect(newModule.ok && newModule.code).toContain('"a2"');
    expect(oldModule.ok && oldModule.url).toContain(`?blockx-epoch=${old}`);
  });

  it('retires an epoch when it is neither current nor pinned, and tells listeners once', async () => {
    const v = view();
    const retired: string[] = [];
    v.onRetire((e) => retired.push(e));
    const e1 = await v.pinCurrent();
    v.pin(e1);
    write('a.ts', 'export default () => "a2";\n');
    const e2 = await v.currentEpoch();
    v.unpin(e1);
    expect(retired).toEqual([]);
    v.unpin(e1);
    expect(retired).toEqual([e1]);
    expect(v.snapshot(e1)).toBeUndefined();
    expect(() => v.pin(e1)).toThrow(EpochUnknownError);
    v.unpin(e1); // unpinning again is a no-op
    expect(retired).toEqual([e1]);
    // An unpinned epoch is retired as soon as it stops being current.
    write('a.ts', 'export default () => "a3";\n');
    await v.currentEpoch();
    expect(retired).toEqual([e1, e2]);
  });

  it('does not retire the current epoch when its last pin goes', async () => {
    const v = view();
    const retired: string[] = [];
    v.onRetire((e) => retired.push(e));
    const e1 = await v.pinCurrent();
    v.unpin(e1);
    expect(retired).toEqual([]);
    expect(v.snapshot(e1)).toBeDefined();
    expect(v.epochs()).toEqual([{ epoch: e1, pins: 0, current: true }]);
  });

  it('restats the directory at most once per ttl', async () => {
    const v = view(250);
    const e1 = await v.currentEpoch();
    write('a.ts', 'export default () => "changed";\n');
    now += 249;
    expect(await v.currentEpoch()).toBe(e1);
    now += 1;
    expect(await v.currentEpoch()).not.toBe(e1);
  });

  it('fails with the directory named when it cannot be read', async () => {
    const v = new FunctionCodeView({ dir: join(dir, 'nope') });
    await expect(v.currentEpoch()).rejects.toBeInstanceOf(FunctionsDirError);
    await expect(v.currentEpoch()).rejects.toThrow(join(dir, 'nope'));
  });

  it('computes an order-independent id', () => {
    const a = { name: 'a', fileName: 'a.ts', source: 'A' };
    const b = { name: 'b', fileName: 'b.ts', source: 'B' };
    expect(computeEpochId([a, b])).toBe(computeEpochId([b, a]));
    expect(computeEpochId([a, b])).not.toBe(computeEpochId([a, { ...b, source: 'B2' }]));
  });
});
