// The language rule of a Worker with two executors (src/executor/core/functions-inventory.ts):
// table-driven cases and a property over random folders.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  buildFunctionsInventory,
  collisionMessage,
  languageOf,
  notFoundMessage,
  parseAnyFunctionFileName,
} from '../../../../src/executor/core/functions-inventory.js';

const files = (...names: string[]) => names.map((fileName) => ({ fileName }));

describe('parseAnyFunctionFileName', () => {
  it.each([
    ['f.ts', { name: 'f', language: 'js' }],
    ['f.mjs', { name: 'f', language: 'js' }],
    ['f.js', { name: 'f', language: 'js' }],
    ['erc20_transfers.py', { name: 'erc20_transfers', language: 'python' }],
    ['my-fn.py', { name: 'my-fn', language: 'python' }],
    ['_helper.py', { name: '_helper', language: 'python' }],
    ['__init__.py', null],
    ['x.test.py', null],
    ['x.pyc', null],
    ['.hidden.py', null],
    ['x.d.ts', null],
    ['README.md', null],
    ['1abc.py', null],
  ])('%s → %j', (fileName, expected) => {
    expect(parseAnyFunctionFileName(fileName)).toEqual(expected);
  });
});

describe('languageOf', () => {
  const cases: {
    readonly folder: string[];
    readonly name: string;
    readonly route:
      | { ok: true; language: 'js' | 'python' }
      | { ok: false; files: string[] }
      | { ok: false; missing: string };
  }[] = [
    { folder: ['a.ts', 'b.py'], name: 'a', route: { ok: true, language: 'js' } },
    { folder: ['a.ts', 'b.py'], name: 'b', route: { ok: true, language: 'python' } },
    // Unknown names where a `.py` file exists: the Worker answers FUNCTION_NOT_FOUND itself (every
    // language listed); in a JS-only folder the JS executor answers, as it always has.
    { folder: ['a.ts', 'b.py'], name: 'zzz', route: { ok: false, missing: 'zzz' } },
    { folder: ['b.py'], name: 'zzz', route: { ok: false, missing: 'zzz' } },
    { folder: ['a.ts', 'b.mjs'], name: 'zzz', route: { ok: true, language: 'js' } },
    { folder: [], name: 'a', route: { ok: true, language: 'js' } },
    // Two JS files are the JS resolver's own "keep one" error: still the JS executor's to report.
    { folder: ['a.ts', 'a.js'], name: 'a', route: { ok: true, language: 'js' } },
    { folder: ['a.ts', 'a.py'], name: 'a', route: { ok: false, files: ['a.py', 'a.ts'] } },
    { folder: ['a.mjs', 'a.js', 'a.py'], name: 'a', route: { ok: false, files: ['a.js', 'a.mjs', 'a.py'] } },
    { folder: ['a.ts', 'a.py', 'b.py'], name: 'b', route: { ok: true, language: 'python' } },
    {
      folder: ['README.md', 'a.py', '__init__.py'],
      name: '__init__',
      route: { ok: false, missing: '__init__' },
    },
  ];
  it.each(cases)('$folder / $name', ({ folder, name, route }) => {
    const got = languageOf(name, buildFunctionsInventory(files(...folder)));
    if (route.ok || 'missing' in route) expect(got).toEqual(route);
    else expect(got).toEqual({ ok: false, collision: { name, files: route.files } });
  });

  it('says whether the Python executor is needed', () => {
    expect(buildFunctionsInventory(files('a.ts', 'b.mjs')).hasPython).toBe(false);
    expect(buildFunctionsInventory(files('a.ts', 'b.py')).hasPython).toBe(true);
    expect(buildFunctionsInventory(files('__init__.py')).hasPython).toBe(false);
  });

  it('the collision message names the function, every file, the folder and the rule', () => {
    const inv = buildFunctionsInventory(files('dup.ts', 'dup.py', 'ok.py'));
    expect(inv.collisions).toEqual([{ name: 'dup', files: ['dup.py', 'dup.ts'] }]);
    expect(collisionMessage(inv.collisions[0]!, '/srv/functions')).toBe(
      'function "dup" is defined in two languages in /srv/functions: dup.py, dup.ts; ' +
        'one name may be defined by one language only: keep one',
    );
  });
});

describe('languageOf (property)', () => {
  const name = fc.constantFrom('a', 'b', 'c', 'hello_world', 'x-y', '_h');
  const ext = fc.constantFrom('.ts', '.mjs', '.js', '.py');
  const folder = fc.uniqueArray(
    fc.tuple(name, ext).map(([n, e]) => `${n}${e}`),
    { maxLength: 16 },
  );

  it('every name resolves to exactly one language, a collision naming all its files, or a missing name', () => {
    fc.assert(
      fc.property(folder, name, (fileNames, asked) => {
        const inv = buildFunctionsInventory(files(...fileNames));
        const mine = fileNames.filter((f) => parseAnyFunctionFileName(f)?.name === asked);
        const langs = new Set(mine.map((f) => parseAnyFunctionFileName(f)!.language));
        const route = languageOf(asked, inv);
        if (langs.size === 2) {
          expect(route).toEqual({ ok: false, collision: { name: asked, files: [...mine].sort() } });
        } else if (langs.size === 1) {
          expect(route).toEqual({ ok: true, language: [...langs][0] });
        } else {
          expect(route).toEqual(inv.hasPython ? { ok: false, missing: asked } : { ok: true, language: 'js' });
        }
        // A name is in exactly one of the two tables.
        const inLanguages = inv.languages.has(asked);
        const inCollisions = inv.collisions.some((c) => c.name === asked);
        expect(Number(inLanguages) + Number(inCollisions)).toBe(mine.length > 0 ? 1 : 0);
        expect(inv.hasPython).toBe(fileNames.some((f) => f.endsWith('.py')));
      }),
    );
  });
});

describe('notFoundMessage', () => {
  it.each([
    [
      ['hello_world.py', 'greet_both.ts', 'erc20_transfers.py', 'x.mjs', 'README.md'],
      'available: erc20_transfers (Python), greet_both (JS), hello_world (Python), x (JS)',
    ],
    [['a.ts', 'a.py', 'b.py'], 'available: a (JS and Python: keep one), b (Python)'],
    [[], 'available: none'],
  ])('%j → %s', (folder, listing) => {
    const message = notFoundMessage('nope', buildFunctionsInventory(files(...folder)), '/fns', 'e1');
    expect(message).toBe(
      'function "nope" not found in /fns (code epoch e1); expected nope.ts, nope.mjs, nope.js or nope.py; ' +
        listing,
    );
  });
});
