// Docs name files of the repository; a name that outlives its file sends a reader nowhere. This test reads
// every doc — docs/**, every README.md, test/README.md — and fails on a repository path that does not
// exist: a path starting with one of the top folders below (`src/…`, `test/…`, …, with `{a,b}` expanded
// and a `:line` suffix dropped) and every relative Markdown link (resolved from the doc's folder).
// Patterns (`*`, `<name>`, `…`) name no one file and are left alone.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const REPO = path.resolve(import.meta.dirname, '../..');
const TOP = ['src', 'test', 'bench', 'plugins', 'proto', 'scripts', 'docs'];
const SKIP_DIRS = new Set(['node_modules', 'dist', '.git', 'coverage', '.blockx', '.work']);

/** docs/**\/*.md and every README.md of the repository, repo-relative. */
function docs(dir = REPO): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    const rel = path.relative(REPO, full);
    if (e.isDirectory()) return SKIP_DIRS.has(e.name) ? [] : docs(full);
    if (!e.name.endsWith('.md')) return [];
    return e.name === 'README.md' || rel.startsWith(`docs${path.sep}`) ? [rel] : [];
  });
}

/** `a/{b,c}/d` → `a/b/d`, `a/c/d` (nested braces too). */
export function expandBraces(p: string): string[] {
  const m = /\{([^{}]*)\}/.exec(p);
  if (!m) return [p];
  return m[1]!
    .split(',')
    .flatMap((alt) => expandBraces(p.slice(0, m.index) + alt + p.slice(m.index + m[0].length)));
}

/**
 * Paths a doc names that are not files of the repository, on purpose: the plugin a reader writes in the
 * README's walkthrough, the one `blockx init` writes into a new project, and the folder the benches
 * install peers into at run time.
 */
const NOT_REPOSITORY_FILES = new Set([
  'plugins/builders/every-block/package.json',
  'plugins/builders/every-block/schema.json',
  'plugins/builders/every-block/src/index.ts',
  'src/index.js', // that plugin's package.json "main" (docs/plugins.md)
  'bench/.work/',
  // the writer plugin `blockx init` puts into a new project (docs/getting-started.md, examples/init/)
  'plugins/jsonl-writer/',
]);

const PATH_RE = new RegExp(`(?<![\\w./@-])(?:${TOP.join('|')})/[\\w./{},*<>…+-]*`, 'g');
const LINK_RE = /\]\(([^)\s]+)\)/g;
const isPattern = (p: string) => /[*<>…]|\.\.\.|\$\{/.test(p);
/** A path as written, cleaned of what follows it in prose: punctuation, `:line`. */
const clean = (p: string) => p.replace(/:\d+(?:-\d+)?$/, '').replace(/[.,;:)]+$/, '');

export function pathsIn(text: string): string[] {
  return [...text.matchAll(PATH_RE)].map((m) => clean(m[0])).filter((p) => p.includes('/') && !isPattern(p));
}

export function linksIn(text: string): string[] {
  return [...text.matchAll(LINK_RE)]
    .map((m) => m[1]!.replace(/#.*$/, ''))
    .filter((l) => l !== '' && !/^[a-z][a-z0-9+.-]*:/i.test(l) && !isPattern(l));
}

describe('file paths named in the docs exist', () => {
  const all = docs();

  it('reads the docs (the test sees the real tree)', () => {
    expect(all).toEqual(
      expect.arrayContaining([
        'README.md',
        path.join('test', 'README.md'),
        path.join('docs', 'architecture.md'),
      ]),
    );
    expect(pathsIn('see `src/a/{b,c}.ts:12`, and src/x/*.ts')).toEqual(['src/a/{b,c}.ts']);
    expect(expandBraces('src/a/{b,c}.ts')).toEqual(['src/a/b.ts', 'src/a/c.ts']);
    expect(linksIn('[a](../b.md#x) [c](https://e.org) [d](#top)')).toEqual(['../b.md']);
  });

  it('every repository path and relative link in a doc names a file or folder that exists', () => {
    const missing: string[] = [];
    for (const doc of all) {
      const lines = readFileSync(path.join(REPO, doc), 'utf8').split('\n');
      lines.forEach((line, i) => {
        for (const p of pathsIn(line).flatMap(expandBraces))
          if (!NOT_REPOSITORY_FILES.has(p) && !existsSync(path.join(REPO, p)))
            missing.push(`${doc}:${i + 1}: ${p}`);
        for (const l of linksIn(line).flatMap(expandBraces))
          if (!existsSync(path.resolve(REPO, path.dirname(doc), decodeURI(l))))
            missing.push(`${doc}:${i + 1}: (${l})`);
      });
    }
    expect(missing).toEqual([]);
  });
});
