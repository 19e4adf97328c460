// The layers of docs/architecture.md § Layers, checked on the import arrows of src/ (read from the files,
// no module loading): contracts at the bottom, then the kernel, gRPC, the executor, the services (each
// split core ← adapters ← app), the client, the app layer that assembles processes, and the CLI on top.
// One table (EDGES) says which folder of src/ may import which; every folder has a row, so a new folder
// is a question this test asks. The finer rules below it cover what a folder-to-folder table cannot.
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

/** The folder of src/ a file belongs to: `services/<name>` for a service, `entry` for the files directly in src/. */
function folderOf(file: string): string {
  const parts = file.split('/');
  if (parts.length === 2) return 'entry';
  return parts[1] === 'services' ? `services/${parts[2]}` : (parts[1] as string);
}

/**
 * Which folder of src/ may import which (besides itself): the one table of allowed edges. `entry` is the
 * package's entry points directly in src/ (`index.ts`, `function.ts`, `plugin.ts`). A row lists what is
 * imported today and may be; an edge not listed fails the test, and so does a listed edge no file uses.
 */
const EDGES: Readonly<Record<string, readonly string[]>> = {
  contracts: ['kernel'], // the base error class only (rule below)
  kernel: ['contracts'],
  generated: [], // proto stubs, generated
  grpc: ['contracts', 'generated', 'kernel'],
  executor: ['kernel'],
  // the follow cores only (rule below)
  client: ['contracts', 'generated', 'grpc', 'kernel', 'services/follow', 'services/ingest-follow'],
  'services/registry': ['contracts', 'kernel'],
  'services/storage': ['contracts', 'kernel'],
  // core: the base error class; adapters: the job tables, and the etcd client for job leases
  'services/follow': ['contracts', 'kernel', 'services/registry', 'services/storage'],
  'services/ingest-follow': ['kernel'],
  'services/dashboard': ['contracts', 'kernel'],
  'services/chain-rpc': ['kernel'],
  'services/functions-store': ['contracts', 'executor', 'kernel'],
  // below the Worker: it declares the ports it implements (call-host/ports.ts), the Worker imports them
  'services/call-host': ['contracts', 'executor', 'kernel'],
  'services/worker': [
    'contracts',
    'executor',
    'generated',
    'grpc',
    'kernel',
    'services/call-host', // its index only (rule below)
    'services/functions-store',
    'services/registry',
    'services/storage',
  ],
  'services/coordinator': [
    'contracts',
    'generated',
    'grpc',
    'kernel',
    'services/functions-store',
    'services/registry',
  ],
  app: [
    'contracts',
    'kernel',
    'services/call-host',
    'services/coordinator',
    'services/dashboard',
    // blockx coordinator's dashboard reads the follow jobs' statuses from etcd (etcd-job-status.ts)
    'services/follow',
    'services/functions-store',
    'services/registry',
    'services/storage',
    'services/worker',
  ],
  cli: [
    'app',
    'client',
    'executor',
    'generated',
    'grpc',
    'kernel',
    'services/follow',
    'services/functions-store',
    'services/chain-rpc',
    'services/registry',
    'services/storage',
  ],
  // blockx/ingest: the shared block fetcher and the chain row types, for ingest writer plugins
  entry: ['client', 'contracts', 'executor', 'grpc', 'kernel', 'services/chain-rpc', 'services/storage'],
};

/** Every folder of src/ the table must have a row for: each top folder, each service, the entry files. */
function foldersOfSrc(): string[] {
  const top = readdirSync(SRC, { withFileTypes: true });
  const dirs = top.filter((e) => e.isDirectory() && e.name !== 'services').map((e) => e.name);
  const services = readdirSync(path.join(SRC, 'services'), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => `services/${e.name}`);
  return [...dirs, ...services, ...(top.some((e) => e.isFile() && e.name.endsWith('.ts')) ? ['entry'] : [])];
}

/** The call host (src/services/call-host/, docs/architecture.md § Where the code lives). */
const CALL_HOST = 'src/services/call-host/';

function violations(rule: (a: Arrow) => boolean): string[] {
  return show(ALL.filter(rule));
}

describe('import arrows follow the layers', () => {
  it('reads the imports it checks (the test sees the real tree)', () => {
    expect(ALL.length).toBeGreaterThan(500);
    expect(
      importSpecifiers("import a from './a.js';\nexport { b } from \"./b.js\";\nawait import('./c.js');"),
    ).toEqual(['./a.js', './b.js', './c.js']);
    expect(importSpecifiers("// import x from './commented.js'\n/* import y from './y.js' */")).toEqual([]);
  });

  it('the table has a row for every folder of src/, and names only folders that exist', () => {
    const folders = foldersOfSrc();
    expect(Object.keys(EDGES).sort()).toEqual([...folders].sort());
    expect(
      Object.values(EDGES)
        .flat()
        .filter((f) => !folders.includes(f)),
    ).toEqual([]);
  });

  it('every import from one folder of src/ to another is an edge of the table', () => {
    expect(
      violations((a) => {
        const from = folderOf(a.from);
        const to = folderOf(a.to);
        return from !== to && !(EDGES[from] ?? []).includes(to);
      }),
    ).toEqual([]);
  });

  it('every edge of the table is used (it names what is, not what might be)', () => {
    const used = new Set(ALL.map((a) => `${folderOf(a.from)} → ${folderOf(a.to)}`));
    const listed = Object.entries(EDGES).flatMap(([from, tos]) => tos.map((to) => `${from} → ${to}`));
    expect(listed.filter((e) => !used.has(e))).toEqual([]);
  });

  it('contracts import only contracts and the kernel base error class', () => {
    expect(
      violations(
        (a) => under(a.from, 'contracts') && !under(a.to, 'contracts') && a.to !== 'src/kernel/errors.ts',
      ),
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

  it('the client uses only the follow cores (their adapters open storage, which the CLI wires)', () => {
    for (const service of ['services/follow', 'services/ingest-follow']) {
      expect(
        violations((a) => under(a.from, 'client') && under(a.to, service) && !under(a.to, `${service}/core`)),
      ).toEqual([]);
    }
  });

  it('outside the call host, src/ imports it only through its index', () => {
    expect(
      violations(
        (a) => !a.from.startsWith(CALL_HOST) && a.to.startsWith(CALL_HOST) && a.to !== `${CALL_HOST}index.ts`,
      ),
    ).toEqual([]);
  });

  it('between services every dependency is one-way (the call host is below the Worker, not beside it)', () => {
    const twoWay = Object.entries(EDGES).flatMap(([from, tos]) =>
      from.startsWith('services/')
        ? tos
            .filter((to) => to.startsWith('services/') && (EDGES[to] ?? []).includes(from))
            .map((to) => `${from} ⇄ ${to}`)
        : [],
    );
    expect(twoWay).toEqual([]);
  });

  it('the call host is a service of its own: its core is checked by the core rule above', () => {
    const callHostCore = ALL.filter((a) => a.from.startsWith(`${CALL_HOST}core/`));
    expect(callHostCore.length).toBeGreaterThan(20);
    expect(
      callHostCore.map((a) => a.from).filter((f) => serviceOf(f)?.join('/') !== 'call-host/core'),
    ).toEqual([]);
  });
});
