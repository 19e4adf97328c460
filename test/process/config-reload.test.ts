// Config changes without a restart (issue 33, item 3; docs/storage.md § Changing the config of a
// running cluster), through the built CLI: a table added to the config file of a running `blockx up` is
// created and takes a task's writes without a restart; a changed column of it is refused with the
// migration it needs while the running declaration keeps serving.
import type { ChildProcess } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanEnv, runBlockx } from '../support/cli.js';
import { captureOutput, spawnTracked, stopGroup, waitForLine } from '../support/processes.js';

const CONFIG = `version: 1
storage:
  url: sqlite:./data.db
functions:
  dir: functions
deployments:
  block:
    kind: block
tables:
  notes:
    columns: { id: { type: integer }, body: { type: text, nullable: true } }
    primaryKey: [id]
    writable: true
`;
const SCORES = `  scores:
    columns: { id: { type: integer }, points: { type: integer, nullable: true } }
    primaryKey: [id]
    writable: true
`;

describe('blockx up takes a config change without a restart', () => {
  let dir = '';
  let file = '';
  let up: ChildProcess | undefined;
  let out: ReturnType<typeof captureOutput>;
  let coordinator = '';

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'blockx-config-reload-'));
    file = path.join(dir, 'blockx.config.yaml');
    writeFileSync(file, CONFIG);
    mkdirSync(path.join(dir, 'functions'));
    writeFileSync(
      path.join(dir, 'functions', 'score.ts'),
      "export default async (_ctx: unknown, id: number) => ({ table: 'scores', key: { id }, values: { points: id * 10 } });\n",
    );
    up = spawnTracked(
      process.execPath,
      [
        BIN,
        'up',
        '--config',
        file,
        '--no-demo',
        '--no-dashboard',
        '--workers',
        '1',
        '--listen',
        '127.0.0.1:0',
      ],
      // Red lines at 1: a busy test machine does not hold the worker out of placement.
      {
        cwd: dir,
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
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a table added to the file is created, and a task writes it without a restart', async () => {
    appendFileSync(file, SCORES);
    await waitForLine(up as ChildProcess, /config reload: table "scores" created/, 20_000);
    const task = path.join(dir, 'task.json');
    writeFileSync(
      task,
      JSON.stringify({
        functionCallConfig: {
          type: 'CallListCallConfig',
          config: { function: 'score', callList: [[1], [2]] },
        },
        resultHandler: { type: 'TableUpsertsResultHandler', config: { tables: ['scores'] } },
      }),
    );
    const r = await runBlockx(['submit', task, '--config', file, '--coordinator', coordinator, '--json'], {
      env: cleanEnv(),
      cwd: dir,
    });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ state: 'SUCCEEDED' });
    const db = new Database(path.join(dir, 'data.db'), { readonly: true });
    try {
      expect(db.prepare('SELECT id, points FROM scores ORDER BY id').all()).toEqual([
        { id: 1, points: 10 },
        { id: 2, points: 20 },
      ]);
    } finally {
      db.close();
    }
  });

  it('a changed column is refused with the migration it needs; the table keeps serving as it was', async () => {
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace('points: { type: integer', 'points: { type: text'),
    );
    await waitForLine(up as ChildProcess, /config reload: table "scores" changed/, 20_000);
    expect(out.text()).toMatch(
      /config reload: table "scores" changed \(column "points" was integer, is text\): refused, .*The migration it needs: .*DROP TABLE "scores";/,
    );
    // Still the running declaration: an integer is written as before.
    const task = path.join(dir, 'task.json');
    const r = await runBlockx(['submit', task, '--config', file, '--coordinator', coordinator, '--json'], {
      env: cleanEnv(),
      cwd: dir,
    });
    expect(JSON.parse(r.stdout)).toMatchObject({ state: 'SUCCEEDED' });
  });
});
