// The pre-run name checks of `blockx validate` / `submit` (src/cli/task-references.ts): functions in the
// functions folder, tables and columns in the config, each miss with a "did you mean" or the list.
import { describe, expect, it } from 'vitest';
import {
  builderReferenceIssues,
  taskReferenceIssues,
  writerReferenceIssues,
  type TaskReferenceContext,
} from '../../../src/cli/task-references.js';
import type { TableConfig } from '../../../src/kernel/config-types.js';

const col = { type: 'text', nullable: false } as const;
const TABLES: Record<string, TableConfig> = {
  blocks: {
    columns: { chain_id: col, number: col, hash: col, canonical: col },
    primaryKey: ['chain_id', 'number', 'hash'],
    blockColumn: 'number',
    blockHashColumn: 'hash',
  },
  events: {
    columns: { chain_id: col, block_number: col, block_hash: col, selector: col, data: col },
    primaryKey: ['chain_id', 'block_number', 'block_hash'],
    blockColumn: 'block_number',
  },
  token_transfers: {
    columns: { chain_id: col, block_number: col, amount: col },
    primaryKey: ['chain_id', 'block_number'],
    blockColumn: 'block_number',
    writable: true,
  },
};
const CTX: TaskReferenceContext = {
  functions: ['hello_world', 'erc20_transfers', 'py_sum'],
  functionsDir: 'functions',
  tables: TABLES,
};

describe('builderReferenceIssues', () => {
  it.each([
    ['a known function', { function: 'hello_world' }, []],
    [
      'a misspelt function',
      { function: 'helo_world' },
      [
        {
          path: '/c/function',
          rule: 'functions.dir',
          message:
            'function "helo_world" is not in functions (did you mean "hello_world"?; available: erc20_transfers, hello_world, py_sum)',
        },
      ],
    ],
    [
      'a function nothing is close to',
      { function: 'zzzzzzzzzz' },
      [
        {
          path: '/c/function',
          rule: 'functions.dir',
          message:
            'function "zzzzzzzzzz" is not in functions (available: erc20_transfers, hello_world, py_sum)',
        },
      ],
    ],
    ['a Python function name', { function: 'py_sum' }, []],
    [
      'a known table and columns',
      { function: 'hello_world', table: 'events', columns: ['selector'], where: { data: 'x' } },
      [],
    ],
    [
      'a misspelt table',
      { table: 'event' },
      [
        {
          path: '/c/table',
          rule: 'tables',
          message:
            'table "event" is not declared in the config (did you mean "events"?; declared: blocks, events, token_transfers)',
        },
      ],
    ],
    [
      'a misspelt column in columns and where',
      { table: 'events', columns: ['selectr'], where: { dta: 1 } },
      [
        {
          path: '/c/columns/0',
          rule: 'tables.events.columns',
          message:
            'column "selectr" is not a column of table "events" (did you mean "selector"?; columns: chain_id, block_number, block_hash, selector, data)',
        },
        {
          path: '/c/where/dta',
          rule: 'tables.events.columns',
          message:
            'column "dta" is not a column of table "events" (did you mean "data"?; columns: chain_id, block_number, block_hash, selector, data)',
        },
      ],
    ],
    [
      'the bundle builder: a blocks table, and the scanned table’s number and hash columns',
      { table: 'events', blocksTable: 'block', numberColumn: 'block_number', hashColumn: 'block_hsh' },
      [
        {
          path: '/c/blocksTable',
          rule: 'tables',
          message:
            'table "block" is not declared in the config (did you mean "blocks"?; declared: blocks, events, token_transfers)',
        },
        {
          path: '/c/hashColumn',
          rule: 'tables.events.columns',
          message:
            'column "block_hsh" is not a column of table "events" (did you mean "block_hash"?; columns: chain_id, block_number, block_hash, selector, data)',
        },
      ],
    ],
    ['a hashColumn of null (a table without one)', { table: 'events', hashColumn: null }, []],
    ['a config that is not an object', 'nope', []],
  ])('%s', (_name, config, expected) => {
    expect(builderReferenceIssues(config, CTX, '/c')).toEqual(expected);
  });

  it('does not check functions when they cannot be known here', () => {
    expect(builderReferenceIssues({ function: 'anything' }, { ...CTX, functions: undefined }, '/c')).toEqual(
      [],
    );
  });

  it('an empty functions folder says so', () => {
    expect(builderReferenceIssues({ function: 'f' }, { ...CTX, functions: [] }, '/c')[0]?.message).toBe(
      'function "f" is not in functions (available: none)',
    );
  });
});

describe('writerReferenceIssues', () => {
  it.each([
    ['a declared table', { table: 'token_transfers', columns: { blockColumn: 'block_number' } }, []],
    ['no table (ReturnValueResultHandler)', {}, []],
    [
      'a misspelt table',
      { table: 'token_transfer' },
      [
        {
          path: '/w/table',
          rule: 'tables',
          message: expect.stringContaining('did you mean "token_transfers"?'),
        },
      ],
    ],
    [
      'a misspelt column of the table',
      { table: 'token_transfers', columns: { chainColumn: 'chain' } },
      [
        {
          path: '/w/columns/chainColumn',
          rule: 'tables.token_transfers.columns',
          message: expect.stringContaining('column "chain" is not a column of table "token_transfers"'),
        },
      ],
    ],
    [
      'an allow-list with one unknown table',
      { tables: ['token_transfers', 'evnts'] },
      [{ path: '/w/tables/1', rule: 'tables', message: expect.stringContaining('did you mean "events"?') }],
    ],
  ])('%s', (_name, config, expected) => {
    expect(writerReferenceIssues(config, CTX, '/w')).toEqual(expected);
  });
});

describe('taskReferenceIssues', () => {
  it('checks the builder and the writer of a task, with their JSON paths', () => {
    const task = {
      task_id: 't',
      functionCallConfig: {
        type: 'BlockTableCallConfig',
        config: { function: 'erc20_transfer', table: 'events' },
      },
      resultHandler: { type: 'BlockWriteResultHandler', config: { table: 'token_transfer' } },
    };
    expect(taskReferenceIssues(task, CTX).map((i) => i.path)).toEqual([
      '/functionCallConfig/config/function',
      '/resultHandler/config/table',
    ]);
  });

  it('a task that is not an object has no reference issues (the schema reports it)', () => {
    expect(taskReferenceIssues([1, 2], CTX)).toEqual([]);
  });
});
