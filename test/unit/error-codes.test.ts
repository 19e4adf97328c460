// The conventions every error-code table of src/ keeps (docs/architecture.md § Errors), read from the
// tables themselves: every `errors.ts` / `*-errors.ts` module is imported and each export named `…Code`
// that maps names to strings is a table. A table added later is held to the same rules without being
// listed here.
//   - each key equals its code, so a code never drifts from its name;
//   - codes are UPPER_SNAKE_CASE, except the business codes of the Worker's and the Coordinator's own
//     RPCs, which keep the PascalCase of the seeds' wire protocol (`NoSlot`, `SlotUncertain`, …);
//   - a code several packages share (SharedErrorCode, src/kernel/errors.ts) is written out once, there:
//     every other table takes it from there.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SharedErrorCode } from '../../src/kernel/errors.js';

const SRC = path.resolve(import.meta.dirname, '../../src');
const SKIP_DIRS = new Set(['generated', 'python']);
const SHARED_HOME = path.join('kernel', 'errors.ts');

/** The tables whose codes are on the wire as the seeds spell them: PascalCase. */
const SEED_CASE_TABLES = new Set(['CoordinatorErrorCode', 'WorkerErrorCode', 'BackfillReportErrorCode']);

const UPPER_SNAKE = /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/;
const PASCAL = /^[A-Z][a-z0-9]+([A-Z][a-z0-9]+)*$/;

/** Every .ts file of src/, repo-relative to src/. */
function sources(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return SKIP_DIRS.has(e.name) ? [] : sources(full);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [path.relative(SRC, full)] : [];
  });
}

const isErrorsModule = (file: string): boolean => /(^|-)errors\.ts$/.test(path.basename(file));

interface Table {
  readonly file: string;
  readonly name: string;
  readonly codes: Readonly<Record<string, string>>;
}

async function tables(): Promise<Table[]> {
  const found: Table[] = [];
  for (const file of sources().filter(isErrorsModule)) {
    const mod = (await import(path.join(SRC, file))) as Record<string, unknown>;
    for (const [name, value] of Object.entries(mod)) {
      if (!name.endsWith('Code') || typeof value !== 'object' || value === null) continue;
      const entries = Object.entries(value);
      if (entries.length === 0 || entries.some(([, v]) => typeof v !== 'string')) continue;
      found.push({ file, name, codes: value as Record<string, string> });
    }
  }
  return found;
}

describe('error-code tables', () => {
  it('are found: the discovery reads the tables it should', async () => {
    const names = (await tables()).map((t) => t.name);
    // A few of each kind; if the discovery broke, the rules below would pass on nothing.
    for (const name of ['KernelErrorCode', 'StorageErrorCode', 'TaskIoErrorCode', 'ClientErrorCode'])
      expect(names).toContain(name);
    for (const name of SEED_CASE_TABLES) expect(names).toContain(name);
    expect(names).toContain('SharedErrorCode');
  });

  it('each key equals its code', async () => {
    const drifted = (await tables()).flatMap((t) =>
      Object.entries(t.codes)
        .filter(([k, v]) => k !== v)
        .map(([k, v]) => `${t.file} ${t.name}.${k} = '${v}'`),
    );
    expect(drifted).toEqual([]);
  });

  it('codes are UPPER_SNAKE_CASE, the seeds wire tables PascalCase', async () => {
    const offCase = (await tables()).flatMap((t) => {
      const rule = SEED_CASE_TABLES.has(t.name) ? PASCAL : UPPER_SNAKE;
      return Object.values(t.codes)
        .filter((code) => !rule.test(code))
        .map((code) => `${t.file} ${t.name}: '${code}'`);
    });
    expect(offCase).toEqual([]);
  });

  it('a shared code is written out once, in src/kernel/errors.ts', () => {
    const again = sources().flatMap((file) => {
      if (file === SHARED_HOME) return [];
      const text = readFileSync(path.join(SRC, file), 'utf8');
      return Object.keys(SharedErrorCode)
        .filter((code) => new RegExp(`\\b${code}\\s*:\\s*['"]${code}['"]`).test(text))
        .map((code) => `${file}: ${code}`);
    });
    expect(again).toEqual([]);
  });
});
