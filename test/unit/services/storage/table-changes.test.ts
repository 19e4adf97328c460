// What a changed `tables` section means for a running cluster (src/services/storage/table-changes.ts):
// added tables are served, a writable flag is taken, a changed shape is refused with its migration, a
// table no longer declared keeps being served.
import { describe, expect, it } from 'vitest';
import type { TableConfig } from '../../../../src/kernel/config-types.js';
import { planTableChanges, tablesAfter } from '../../../../src/services/storage/table-changes.js';

const t = (columns: TableConfig['columns'], extra: Partial<TableConfig> = {}): TableConfig => ({
  columns,
  primaryKey: ['id'],
  writable: false,
  ...extra,
});
const base = t({ id: { type: 'integer', nullable: false }, v: { type: 'text', nullable: true } });

describe('planTableChanges', () => {
  it.each([
    ['the same tables', { a: base }, { added: [], updated: [], changed: [], removed: [] }],
    ['a new table', { a: base, b: base }, { added: ['b'], updated: [], changed: [], removed: [] }],
    [
      'writable turned on',
      { a: { ...base, writable: true } },
      { added: [], updated: ['a'], changed: [], removed: [] },
    ],
    ['a table left out', {}, { added: [], updated: [], changed: [], removed: ['a'] }],
  ] as const)('%s', (_name, next, expected) => {
    const plan = planTableChanges({ a: base }, next);
    expect({ ...plan, changed: plan.changed.map((c) => c.table) }).toEqual(expected);
  });

  it.each([
    [
      'a nullable column added: one ALTER TABLE',
      t({ ...base.columns, w: { type: 'bigint', nullable: true } }),
      ['column "w" (bigint) is new'],
      ['ALTER TABLE "a" ADD COLUMN "w" BIGINT;', 'then restart the cluster'],
    ],
    [
      'a column dropped: one ALTER TABLE',
      t({ id: { type: 'integer', nullable: false } }),
      ['column "v" is gone'],
      ['ALTER TABLE "a" DROP COLUMN "v";', 'then restart the cluster'],
    ],
    [
      'a column of another type: the table made anew',
      t({ id: { type: 'integer', nullable: false }, v: { type: 'json', nullable: true } }),
      ['column "v" was text, is json'],
      [
        'copy out the rows of "a" you want to keep',
        'DROP TABLE "a";',
        'blockx db migrate (creates it as declared)',
        'load the rows again',
        'then restart the cluster',
      ],
    ],
    [
      'another primary key: the table made anew',
      t(base.columns, { primaryKey: ['id', 'v'] }),
      ['primaryKey was ["id"], is ["id","v"]'],
      expect.arrayContaining(['DROP TABLE "a";']),
    ],
  ])('%s', (_name, next, differences, migration) => {
    const plan = planTableChanges({ a: base }, { a: next });
    expect(plan.changed).toEqual([{ table: 'a', differences, migration }]);
    expect(plan.added).toEqual([]);
  });

  it('tablesAfter serves the new declarations and the removed ones, never a refused change', () => {
    const changed = t({ id: { type: 'text', nullable: false } });
    const running = { a: base, gone: base };
    const next = { a: changed, b: base };
    const plan = planTableChanges(running, next);
    expect(tablesAfter(running, next, plan)).toEqual({ a: base, gone: base, b: base });
  });
});
