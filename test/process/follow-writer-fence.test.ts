// `blockx backfill --follow` and a writer's fence (docs/plugins.md § Writers that follow), through the
// built CLI with a config whose plugins.dirs holds the third-party-style packages of
// test/fixtures/plugins/follow-writers: a template whose writer does not accept a fence is refused before
// anything is asked of the cluster, naming the writer and its package; one whose writer accepts it passes
// every check (its follow tasks carry the fence the kernel validates) and goes on to reach the coordinator.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO, cleanEnv, runBlockx } from '../support/cli.js';

const dir = mkdtempSync(path.join(tmpdir(), 'blockx-follow-writer-'));
const FIXTURES = path.join(REPO, 'test/fixtures/plugins/follow-writers');
/** Nothing listens here: a command that got as far as connecting says it cannot reach it. */
const NOBODY = '127.0.0.1:1';

const config = path.join(dir, 'blockx.config.yaml');
writeFileSync(
  config,
  readFileSync(path.join(REPO, 'blockx.config.yaml'), 'utf8')
    .replace(/^functions:\n {2}dir: functions$/m, `functions:\n  dir: ${path.join(REPO, 'functions')}`)
    .replace(/^plugins:\n {2}dirs: \[\]$/m, `plugins:\n  dirs: [${JSON.stringify(FIXTURES)}]`),
);
const transfers = JSON.parse(
  readFileSync(path.join(REPO, 'examples/tasks/block-table-transfers.json'), 'utf8'),
);

function template(resultHandler: { type: string; config: Record<string, unknown> }): string {
  const file = path.join(dir, `${resultHandler.type}.json`);
  writeFileSync(file, JSON.stringify({ ...transfers, resultHandler }));
  return file;
}

const follow = (file: string) =>
  runBlockx(['backfill', file, '--from', '1', '--follow', '--config', config, '--coordinator', NOBODY], {
    env: cleanEnv({ BLOCKX_STORAGE_URL: `sqlite:${path.join(dir, 'out.db')}` }),
  });

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('blockx backfill --follow and the writer', () => {
  it('refuses a writer that does not accept a fence, naming it, before reaching the cluster', async () => {
    const r = await follow(
      template({ type: 'AppendedRowsResultHandler', config: { table: 'token_transfers' } }),
    );
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain('--follow needs a writer that accepts a fence');
    expect(r.stderr).toContain(
      `the writer AppendedRowsResultHandler (blockx-plugin-appended-rows at ${path.join(FIXTURES, 'appended-rows')})`,
    );
    expect(r.stderr).toContain('"accepts": ["fence"]');
    expect(r.stderr).toContain('invalid: nothing submitted');
    expect(r.stderr).not.toMatch(/cannot reach|coordinator at/);
  });

  it('takes a third-party writer that accepts one', async () => {
    const r = await follow(
      template({
        type: 'FencedRowsResultHandler',
        config: { table: 'token_transfers', chainId: 1, block: { number: 1 } },
      }),
    );
    expect(r.stderr).not.toContain('accepts a fence');
    expect(r.stderr).not.toContain('invalid');
    // It went on to the cluster, which is not there.
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(NOBODY);
  });
});
