// `blockx worker` reads its config file again on SIGHUP and when the file changes (issue 33, item 3;
// docs/configuration.md § Changing the config of a running process), through the built CLI: a table
// added to the file is created and takes a task's writes without a restart; SIGHUP alone (the file's
// modification time put back, so the watch cannot see it) applies a change; a changed column is refused
// with its migration and a changed deployment section waits for a restart, while the Worker keeps
// serving the running config; a plugin package of plugins.dirs whose source changed is loaded again on
// SIGHUP (docs/plugins.md § Loading plugins again).
import type { ChildProcess } from 'node:child_process';
import { appendFileSync, cpSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlockxClient } from '../../src/client/client.js';
import type { ClientTaskInput } from '../../src/client/index.js';
import { BIN, REPO, cleanEnv } from '../support/cli.js';
import { captureOutput, spawnTracked, stopGroup, waitForLine } from '../support/processes.js';
import { makeReloadProject, scoreRows, scoresTable, submitScores } from '../support/reload-project.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('blockx worker takes a config change on SIGHUP or a file change', () => {
  let project = { dir: '', file: '' };
  let worker: ChildProcess | undefined;
  let out: ReturnType<typeof captureOutput>;
  let address = '';
  const file = () => project.file;

  beforeAll(async () => {
    project = makeReloadProject('blockx-worker-reload-');
    // The project's own writer plugin (a copy of the third-party fixture) and a function for it.
    mkdirSync(path.join(project.dir, 'plugins'));
    cpSync(path.join(REPO, 'test/fixtures/third-party-plugin'), path.join(project.dir, 'plugins', 'shout'), {
      recursive: true,
    });
    writeFileSync(
      path.join(project.dir, 'functions', 'greet.ts'),
      'export default (_ctx: unknown, n: string) => `hi ${n}`;\n',
    );
    writeFileSync(
      file(),
      readFileSync(file(), 'utf8').replace('version: 1\n', 'version: 1\nplugins:\n  dirs: [plugins]\n'),
    );
    worker = spawnTracked(
      process.execPath,
      [BIN, 'worker', '--deployment', 'block', '--config', project.file],
      {
        cwd: project.dir,
        env: cleanEnv({ WORKER_LISTEN: '127.0.0.1:0' }),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    out = captureOutput(worker);
    await waitForLine(worker, /^worker listening on/, 40_000);
    address = /^worker listening on (\S+)/m.exec(out.text())?.[1] ?? '';
    expect(address).not.toBe('');
  });

  afterAll(async () => {
    if (worker) await stopGroup(worker, 'SIGTERM', 10_000);
    if (project.dir) rmSync(project.dir, { recursive: true, force: true });
  });

  const submit = (table: string) => submitScores(project, ['--worker', address], table);

  it('a table added to the file is created, and a task writes it without a restart', async () => {
    appendFileSync(file(), scoresTable('scores'));
    await waitForLine(worker as ChildProcess, /config reload: table \\"?scores\\"? created/, 20_000);
    const r = await submit('scores');
    expect(r.code, r.stdout + r.stderr + out.text()).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ state: 'SUCCEEDED' });
    expect(scoreRows(project.dir, 'scores')).toEqual([
      { id: 1, points: 10 },
      { id: 2, points: 20 },
    ]);
  });

  it('SIGHUP reads the file again where the watch sees no change', async () => {
    // A fixed modification time (whole seconds, so putting it back is exact), seen by the watch first.
    const fixed = 1_700_000_000;
    utimesSync(file(), fixed, fixed);
    await sleep(1_200);
    appendFileSync(file(), scoresTable('ranks'));
    utimesSync(file(), fixed, fixed);
    // The watch polls every 500 ms: two polls pass without a reload, so the next one is SIGHUP's.
    await sleep(1_200);
    expect(out.text()).not.toMatch(/table \\"?ranks\\"? created/);
    worker!.kill('SIGHUP');
    await waitForLine(worker as ChildProcess, /config reload: table \\"?ranks\\"? created/, 20_000);
    const r = await submit('ranks');
    expect(JSON.parse(r.stdout)).toMatchObject({ state: 'SUCCEEDED' });
    expect(scoreRows(project.dir, 'ranks')).toHaveLength(2);
  });

  it('a changed column is refused with its migration, a changed deployment waits for a restart; it keeps serving', async () => {
    writeFileSync(
      file(),
      readFileSync(file(), 'utf8')
        .replace('points: { type: integer', 'points: { type: text')
        .replace('    kind: block\n', '    kind: block\n    worker:\n      taskSlots: 3\n'),
    );
    await waitForLine(worker as ChildProcess, /config reload: deployments changed/, 20_000);
    expect(out.text()).toMatch(
      /config reload: table \\"?scores\\"? changed \(column \\"?points\\"? was integer, is text\): refused, .*The migration it needs: .*DROP TABLE \\"?scores\\"?;/,
    );
    expect(out.text()).toMatch(/config reload: deployments changed; it takes effect after a restart/);
    expect(worker!.exitCode).toBeNull();
    const r = await submit('scores');
    expect(JSON.parse(r.stdout)).toMatchObject({ state: 'SUCCEEDED' });
  });

  it('a plugin whose source changed is loaded again on SIGHUP; the next task runs it', async () => {
    const shout = async (): Promise<unknown> => {
      const client = new BlockxClient({ worker: address });
      try {
        const task = {
          functionCallConfig: {
            type: 'CallListCallConfig',
            config: { function: 'greet', callList: [['you']] },
          },
          resultHandler: { type: 'ShoutResultHandler', config: {} },
        };
        const result = await client.run(task as ClientTaskInput);
        return result.pluginResults?.[0]?.result;
      } finally {
        client.close();
      }
    };
    expect(await shout()).toEqual(['HI YOU!']);
    const source = path.join(project.dir, 'plugins', 'shout', 'src', 'index.js');
    writeFileSync(source, readFileSync(source, 'utf8').replace('output.toUpperCase()', '`<${output}>`'));
    worker!.kill('SIGHUP');
    await waitForLine(worker as ChildProcess, /config reload: plugins loaded again/, 30_000);
    expect(await shout()).toEqual(['<hi you>!']);
  });
});
