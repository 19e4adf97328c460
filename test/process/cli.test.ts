// Process-level tests of the built `blockx` command (bin/blockx.js → dist/). `npm test` builds first.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const REPO = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(REPO, 'bin/blockx.js');

function blockx(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}) {
  const env = { ...process.env, ...opts.env };
  for (const k of Object.keys(env))
    if (k.startsWith('COORDINATOR_') || k.startsWith('BLOCKX_')) delete env[k];
  Object.assign(env, opts.env);
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: opts.cwd ?? REPO,
    env,
    encoding: 'utf8',
    timeout: opts.timeoutMs ?? 30_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * A scratch project, so tests can break things: the repo's config with `plugins.dirs: [plugins]`, and
 * there a plugin of its own (a copy of the built-in return-value writer under another type).
 */
function scratchProject(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'blockx-cli-'));
  writeFileSync(path.join(dir, 'package.json'), '{"name":"scratch","private":true}');
  const config = readFileSync(path.join(REPO, 'blockx.config.yaml'), 'utf8');
  expect(config).toContain('  dirs: []\n');
  writeFileSync(path.join(dir, 'blockx.config.yaml'), config.replace('  dirs: []\n', '  dirs: [plugins]\n'));
  const own = path.join(dir, 'plugins/own-return-value');
  cpSync(path.join(REPO, 'plugins/writers/return-value'), own, { recursive: true });
  const manifest = JSON.parse(readFileSync(path.join(own, 'package.json'), 'utf8')) as {
    blockx: { type: string };
  };
  manifest.blockx.type = 'OwnReturnValueResultHandler';
  writeFileSync(path.join(own, 'package.json'), JSON.stringify(manifest));
  cpSync(path.join(REPO, 'examples'), path.join(dir, 'examples'), { recursive: true });
  return dir;
}

