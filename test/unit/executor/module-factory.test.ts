// module-factory.ts: a function module becomes a module whose factory makes fresh instances of it. Each
// row is a module text; the instance module is written to a temp folder (beside the helper modules it
// imports) and imported, and two instances are compared.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { INSTANTIATE_EXPORT, instanceModuleSource } from '../../../src/executor/module-factory.js';

const dir = mkdtempSync(join(tmpdir(), 'bx-module-factory-'));
writeFileSync(
  join(dir, 'dep.mjs'),
  'export let live = 1;\nexport const bump = () => ++live;\nexport default "dep";\n',
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let seq = 0;
async function instantiate(source: string): Promise<{ make: () => unknown; async: boolean; code: string }> {
  const r = instanceModuleSource(source);
  if (!r.ok) throw new Error(r.message);
  const file = join(dir, `m${++seq}.mjs`);
  writeFileSync(file, r.code);
  const mod = (await import(pathToFileURL(file).href)) as Record<string, () => unknown>;
  return { make: mod[INSTANTIATE_EXPORT]!, async: r.async, code: r.code };
}

describe('exports of an instance', () => {
  it.each([
    [
      'export const / let / destructuring',
      'export const a = 1, { b, c: [d = 4] } = { b: 2, c: [] };\nexport let e = 5;',
      { a: 1, b: 2, d: 4, e: 5 },
    ],
    [
      'export function and class',
      'export function f() { return 1; }\nexport class C {}',
      { f: 'function f', C: 'function C' },
    ],
    ['named default function', 'export default function main() {}', { default: 'function main' }],
    [
      'anonymous default function keeps the name "default"',
      'export default async function () {}',
      { default: 'function default' },
    ],
    ['default arrow', 'export default (x) => x;', { default: 'function default' }],
    ['default expression', 'export default 6 * 7;', { default: 42 }],
    ['default class', 'export default class {}', { default: 'function default' }],
    [
      'export list, renamed, as default',
      'const x = 1, y = 2;\nexport { x, y as z, x as default };',
      { x: 1, z: 2, default: 1 },
    ],
    ['an imported binding re-exported', "import dep from './dep.mjs';\nexport { dep };", { dep: 'dep' }],
    [
      'export … from',
      "export { default as d, live } from './dep.mjs';\nexport * as ns from './dep.mjs';",
      { d: 'dep', live: 1, ns: 'object' },
    ],
    [
      'export * from (no default)',
      "export * from './dep.mjs';\nexport const live = 'own wins';",
      { bump: 'function bump', live: 'own wins' },
    ],
  ])('%s', async (_name, source, expected) => {
    const { make } = await instantiate(source);
    const exports = make() as Record<string, unknown>;
    const shown = Object.fromEntries(
      Object.keys(exports).map((k) => {
        const v = exports[k];
        if (typeof v === 'function') return [k, `function ${v.name}`];
        return [k, v !== null && typeof v === 'object' ? 'object' : v];
      }),
    );
    expect(shown).toEqual(expected);
  });
});

describe('instances', () => {
  it('each call runs the module again: fresh module-scope state', async () => {
    const { make } = await instantiate('let n = 0;\nexport default () => ++n;');
    const one = (make() as { default: () => number }).default;
    const two = (make() as { default: () => number }).default;
    expect([one(), one(), two(), one()]).toEqual([1, 2, 1, 3]);
  });

  it('imports are shared and live: bindings, not copies', async () => {
    const { make } = await instantiate(
      "import { live, bump } from './dep.mjs';\nexport default () => live;\nexport { bump };",
    );
    const a = make() as { default: () => number; bump: () => number };
    const before = a.default();
    a.bump();
    expect((make() as { default: () => number }).default()).toBe(before + 1);
  });

  it('top-level await makes an async factory', async () => {
    const { make, async } = await instantiate('const x = await Promise.resolve(7);\nexport default () => x;');
    expect(async).toBe(true);
    const exports = (await make()) as { default: () => number };
    expect(exports.default()).toBe(7);
  });

  it.each([
    ['await in a function only', 'export default async () => await 1;'],
    ['await in a method', 'export class C { async m() { await 1; } }'],
  ])('no top-level await (%s): a plain factory', async (_name, source) => {
    expect(instanceModuleSource(source)).toMatchObject({ ok: true, async: false });
  });

  it('a hashbang line is dropped', async () => {
    const { make } = await instantiate('#!/usr/bin/env node\nexport default 1;');
    expect((make() as { default: number }).default).toBe(1);
  });
});

describe('lines stay where they were (the compiler source map applies)', () => {
  it('every line but the first keeps its number and text, once export keywords are gone', () => {
    const source = [
      "import dep from './dep.mjs';",
      'export const a = 1;',
      'function helper() {',
      '  throw new Error("line 4");',
      '}',
      'export default function main() { return helper(); }',
      'export { helper };',
      '//# sourceMappingURL=data:application/json;base64,e30=',
    ].join('\n');
    const r = instanceModuleSource(source);
    expect(r.ok).toBe(true);
    const out = r.ok ? r.code.split('\n') : [];
    expect(out.slice(1, 6).map((l) => l.trim())).toEqual([
      'const a = 1;',
      'function helper() {',
      'throw new Error("line 4");',
      '}',
      'function main() { return helper(); }',
    ]);
    expect(out.at(-1)).toBe('//# sourceMappingURL=data:application/json;base64,e30=');
  });
});

it('a syntax error is a failure with line and column', () => {
  expect(instanceModuleSource('export default 1 +;')).toEqual({
    ok: false,
    message: expect.stringMatching(/\(1:18\)/),
  });
});
