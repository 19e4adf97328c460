// A default is written once, in the config field table (src/kernel/config-fields/); docs/configuration.md
// is generated from it. The hand-written tables elsewhere in docs/ that repeat a default are checked here
// against the table: a row of a table with a `default` column that names a field — as `worker.x`,
// `executor.x` or `coordinator.x`, or by its env variable — must state the field's default as
// docs/configuration.md does (a note may follow in parentheses). A row naming a field that does not
// exist fails too. Defaults that are lists, per deployment kind or prose are left to the words around them.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CONFIG_FIELDS,
  configField,
  defaultText,
  type ConfigField,
  type ConfigSection,
} from '../../src/kernel/config-fields/index.js';

const REPO = path.resolve(import.meta.dirname, '../..');
const DOCS = path.join(REPO, 'docs');
/** Generated from the table itself. */
const GENERATED = new Set(['configuration.md']);

interface Row {
  readonly doc: string;
  readonly line: number;
  readonly cells: string[];
  readonly defaultCell: string;
}

const cellsOf = (line: string) =>
  line
    .trim()
    .replace(/^\||\|$/g, '')
    .split(/(?<!\\)\|/)
    .map((c) => c.trim());

/** Every row of every table with a `default` column in the hand-written docs. */
function defaultRows(): Row[] {
  const rows: Row[] = [];
  for (const doc of readdirSync(DOCS).filter((f) => f.endsWith('.md') && !GENERATED.has(f))) {
    const lines = readFileSync(path.join(DOCS, doc), 'utf8').split('\n');
    let column = -1;
    lines.forEach((line, i) => {
      if (!line.trimStart().startsWith('|')) {
        column = -1;
        return;
      }
      const cells = cellsOf(line);
      if (column === -1 && /^\s*\|\s*-/.test(lines[i + 1] ?? '')) {
        column = cells.findIndex((c) => c.toLowerCase() === 'default');
        if (column === -1) column = -2; // a table without a default column
        return;
      }
      if (column < 0 || /^-+$/.test(cells[0]?.replace(/[\s:]/g, '') ?? '')) return;
      rows.push({ doc, line: i + 1, cells, defaultCell: cells[column] ?? '' });
    });
  }
  return rows;
}

const SECTIONS: readonly ConfigSection[] = ['coordinator', 'worker', 'executor'];

/** The field a row's first cell names: `section.path` in a backticked token, else an env variable. */
function fieldOf(row: Row): ConfigField | string | undefined {
  const tokens = [...(row.cells[0] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);
  for (const token of tokens) {
    const [section, ...rest] = token.split('.');
    if (SECTIONS.includes(section as ConfigSection) && rest.length > 0) {
      try {
        return configField(section as ConfigSection, rest.join('.'));
      } catch {
        return `${row.doc}:${row.line}: \`${token}\` is not a field of the config table`;
      }
    }
  }
  for (const token of tokens) {
    const byEnv = CONFIG_FIELDS.find((f) => f.env === token);
    if (byEnv) return byEnv;
  }
  return undefined;
}

/** The value a default cell states: backticks, thousands separators and a trailing note dropped. */
const stated = (text: string) =>
  text
    .replace(/`/g, '')
    .replace(/\s*\(.*\)\s*$/, '')
    .replace(/(\d)[,_ ](?=\d{3}\b)/g, '$1')
    .trim();

const isScalar = (f: ConfigField) =>
  typeof f.default === 'number' || (typeof f.default === 'string' && f.defaultText === undefined);

describe('defaults stated in the docs', () => {
  const rows = defaultRows();

  it('finds the hand-written tables (the check sees the docs)', () => {
    const docs = new Set(rows.filter((r) => typeof fieldOf(r) === 'object').map((r) => r.doc));
    expect([...docs].sort()).toEqual(
      expect.arrayContaining(['coordinator.md', 'executor.md', 'task-lifecycle.md']),
    );
  });

  it('every default a doc states is the config table’s', () => {
    const wrong: string[] = [];
    for (const row of rows) {
      const field = fieldOf(row);
      // Lists, per-kind and prose defaults are said in words; a number or a plain word is checked.
      if (field === undefined || (typeof field === 'object' && !isScalar(field))) continue;
      if (typeof field === 'string') {
        wrong.push(field);
        continue;
      }
      const expected = stated(defaultText(field) ?? 'unset');
      if (stated(row.defaultCell) !== expected)
        wrong.push(
          `${row.doc}:${row.line}: ${field.section}.${field.path} is "${expected}" in the table, the doc says "${row.defaultCell}"`,
        );
    }
    expect(wrong).toEqual([]);
  });
});
