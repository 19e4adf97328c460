// `blockx validate TASK.json` reports a writer that targets a table tasks may not write — not declared
// `writable: true`, or not declared at all — naming the rule `tables.<name>.writable` (docs/storage.md,
// "Which tables tasks may write"). The repository's examples, which write token_transfers, stay valid.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const REPO = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(REPO, 'bin/blockx.js');
const dir = mkdtempSync(path.join(tmpdir(), 'blockx-validate-writable-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function validate(...files: string[]) {
  const env = { ...process.env };
  for (const k of Object.keys(env))
    if (k.startsWith('COORDINATOR_') || k.startsWith('BLOCKX_')) delete env[k];
  const r = spawnSync(process.execPath, [BIN, 'validate', ...files], {
    cwd: REPO,
    env,
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function taskFile(name: string, resultHandler: unknown): string {
  const file = path.join(dir, name);
  writeFileSync(
    file,
    JSON.stringify({
      task_id: name,
      functionCallConfig: { type: 'CallListCallConfig', config: { function: 'hello_world', callList: [] } },
      resultHandler,
    }),
  );
  return file;
}

describe('blockx validate: writers write only writable tables', () => {
  it.each([
    ['events', 'BlockWriteResultHandler', { table: 'events', chainId: 1, block: { number: 2 } }, '/table'],
    ['blocks', 'BlockBundleWriteResultHandler', { table: 'blocks', chainId: 1, bundle: 1 }, '/table'],
    [
      'transactions',
      'TableUpsertsResultHandler',
      { tables: ['token_transfers', 'transactions'] },
      '/tables/1',
    ],
  ])('a %s writer (%s) is refused, naming the rule (exit 1)', (table, type, config, at) => {
    const r = validate(taskFile(`${table}.json`, { type, config }));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`/resultHandler/config${at}: table "${table}" is not writable by tasks`);
    expect(r.stdout).toContain(`(rule: tables.${table}.writable)`);
  });

  it('an undeclared table is refused too', () => {
    const r = validate(
      taskFile('nope.json', {
        type: 'BlockWriteResultHandler',
        config: { table: 'nope', chainId: 1, block: { number: 1 } },
      }),
    );
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      // The pre-run name check reports it (src/cli/task-references.ts): the list to choose from, rule `tables`.
      /\/resultHandler\/config\/table: table "nope" is not declared in the config \(declared: .*token_transfers.*\) \(rule: tables\)/,
    );
  });

  it('the examples writing token_transfers stay valid (exit 0)', () => {
    const r = validate('examples/tasks/block-table-transfers.json', 'examples/tasks/bundle-transfers.json');
    expect(r.stdout).toContain('valid: config, plugins and 2 task file(s)');
    expect(r.code).toBe(0);
  });
});
