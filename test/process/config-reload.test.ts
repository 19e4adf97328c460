// Config changes without a restart (issue 33, item 3; docs/storage.md § Changing the config of a
// running cluster), through the built CLI: a table added to the config file of a running `blockx up` is
// created and takes a task's writes without a restart; a changed column of it is refused with the
// migration it needs while the running declaration keeps serving; `blockx validate --coordinator` names a
// table the running cluster does not serve yet, and passes once it does, and a function its Worker
// does not have. `blockx worker`:
// worker-reload.test.ts.
import type { ChildProcess } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanEnv, runBlockx } from '../support/cli.js';
import { captureOutput, spawnTracked, stopGroup, waitForLine } from '../support/processes.js';
import {
  RELOAD_CONFIG,
  makeReloadProject,
  scoreRows,
  scoresTable,
  scoresTask,
  submitScores,
} from '../support/reload-project.js';

describe('blockx up takes a config change without a restart', () => {
  let project = { dir: '', file: '' };
  let up: ChildProcess | undefined;
  let out: ReturnType<typeof captureOutput>;
  let coordinator = '';

  beforeAll(async () => {
    project = makeReloadProject('blockx-config-reload-');
    up = spawnTracked(
      process.execPath,
      [
        BIN,
        'up',
        '--config',
        project.file,
        '--no-demo',
        '--no-dashboard',
        '--workers',
        '1',
        '--listen',
        '127.0.0.1:0',
      ],
      // Red lines at 1: a busy test machine does not hold the worker out of placement.
      {
        cwd: project.dir,
        env: cleanEnv({ COORDINATOR_CPU_RED_LINE: '1', COORDINATOR_MEMORY_RED_LINE: '1' }),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    out = captureOutput(up);
    await waitForLine(up, /^serving/, 40_000);
    coordinator = /^coordinator listening on (\S+)/m.exec(out.text())?.[1] ?? '';
    expect(coordinator).not.toBe('');
  });

  afterAll(async () => {
    if (up) await stopGroup(up, 'SIGTERM', 10_000);
    if (project.dir) rmSync(project.dir, { recursive: true, force: true });
  });

  it('validate --coordinator names a table the running cluster does not serve yet, and passes once it does', async () => {
    // Another file that already declares the table, as a user's edited copy would.
    const edited = path.join(project.dir, 'edited.yaml');
    writeFileSync(edited, RELOAD_CONFIG + scoresTable('later'));
    const task = scoresTask(project.dir, 'later');
    const validate = (...more: string[]) =>
      runBlockx(['validate', '--config', edited, task, ...more], { env: cleanEnv(), cwd: project.dir });
    const offline = await validate();
    expect(offline.code, offline.stdout + offline.stderr).toBe(0);
    const online = await validate('--coordinator', coordinator);
    expect(online.code, online.stdout + online.stderr).toBe(1);
    expect(online.stdout).toMatch(
      new RegExp(`^ok {3}cluster ${coordinator}: 127\\.0\\.0\\.1:\\d+ \\(deployment block\\)$`, 'm'),
    );
    expect(online.stdout).toMatch(
      /^FAIL task later\.json\n {7}\/resultHandler\/config\/tables\/0: .*"later".* \(on the running cluster: worker 127\.0\.0\.1:\d+, which differs from this project: give it what it lacks \(config, plugin, function\), then reload it with SIGHUP, or save the file of blockx up, or restart it\) \(rule: /m,
    );
    const json = await validate('--coordinator', coordinator, '--json');
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: false,
      cluster: { coordinator, ok: true, workers: [expect.stringMatching(/\(deployment block\)$/)] },
    });
    appendFileSync(project.file, scoresTable('later'));
    await waitForLine(up as ChildProcess, /config reload: table "later" created/, 20_000);
    const after = await validate('--coordinator', coordinator);
    expect(after.code, after.stdout + after.stderr).toBe(0);
    // A function of another folder: ok here, not among the running Worker's functions.
    const other = path.join(project.dir, 'other');
    mkdirSync(other);
    writeFileSync(path.join(other, 'extra.ts'), 'export default () => 1;\n');
    writeFileSync(edited, (RELOAD_CONFIG + scoresTable('later')).replace('dir: functions', 'dir: other'));
    const extraTask = path.join(project.dir, 'extra.json');
    writeFileSync(
      extraTask,
      JSON.stringify({
        functionCallConfig: { type: 'CallListCallConfig', config: { function: 'extra', callList: [[]] } },
      }),
    );
    const fn = await runBlockx(['validate', '--config', edited, extraTask, '--coordinator', coordinator], {
      env: cleanEnv(),
      cwd: project.dir,
    });
    expect(fn.code, fn.stdout + fn.stderr).toBe(1);
    expect(fn.stdout).toMatch(
      /\/functionCallConfig\/config\/function: function "extra" is not in the functions of 127\.0\.0\.1:\d+ \(available: score\) \(on the running cluster: worker /,
    );
    // A coordinator that does not answer is a problem, not a pass.
    const gone = await validate('--coordinator', '127.0.0.1:1');
    expect(gone.code).toBe(1);
    expect(gone.stdout).toMatch(
      /^FAIL cluster 127\.0\.0\.1:1\n {7}cannot ask coordinator 127\.0\.0\.1:1 for its Workers: /m,
    );
  });

  it('a table added to the file is created, and a task writes it without a restart', async () => {
    appendFileSync(project.file, scoresTable('scores'));
    await waitForLine(up as ChildProcess, /config reload: table "scores" created/, 20_000);
    const r = await submitScores(project, ['--coordinator', coordinator], 'scores');
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ state: 'SUCCEEDED' });
    expect(scoreRows(project.dir, 'scores')).toEqual([
      { id: 1, points: 10 },
      { id: 2, points: 20 },
    ]);
  });

  it('a changed column is refused with the migration it needs; the table keeps serving as it was', async () => {
    writeFileSync(
      project.file,
      readFileSync(project.file, 'utf8').replace(
        /( {2}scores:\n {4}columns: \{ id: \{ type: integer \}, points: \{ type: )integer/,
        '$1text',
      ),
    );
    await waitForLine(up as ChildProcess, /config reload: table "scores" changed/, 20_000);
    expect(out.text()).toMatch(
      /config reload: table "scores" changed \(column "points" was integer, is text\): refused, .*The migration it needs: .*DROP TABLE "scores";/,
    );
    // Still the running declaration: an integer is written as before.
    const r = await submitScores(project, ['--coordinator', coordinator], 'scores');
    expect(JSON.parse(r.stdout)).toMatchObject({ state: 'SUCCEEDED' });
  });
});
