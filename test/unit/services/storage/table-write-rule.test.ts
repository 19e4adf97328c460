// Which tables tasks may write (docs/storage.md, "Which tables tasks may write"): the pure rule, its
// default (false), the run-time refusal (NOT_WRITABLE, not retryable) and the checks of writer configs.
import { describe, expect, it } from 'vitest';
import type { TableConfig } from '../../../../src/kernel/config-types.js';
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