describe('blockx validate', () => {
  it('accepts the repository config and examples/tasks/*.json (exit 0)', () => {
    const r = blockx(['validate', 'examples/tasks/hello-world.json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('ok   task examples/tasks/hello-world.json');
    expect(r.stdout).toContain(
      'builders BlockBundleCallConfig, BlockTableCallConfig, CallListCallConfig, ChainIngestCallConfig;',
    );
    expect(r.stdout).toMatch(/writers .*ChainIngestResultHandler/);
  });

  it('rejects a task whose builder config breaks the plugin schema, naming the path and rule (exit 1)', () => {
    const dir = scratchProject();
    writeFileSync(
      path.join(dir, 'bad.json'),
      JSON.stringify({
        task_id: 't1',
        functionCallConfig: { type: 'CallListCallConfig', config: { function: 'hello_world' } },
      }),
    );
    const r = blockx(['validate', 'bad.json'], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('FAIL task bad.json');
    expect(r.stdout).toMatch(/\/functionCallConfig\/config: .*callList.*\(rule: required\)/);
  });

  it('reports every config problem with file:line:column and exits 1', () => {
    const dir = scratchProject();
    const file = path.join(dir, 'blockx.config.yaml');
    const text = spawnSync('cat', [file], { encoding: 'utf8' }).stdout.replace(
      'maxCandidates: 3',
      'maxCandidate: 3',
    );
    writeFileSync(file, text.replace('cpuRedLine: 0.9', 'cpuRedLine: 1.9'));
    const r = blockx(['validate'], { cwd: dir, env: { WORKER_TASK_SLOTS: 'many' } });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /blockx\.config\.yaml:\d+:7: deployments\.block\.coordinator\.maxCandidate: unknown key "maxCandidate" \(did you mean "maxCandidates"\?\)/,
    );
    expect(r.stdout).toMatch(
      /blockx\.config\.yaml:\d+:19: deployments\.block\.coordinator\.cpuRedLine: must be <= 1/,
    );
    expect(r.stdout).toContain(
      'env WORKER_TASK_SLOTS: deployments.*.worker.taskSlots: expected a positive integer, got "many"',
    );
  });

  it('reports a broken plugin with its coded error and path', () => {
    const dir = scratchProject();
    writeFileSync(path.join(dir, 'plugins/own-return-value/schema.json'), '{"type": "nope"}');
    const r = blockx(['validate'], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('PLUGIN_SCHEMA_INVALID');
    expect(r.stdout).toContain(path.join(dir, 'plugins/own-return-value'));
  });
});

describe('blockx plugins / config / usage', () => {
  it('lists builders and writers with package, version, schema and what a writer accepts', () => {
    const r = blockx(['plugins']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /builder\s+CallListCallConfig\s+@blockx\/builder-call-list\s+\S+\s+plugins\/builders\/call-list\s+plugins\/builders\/call-list\/schema\.json\s+-$/m,
    );
    // The writers a follow job may use say so (docs/plugins.md § Writers that follow).
    expect(r.stdout).toMatch(/^writer\s+BlockWriteResultHandler\s.*schema\.json\s+fence$/m);
    expect(r.stdout).toMatch(/^writer\s+ReturnValueResultHandler\s.*schema\.json\s+-$/m);
  });

  it('prints the effective config with env overrides as YAML', () => {
    const r = blockx(['config', '--deployment', 'bundle'], { env: { COORDINATOR_MAX_CANDIDATES: '9' } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('maxCandidates: 9');
    expect(r.stdout).toContain('kind: bundle');
    expect(r.stdout).not.toContain('kind: block\n');
  });

  it('an invalid env var makes `config` exit 2 naming the variable', () => {
    const r = blockx(['config'], { env: { COORDINATOR_MAX_CANDIDATES: 'abc' } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('env COORDINATOR_MAX_CANDIDATES');
  });

  it('unknown commands and flags are usage errors (exit 2); --help exits 0', () => {
    expect(blockx(['frobnicate']).code).toBe(2);
    expect(blockx(['validate', '--bogus']).code).toBe(2);
    const help = blockx(['--help']);
    expect(help.code).toBe(0);
    for (const cmd of [
      'up',
      'coordinator',
      'worker',
      'executor',
      'submit',
      'validate',
      'plugins',
      'status',
      'data',
      'config',
    ]) {
      expect(help.stdout).toContain(cmd);
    }
  });

  it('a missing --config file is exit 2 with the path', () => {
    const r = blockx(['plugins', '--config', '/nonexistent/blockx.yaml']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('/nonexistent/blockx.yaml');
  });
});

describe('blockx up --once', () => {
  it('starts storage, a coordinator and two workers, backfills the demo chain into token_transfers through the coordinator, exits 0', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'blockx-up-'));
    try {
      const db = path.join(dir, 'demo.db');
      // No red line may hold the workers out on a machine busy with other test files.
      const env = {
        BLOCKX_STORAGE_URL: `sqlite:${db}`,
        COORDINATOR_CPU_RED_LINE: '1',
        COORDINATOR_MEMORY_RED_LINE: '1',
      };
      // The demo backfills 20 blocks: on a loaded machine that takes longer than a plain command.
      const r = blockx(['up', '--once', '--listen', '127.0.0.1:0'], { env, timeoutMs: 90_000 });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/coordinator listening on 127\.0\.0\.1:\d+ \(in-process registry\)/);
      expect(r.stdout).toMatch(/worker #0 listening on 127\.0\.0\.1:\d+/);
      expect(r.stdout).toMatch(/worker #1 listening on 127\.0\.0\.1:\d+/);
      expect(r.stdout).toContain(`storage sqlite:${db}`);
      expect(r.stdout).toMatch(/demo chain: generated 20 blocks/);
      // The backfill's own lines: one per block, and its summary.
      expect(r.stdout.match(/^block \d+ SUCCEEDED \d+ rows$/gm)).toHaveLength(20);
      expect(r.stdout).toMatch(/^backfill \w+: 20 block\(s\): 20 succeeded, 0 failed, 0 skipped; /m);
      // The rows, checked against a direct decode of the chain's events, and where to look next.
      const rows = /demo: SUCCEEDED: token_transfers holds (\d+) rows for blocks 1\.\.20/.exec(r.stdout);
      expect(Number(rows?.[1])).toBeGreaterThan(0);
      expect(r.stdout).toContain(`the rows:      sqlite3 ${db} "SELECT * FROM token_transfers`);
      expect(r.stdout).toContain(
        'npx blockx backfill examples/tasks/block-table-transfers.json --from 1 --to 20',
      );
      // A second run finds the demo chain in place and runs the job again (fresh), rewriting the same rows.
      const again = blockx(['up', '--once', '--listen', '127.0.0.1:0'], { env, timeoutMs: 90_000 });
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).not.toMatch(/demo chain: generated/);
      expect(again.stdout).toMatch(/^backfill \w+: 20 block\(s\): 20 succeeded, 0 failed, 0 skipped; /m);
      expect(again.stdout).toContain(`token_transfers holds ${rows?.[1]} rows for blocks 1..20`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a config without the demo tables skips the demo and still exits 0', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'blockx-up-bare-'));
    try {
      writeFileSync(
        path.join(dir, 'blockx.config.yaml'),
        'version: 1\nstorage:\n  url: "sqlite::memory:"\ndeployments:\n  block:\n    kind: block\n',
      );
      const r = blockx(['up', '--once', '--listen', '127.0.0.1:0', '--no-dashboard'], { cwd: dir });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(
        /^demo: skipped: the config declares no blocks, transactions, events, traces, token_transfers table/m,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a bad --listen is a usage error', () => {
    const r = blockx(['up', '--once', '--listen', 'nope']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--listen must be host:port');
  });
});
