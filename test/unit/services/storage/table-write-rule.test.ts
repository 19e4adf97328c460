// Which tables tasks may write (docs/storage.md, "Which tables tasks may write"): the pure rule, its
// default (false), the run-time refusal (NOT_WRITABLE, not retryable) and the checks of writer configs.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TableConfig } from '../../../../src/kernel/config-types.js';
import { KernelErrorCode, PluginLoadError } from '../../../../src/kernel/errors.js';
import { createKernelHooks } from '../../../../src/kernel/hooks.js';
import { BUILTIN_PLUGIN_DIRS } from '../../../../src/kernel/kernel.js';
import { loadPlugins } from '../../../../src/kernel/plugin-loader.js';
import { StorageError } from '../../../../src/services/storage/errors.js';
import {
  refuseTaskWrite,
  CHAIN_IMPORT_WRITER,
  taskWriteRefusal,
  writerTableIssues,
  writerTargetTables,
} from '../../../../src/services/storage/table-write-rule.js';

const cols = { columns: { n: { type: 'integer', nullable: false } }, primaryKey: ['n'] } as const;
const TABLES: Record<string, TableConfig> = {
  events: { ...cols, writable: false },
  blocks: { ...cols }, // no `writable`: false
  token_transfers: { ...cols, writable: true },
};

describe('taskWriteRefusal', () => {
  it.each([
    ['events', 'declared writable: false', true],
    ['blocks', 'writable left out (default false)', true],
    ['token_transfers', 'declared writable: true', false],
    ['nope', 'undeclared (left to UNKNOWN_TABLE at run time)', false],
  ])('%s, %s → refused: %s', (table, _why, refused) => {
    const refusal = taskWriteRefusal(TABLES, table);
    expect(refusal !== undefined).toBe(refused);
    if (refused) expect(refusal).toContain(`rule: tables.${table}.writable is false`);
  });
});

describe('refuseTaskWrite', () => {
  it('throws NOT_WRITABLE, not retryable, naming the table, the operation and the rule', () => {
    let err: unknown;
    try {
      refuseTaskWrite(TABLES, 'events', 'replaceBlockRows');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StorageError);
    expect(err).toMatchObject({ code: 'NOT_WRITABLE', retryable: false, details: { table: 'events' } });
    expect((err as Error).message).toMatch(/^replaceBlockRows: table "events" is not writable by tasks/);
    expect((err as Error).message).toContain('tables.events.writable');
  });

  it('lets a writable table through', () => {
    expect(() => refuseTaskWrite(TABLES, 'token_transfers', 'upsert')).not.toThrow();
  });

  it('lets the chain import writer of blockx ingest write chain tables, and no other writer', () => {
    expect(() => refuseTaskWrite(TABLES, 'events', 'replaceBlockRows', CHAIN_IMPORT_WRITER)).not.toThrow();
    expect(() => refuseTaskWrite(TABLES, 'events', 'replaceBlockRows', 'BlockWriteResultHandler')).toThrow(
      StorageError,
    );
  });
});

describe('the chain import writer is the built-in one', () => {
  // The exception above is keyed by the writer's type. The built-in plugins are loaded in every process
  // (kernel.ts), and a second package declaring a type is refused, so no other plugin can take the type and
  // with it the right to write the chain tables.
  it('a plugin of the user declaring ChainIngestResultHandler fails to load, naming the built-in', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'blockx-impostor-'));
    try {
      const pkg = path.join(dir, 'impostor');
      mkdirSync(pkg);
      writeFileSync(
        path.join(pkg, 'package.json'),
        JSON.stringify({
          name: 'impostor',
          version: '1.0.0',
          type: 'module',
          main: 'index.js',
          blockx: { kind: 'writer', type: CHAIN_IMPORT_WRITER, schema: './schema.json' },
        }),
      );
      writeFileSync(path.join(pkg, 'schema.json'), JSON.stringify({ type: 'object' }));
      writeFileSync(path.join(pkg, 'index.js'), 'export default { async execute() { return []; } };\n');
      const err = await loadPlugins({
        dirs: [...BUILTIN_PLUGIN_DIRS, dir],
        packages: [],
        baseDir: dir,
        hooks: createKernelHooks(),
      }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(PluginLoadError);
      const errors = (err as PluginLoadError).errors;
      expect(errors.map((e) => e.code)).toEqual([KernelErrorCode.PLUGIN_DUPLICATE_TYPE]);
      expect(errors[0]?.message).toContain('chain-ingest-write');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('writerTableIssues', () => {
  it.each([
    { name: 'BlockWrite of an output table', config: { table: 'token_transfers' }, issues: [] },
    {
      name: 'BlockWrite of events',
      config: { table: 'events', chainId: 1, block: { number: 2 } },
      issues: [{ path: '/table', rule: 'tables.events.writable' }],
    },
    {
      name: 'an undeclared table',
      config: { table: 'nope' },
      issues: [
        { path: '/table', rule: 'tables.nope.writable', message: expect.stringMatching(/not declared/) },
      ],
    },
    {
      name: 'a TableUpserts allow-list with one source table',
      config: { tables: ['token_transfers', 'blocks'] },
      issues: [{ path: '/tables/1', rule: 'tables.blocks.writable' }],
    },
    { name: 'no tables named (ReturnValue, TableUpserts without a list)', config: {}, issues: [] },
    { name: 'a config that is not an object', config: 'x', issues: [] },
  ])('$name', ({ config, issues }) => {
    const got = writerTableIssues(config, TABLES);
    expect(got).toHaveLength(issues.length);
    issues.forEach((issue, i) => expect(got[i]).toMatchObject(issue));
  });

  it('reads the target tables from `table` and `tables`', () => {
    expect(writerTargetTables({ table: 'a', tables: ['b', 3, 'c'] })).toEqual([
      { table: 'a', path: '/table' },
      { table: 'b', path: '/tables/0' },
      { table: 'c', path: '/tables/2' },
    ]);
  });
});
