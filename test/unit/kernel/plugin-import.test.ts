// Which file a built-in plugin is imported from (src/kernel/plugin-import.ts compiledBuiltin): its build
// under dist/plugins/ when BlockX runs from dist/ and that build is current, its TypeScript otherwise.
// A package root of files made here, with the modification times set by hand.
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compiledBuiltin } from '../../../src/kernel/plugin-import.js';

let root: string;
const src = (...p: string[]) => path.join(root, 'plugins', 'builders', 'x', 'src', ...p);
const built = (...p: string[]) => path.join(root, 'dist', 'plugins', 'builders', 'x', 'src', ...p);

function file(p: string, secondsAfterEpoch: number): void {
  mkdirSync(path.dirname(p), { recursive: true });
  writeFileSync(p, '');
  utimesSync(p, secondsAfterEpoch, secondsAfterEpoch);
}

beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'blockx-plugin-import-'));
  file(src('index.ts'), 1000);
  file(src('errors.ts'), 1000);
  file(built('index.js'), 2000);
  file(built('errors.js'), 2000);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('compiledBuiltin', () => {
  const cases: [string, () => void, boolean, boolean?][] = [
    ['a build newer than every source beside the entry', () => undefined, true],
    [
      'a build as old as its sources (a packed install sets one time on all)',
      () => file(built('errors.js'), 1000),
      true,
    ],
    ['from the TypeScript sources (tests, tsx): never the build', () => undefined, false, true],
    ['a source edited after the build', () => file(src('errors.ts'), 3000), false],
    ['a source the build does not have', () => file(src('new-part.ts'), 500), false],
    ['no build at all', () => void rmSync(path.join(root, 'dist'), { recursive: true }), false],
  ];
  it.each(cases)('%s', (_what, change, expected, fromSources = false) => {
    change();
    expect(compiledBuiltin(src('index.ts'), root, fromSources)).toBe(
      expected ? built('index.js') : undefined,
    );
  });

  it('only for TypeScript files under the package plugins/ folder', () => {
    file(path.join(root, 'elsewhere', 'index.ts'), 1000);
    expect(compiledBuiltin(path.join(root, 'elsewhere', 'index.ts'), root, false)).toBeUndefined();
    file(src('plain.js'), 1000);
    expect(compiledBuiltin(src('plain.js'), root, false)).toBeUndefined();
    expect(compiledBuiltin('/other/plugins/builders/x/src/index.ts', root, false)).toBeUndefined();
  });
});
