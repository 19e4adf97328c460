// Config changes without a restart (issue 33, item 3; docs/storage.md § Changing the config of a
// running cluster), through the built CLI: a table added to the config file of a running `blockx up` is
// created and takes a task's writes without a restart; a changed column of it is refused with the
// migration it needs while the running declaration keeps serving. `blockx worker`: worker-reload.test.ts.
import type { ChildProcess } from 'node:child_process';
import { appendFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanEnv } from '../support/cli.js';
import { captureOutput, spawnTracked, stopGroup, waitForLine } from '../support/processes.js';
import { makeReloadProject, scoreRows, scoresTable, submitScores } from '../support/reload-project.js';

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
      readFileSync(project.file, 'utf8').replace('points: { type: integer', 'points: { type: text'),
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
