// `tables.<name>.writable` (docs/storage.md, "Which tables tasks may write"): a boolean, default false;
// in the repository's config only the demo's output table is writable, the chain data is not.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, resolveConfig } from '../../../src/kernel/config.js';
import { parseConfigText } from '../../../src/kernel/config-source.js';
import { ConfigError } from '../../../src/kernel/errors.js';

const REPO = path.resolve(import.meta.dirname, '../../..');

const withTables = (tables: string) => `version: 1
deployments:
  block:
    kind: block
tables:
${tables}`;

const resolve = (text: string) =>
  resolveConfig(parseConfigText(text, '/cfg/blockx.config.yaml'), { env: {} });

describe('tables.<name>.writable', () => {
  it('defaults to false and keeps an explicit true', () => {
    const config = resolve(
      withTables(`  a: { columns: { n: { type: integer } }, primaryKey: [n] }
  b: { columns: { n: { type: integer } }, primaryKey: [n], writable: true }
`),
    );
    expect(config.tables.a?.writable).toBe(false);
    expect(config.tables.b?.writable).toBe(true);
  });

  it('must be a boolean', () => {
    let err: unknown;
    try {
      resolve(withTables(`  a: { columns: { n: { type: integer } }, primaryKey: [n], writable: 'yes' }\n`));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).message).toMatch(/tables\.a\.writable|\/tables\/a\/writable/);
  });

  it('the repository config: chain data read-only to tasks, token_transfers writable', () => {
    const { tables } = loadConfig({ cwd: REPO, env: {} });
    for (const name of ['blocks', 'transactions', 'events', 'traces'])
      expect(tables[name]?.writable).toBe(false);
    expect(tables.token_transfers?.writable).toBe(true);
  });
});
