// The layers of docs/architecture.md § Code layout, checked on the import arrows of src/ (read from the
// files, no module loading): contracts at the bottom, then the kernel, the services (each split
// core ← adapters ← app), the app layer that assembles processes, and the CLI on top.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const REPO = path.resolve(import.meta.dirname, '../..');
const SRC = path.join(REPO, 'src');

/** Every .ts file under src/ (generated proto types excluded), repo-relative with `/`. */
function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'generated' ? [] : sourceFiles(full);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [rel(full)] : [];
  });
}

const rel = (p: string) => path.relative(REPO, p).split(path.sep).join('/');

/** Static, dynamic and re-export specifiers of one file, comments removed first. */
export function importSpecifiers(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const found: string[] = [];
  const re =
    /\b(?:import|export)\s[^;'"]*?\bfrom\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)|\bimport\s+['"]([^'"]+)['"]/g;
  for (const m of code.matchAll(re)) found.push((m[1] ?? m[2] ?? m[3]) as string);
  return found;
}

interface Arrow {
  readonly from: string;
  readonly to: string;
}

/** Arrows from a src file to another src file (bare package imports are left out). */
function arrows(): Arrow[] {
  return sourceFiles().flatMap((from) =>
    importSpecifiers(readFileSync(path.join(REPO, from), 'utf8'))
      .filter((s) => s.startsWith('.'))
      .map((s) => ({ from, to: rel(path.resolve(REPO, path.dirname(from), s)).replace(/\.js$/, '.ts') })),
  );
}

const ALL = arrows();
const show = (list: readonly Arrow[]) => list.map((a) => `${a.from} → ${a.to}`);
const under = (file: string, dir: string) => file.startsWith(`src/${dir}/`);
/** `src/services/<service>/<layer>/…` → [service, layer]; layer '' for files directly in the service. */
function serviceOf(file: string): [string, string] | undefined {
  const m = /^src\/services\/([^/]+)\/(?:(core|adapters|app)\/)?/.exec(file);
  return m ? [m[1] as string, m[2] ?? ''] : undefined;
}

/**
 * Arrows that break a rule below and are still to be removed: this list may only shrink. Empty: every
 * arrow follows the layers.
 */
const ALLOWED: readonly string[] = [];

/** The call host (src/services/call-host/, docs/architecture.md § Where the code lives). */
const CALL_HOST = 'src/services/call-host/';

/**
 * What the call host uses of the Worker: the ports it implements (`CallPhaseRunner`, `CodeEpochSource`,
 * `ExecutorReadiness`) and the pieces those ports share with the Worker's own defaults. Nothing else.
 */
const CALL_HOST_USES_OF_WORKER: readonly string[] = [
  'src/services/worker/adapters/ports.ts',
  'src/services/worker/adapters/default-ports.ts',
  'src/services/worker/adapters/errors.ts',
  'src/services/worker/adapters/phase-results.ts',
  'src/services/worker/adapters/worker-logger.ts',
  'src/services/worker/core/functions-inventory.ts',
];

function violations(rule: (a: Arrow) => boolean): string[] {
  return show(ALL.filter(rule)).filter((a) => !ALLOWED.includes(a));
}

describe('import arrows follow the layers', () => {
  it('reads the imports it checks (the test sees the real tree)', () => {
    expect(ALL.length).toBeGreaterThan(500);
    expect(
      importSpecifiers("import a from './a.js';\nexport { b } from \"./b.js\";\nawait import('./c.js');"),
    ).toEqual(['./a.js', './b.js', './c.js']);
    expect(importSpecifiers("// import x from './commented.js'\n/* import y from './y.js' */")).toEqual([]);
  });

  it('the kernel imports no service, app or CLI module', () => {
    expect(
      violations((a) => under(a.from, 'kernel') && ['services', 'app', 'cli'].some((d) => under(a.to, d))),
    ).toEqual([]);
  });

  it('contracts import only contracts and the kernel base error class', () => {
    expect(
      violations(
        (a) => under(a.from, 'contracts') && !under(a.to, 'contracts') && a.to !== 'src/kernel/errors.ts',
      ),
    ).toEqual([]);
  });

  it('services import neither the app layer nor the CLI', () => {
    expect(
      violations((a) => under(a.from, 'services') && (under(a.to, 'app') || under(a.to, 'cli'))),
    ).toEqual([]);
  });

  it("a core imports no adapters or app, and no other service's modules (contracts instead)", () => {
    expect(
      violations((a) => {
        const from = serviceOf(a.from);
        if (from?.[1] !== 'core') return false;
        const to = serviceOf(a.to);
        if (to === undefined) return under(a.to, 'app') || under(a.to, 'cli');
        return to[0] !== from[0] || to[1] !== 'core';
      }),
    ).toEqual([]);
  });

  it("a service's adapters do not import its app", () => {
    expect(
      violations((a) => {
        const from = serviceOf(a.from);
        const to = serviceOf(a.to);
        return from?.[1] === 'adapters' && to?.[0] === from[0] && to[1] === 'app';
      }),
    ).toEqual([]);
  });

  it('outside the call host, src/ imports it only through its index', () => {
    expect(
      violations(
        (a) => !a.from.startsWith(CALL_HOST) && a.to.startsWith(CALL_HOST) && a.to !== `${CALL_HOST}index.ts`,
      ),
    ).toEqual([]);
  });

  it('the call host imports of the Worker only the ports it implements and what they share', () => {
    expect(
      violations(
        (a) =>
          a.from.startsWith(CALL_HOST) &&
          a.to.startsWith('src/services/worker/') &&
          !CALL_HOST_USES_OF_WORKER.includes(a.to),
      ),
    ).toEqual([]);
  });

  it('the call host is a service of its own: its core is checked by the core rule above', () => {
    const callHostCore = ALL.filter((a) => a.from.startsWith(`${CALL_HOST}core/`));
    expect(callHostCore.length).toBeGreaterThan(20);
    expect(
      callHostCore.map((a) => a.from).filter((f) => serviceOf(f)?.join('/') !== 'call-host/core'),
    ).toEqual([]);
  });

  it('the app layer does not import the CLI', () => {
    expect(violations((a) => under(a.from, 'app') && under(a.to, 'cli'))).toEqual([]);
  });

  it('the allow-list names only arrows that still exist (it shrinks as they go)', () => {
    const existing = new Set(show(ALL));
    expect(ALLOWED.filter((a) => !existing.has(a))).toEqual([]);
  });
});
