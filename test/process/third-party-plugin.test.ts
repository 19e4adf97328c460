// A plugin package from outside the repository, as a user installs one: test/fixtures/third-party-plugin
// (`blockx-plugin-shout`, importing only `blockx/plugin`) is copied into a scratch project under the OS
// temp dir, next to a `node_modules/blockx` link to this package (what `npm install blockx` gives it),
// declared in that project's blockx.config.yaml under plugins.packages, and run by the built CLI:
// `blockx plugins` lists it, and a task submitted to `blockx up` goes through it (docs/plugins.md). Its
// source changed, SIGHUP makes the running `blockx up` and its Worker (a child process, which gets the
// signal from it) load it again (docs/plugins.md § Loading plugins
// again); a change that does not load leaves the running one serving.
import type { ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlockxClient } from '../../src/client/client.js';
import type { ClientTaskInput } from '../../src/client/index.js';
import { captureOutput, spawnTracked, stopGroup, waitForLine } from '../support/processes.js';
import { BIN, REPO, cleanEnv, runBlockx } from '../support/cli.js';
import { eventually } from '../support/eventually.js';

/** Runs the CLI in `cwd` (the scratch project). */
const blockx = (cwd: string, args: string[]) => runBlockx(args, { cwd });
const FIXTURE = path.join(REPO, 'test/fixtures/third-party-plugin');

/** The scratch project: its own config and functions, the plugin installed, blockx linked. */
function scratchProject(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'blockx-third-party-'));
  writeFileSync(path.join(dir, 'package.json'), '{"name":"scratch","private":true,"type":"module"}');
  mkdirSync(path.join(dir, 'node_modules'));
  symlinkSync(REPO, path.join(dir, 'node_modules', 'blockx'));
  cpSync(FIXTURE, path.join(dir, 'node_modules', 'blockx-plugin-shout'), { recursive: true });
  mkdirSync(path.join(dir, 'functions'));
  writeFileSync(
    path.join(dir, 'functions', 'greet.js'),
    'export default async function greet(_ctx, name) {\n  return `hello, ${name}`;\n}\n',
  );
  writeFileSync(path.join(dir, 'functions', 'answer.js'), 'export default () => 42;\n');
  writeFileSync(
    path.join(dir, 'blockx.config.yaml'),
    [
      'version: 1',
      'storage:',
      "  url: 'sqlite:blockx.db'",
      'functions:',
      '  dir: functions',
      'plugins:',
      // The built-in CallListCallConfig builder, plus the third-party writer by its package name.
      `  dirs: [${JSON.stringify(path.join(REPO, 'plugins/builders'))}]`,
      '  packages: [blockx-plugin-shout]',
      'deployments:',
      '  block:',
      '    kind: block',
      '    coordinator:',
      '      cpuRedLine: 1',
      '      memoryRedLine: 1',
      '',
    ].join('\n'),
  );
  return dir;
}

function task(fn: string, args: unknown[][], resultConfig: Record<string, unknown>): string {
  return JSON.stringify({
    functionCallConfig: { type: 'CallListCallConfig', config: { function: fn, callList: args } },
    resultHandler: { type: 'ShoutResultHandler', config: resultConfig },
  });
}

