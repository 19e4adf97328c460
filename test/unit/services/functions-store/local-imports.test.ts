// localImports (src/services/functions-store/local-imports.ts): which imports of a bundle resolve from a
// Worker's own folder instead of the deployed version.
import { describe, expect, it } from 'vitest';
import { localImports } from '../../../../src/services/functions-store/local-imports.js';

const js = (source: string) => [{ fileName: 'f.ts', source }];
const py = (source: string) => [{ fileName: 'f.py', source }];

describe('localImports', () => {
  it.each<[string, { fileName: string; source: string }[], string[], string[]]>([
    ['a static relative import', js("import { x } from './helpers.js';\n"), [], ['./helpers.js']],
    ['a parent-folder import', js("import y from '../shared/y.ts';\n"), [], ['../shared/y.ts']],
    ['a side-effect import', js("import './setup.js';\n"), [], ['./setup.js']],
    ['a dynamic import', js("const m = await import( './lazy.mjs');\n"), [], ['./lazy.mjs']],
    ['a require', js("const z = require('./z.cjs');\n"), [], ['./z.cjs']],
    ['a re-export', js("export { a } from './a.js';\n"), [], ['./a.js']],
    [
      'bare and node: imports are not local',
      js("import yaml from 'yaml';\nimport fs from 'node:fs';\n"),
      [],
      [],
    ],
    [
      'python: a relative from-import',
      py('from . import helpers\nfrom .util import f\n'),
      [],
      ['.', '.util'],
    ],
    ['python: a sibling module', py('import helpers, json\n'), ['helpers.py', 'f.py'], ['helpers']],
    ['python: a sibling package, dotted', py('from pkg.sub import g\n'), ['pkg'], ['pkg.sub']],
    ['python: the standard library is not local', py('import json\nfrom typing import Any\n'), ['f.py'], []],
  ])('%s', (_name, files, siblings, specifiers) => {
    expect(localImports(files, siblings).map((i) => i.specifier)).toEqual(specifiers);
  });

  it('names the file each import is in', () => {
    const found = localImports(
      [
        { fileName: 'a.ts', source: "import './x.js';\n" },
        { fileName: 'b.py', source: 'from .y import z\n' },
      ],
      [],
    );
    expect(found).toEqual([
      { fileName: 'a.ts', specifier: './x.js' },
      { fileName: 'b.py', specifier: '.y' },
    ]);
  });
});
