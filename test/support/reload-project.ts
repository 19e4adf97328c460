// A project for the config reload process tests (test/process/config-reload.test.ts,
// worker-reload.test.ts): a config with one table on SQLite, a function `score` that upserts
// `{id, points: id * 10}` into the table it is given, and the task that calls it.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { cleanEnv, runBlockx } from './cli.js';

export const RELOAD_CONFIG = `version: 1
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

/** The YAML of a writable table `name` (id, points), to append under `tables:`. */
export const scoresTable = (name: string): string => `  ${name}:
    columns: { id: { type: integer }, points: { type: integer, nullable: true } }
    primaryKey: [id]
    writable: true
`;

/** A temp folder with the config file and the functions folder. */
export function makeReloadProject(prefix: string): { dir: string; file: string } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  const file = path.join(dir, 'blockx.config.yaml');
  writeFileSync(file, RELOAD_CONFIG);
  mkdirSync(path.join(dir, 'functions'));
  writeFileSync(
    path.join(dir, 'functions', 'score.ts'),
    'export default async (_ctx: unknown, table: string, id: number) => ({ table, key: { id }, values: { points: id * 10 } });\n',
  );
  return { dir, file };
}

/** The file of a task that scores ids 1 and 2 into `table`. */
export function scoresTask(dir: string, table: string): string {
  const task = path.join(dir, `${table}.json`);
  writeFileSync(
    task,
    JSON.stringify({
      functionCallConfig: {
        type: 'CallListCallConfig',
        config: {
          function: 'score',
          callList: [
            [table, 1],
            [table, 2],
          ],
        },
      },
      resultHandler: { type: 'TableUpsertsResultHandler', config: { tables: [table] } },
    }),
  );
  return task;
}

/** `blockx submit` of scoresTask; `target` is `--coordinator A` or `--worker A`. */
export function submitScores(project: { dir: string; file: string }, target: string[], table: string) {
  const task = scoresTask(project.dir, table);
  return runBlockx(['submit', task, '--config', project.file, ...target, '--json'], {
    env: cleanEnv(),
    cwd: project.dir,
  });
}

/** The rows of `table` in the project's database. */
export function scoreRows(dir: string, table: string): unknown[] {
  const db = new Database(path.join(dir, 'data.db'), { readonly: true });
  try {
    return db.prepare(`SELECT id, points FROM ${table} ORDER BY id`).all();
  } finally {
    db.close();
  }
}