describe('a third-party plugin package outside the repository', () => {
  const dir = scratchProject();
  let up: ChildProcess | undefined;
  let output: ReturnType<typeof captureOutput>;
  let coordinator = '';

  beforeAll(async () => {
    up = spawnTracked(
      process.execPath,
      [BIN, 'up', '--no-demo', '--workers', '1', '--listen', '127.0.0.1:0'],
      {
        cwd: dir,
        env: cleanEnv(),
      },
    );
    output = captureOutput(up);
    await waitForLine(up, /^serving; press Ctrl-C/, 45_000);
    coordinator = /coordinator listening on (\S+)/.exec(output.text())?.[1] ?? '';
    expect(coordinator, output.text()).not.toBe('');
  });

  afterAll(async () => {
    if (up) await stopGroup(up, 'SIGTERM', 5_000);
    rmSync(dir, { recursive: true, force: true });
  });

  it('is registered from node_modules under its package name', async () => {
    const r = await blockx(dir, ['plugins']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/writer\s+ShoutResultHandler\s+blockx-plugin-shout\s+1\.0\.0/);
  });

  it('runs a task: the schema default (suffix "!") reaches the plugin', async () => {
    writeFileSync(path.join(dir, 'shout.json'), task('greet', [['you'], ['blockx']], {}));
    const r = await blockx(dir, ['submit', 'shout.json', '--coordinator', coordinator]);
    expect(r.code, `${r.stdout}\n${r.stderr}\n${output.text()}`).toBe(0);
    expect(r.stdout).toMatch(/ SUCCEEDED \["HELLO, YOU!","HELLO, BLOCKX!"\]$/m);
  });

  it('takes a config value over the default', async () => {
    writeFileSync(path.join(dir, 'quiet.json'), task('greet', [['you']], { suffix: '.' }));
    const r = await blockx(dir, ['submit', 'quiet.json', '--coordinator', coordinator]);
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toMatch(/ SUCCEEDED \["HELLO, YOU\."\]$/m);
  });

  it('a PluginError it throws fails the task PLUGIN_FAILED, not retryable, with its message', async () => {
    writeFileSync(path.join(dir, 'number.json'), task('answer', [[]], {}));
    const r = await blockx(dir, ['submit', 'number.json', '--coordinator', coordinator]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/ FAILED PLUGIN_FAILED .*output 0 is not a string/m);
    // The client sees the flag the plugin's PluginError carried (retryable defaults to false).
    const client = new BlockxClient({ coordinator });
    try {
      const result = await client.run(JSON.parse(task('answer', [[]], {})) as ClientTaskInput);
      expect(result).toMatchObject({ success: false, failureCode: 'PLUGIN_FAILED', retryable: false });
    } finally {
      client.close();
    }
  });

  it('is loaded again on SIGHUP after its source changed; a change that does not load changes nothing', async () => {
    const source = path.join(dir, 'node_modules', 'blockx-plugin-shout', 'src', 'index.js');
    const original = readFileSync(source, 'utf8');
    const submitQuiet = () => blockx(dir, ['submit', 'quiet.json', '--coordinator', coordinator]);
    writeFileSync(source, original.replace('output.toUpperCase()', '`<${output}>`'));
    up!.kill('SIGHUP');
    await waitForLine(
      up!,
      /^config reload: plugins loaded again; builders .*; writers .*ShoutResultHandler/,
      30_000,
    );
    // The Worker, in a child process of blockx up, got the SIGHUP too and loads it on its own.
    await eventually(
      async () => {
        const r = await submitQuiet();
        expect(r.code, `${r.stdout}\n${r.stderr}\n${output.text()}`).toBe(0);
        expect(r.stdout).toMatch(/ SUCCEEDED \["<hello, you>\."\]$/m);
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    // A source that does not load: reported, and the loaded one keeps serving. (Through the client:
    // blockx submit loads the plugins itself, and would refuse the broken package before sending.)
    writeFileSync(source, `${original}\nexport const broken = ;\n`);
    up!.kill('SIGHUP');
    await waitForLine(
      up!,
      /config reload: the plugins do not load; the running ones keep serving: .*shout/,
      30_000,
    );
    const client = new BlockxClient({ coordinator });
    try {
      const result = await client.run(
        JSON.parse(task('greet', [['you']], { suffix: '.' })) as ClientTaskInput,
      );
      expect(result).toMatchObject({ success: true, pluginResults: [{ result: ['<hello, you>.'] }] });
    } finally {
      client.close();
    }
    // Back to the original source: loaded again (the failed load never replaced the good one).
    writeFileSync(source, original);
    up!.kill('SIGHUP');
    await waitForLine(up!, /^config reload: plugins loaded again/, 30_000);
    await eventually(
      async () => expect((await submitQuiet()).stdout).toMatch(/ SUCCEEDED \["HELLO, YOU\."\]$/m),
      { timeoutMs: 30_000, intervalMs: 200 },
    );
  });
});
