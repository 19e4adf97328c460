// Python functions through the built CLI: `blockx up --no-demo` (bin/blockx.js → dist/) over a functions
// folder with `.py` functions, tasks submitted with `blockx submit`: a Python function's return values,
// a JS function calling a Python one, and the Python erc20_transfers writing the token_transfers rows
// the TypeScript decoder expects (docs/executor.md § Python functions on a Worker).
import { spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenTransfersOf } from '../../src/services/storage/block-data/index.js';
import { captureOutput, spawnTracked, stopGroup, waitForLine } from '../support/processes.js';
import { BIN, REPO, cleanEnv, runBlockx } from '../support/cli.js';

const BLOCKS = [1, 2, 3, 4];

const dir = mkdtempSync(path.join(tmpdir(), 'blockx-python-'));
const functionsDir = path.join(dir, 'functions');
const db = path.join(dir, 'chain.db');

function env(): NodeJS.ProcessEnv {
  return cleanEnv({
    BLOCKX_STORAGE_URL: `sqlite:${db}`,
    BLOCKX_FUNCTIONS_DIR: functionsDir,
    COORDINATOR_CPU_RED_LINE: '1',
    COORDINATOR_MEMORY_RED_LINE: '1',
  });
}

const blockx = (args: string[], timeoutMs?: number) =>
  runBlockx(args, { env: env(), ...(timeoutMs === undefined ? {} : { timeoutMs }) });

const file = (name: string, value: unknown): string => {
  const p = path.join(dir, name);
  writeFileSync(p, typeof value === 'string' ? value : JSON.stringify(value));
  return p;
};

let up: ChildProcess | undefined;
let output: ReturnType<typeof captureOutput>;
let worker = '';

beforeAll(async () => {
  mkdirSync(functionsDir);
  for (const f of ['hello_world.py', 'erc20_transfers.py'])
    copyFileSync(path.join(REPO, 'examples/python-functions', f), path.join(functionsDir, f));
  writeFileSync(path.join(functionsDir, 'package.json'), '{"type":"module"}');
  writeFileSync(
    path.join(functionsDir, 'greet_both.ts'),
    'export default async (ctx, a, b) => [await ctx.call("hello_world", a), await ctx.call("hello_world", b)];\n',
  );
  writeFileSync(path.join(functionsDir, 'calls_missing.ts'), 'export default (ctx) => ctx.call("nope");\n');
  const gen = spawnSync(
    process.execPath,
    [BIN, 'data', 'generate', '--chain', '1', '--blocks', String(BLOCKS.length + 1)],
    { cwd: REPO, env: env(), encoding: 'utf8', timeout: 40_000 },
  );
  expect(gen.status, gen.stderr).toBe(0);
  up = spawnTracked(process.execPath, [BIN, 'up', '--no-demo', '--workers', '1', '--listen', '127.0.0.1:0'], {
    cwd: REPO,
    env: env(),
  });
  output = captureOutput(up);
  await waitForLine(up, /^serving; press Ctrl-C/, 45_000);
  worker = /worker #\d+ listening on (\S+)/.exec(output.text())?.[1] ?? '';
  expect(worker).not.toBe('');
});

afterAll(async () => {
  try {
    if (up) await stopGroup(up, 'SIGTERM', 5_000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

describe('Python functions on `blockx up`', () => {
  it('runs a Python function, and a JS function that calls it, from `blockx submit`', async () => {
    const tasks = [
      {
        task_id: `py-hello-${Date.now()}`,
        functionCallConfig: {
          type: 'CallListCallConfig',
          config: { function: 'hello_world', callList: [['ct2'], ['blockx']] },
        },
        resultHandler: { type: 'ReturnValueResultHandler', config: {} },
      },
      {
        task_id: `js-calls-py-${Date.now()}`,
        functionCallConfig: {
          type: 'CallListCallConfig',
          config: { function: 'greet_both', callList: [['a', 'b']] },
        },
        resultHandler: { type: 'ReturnValueResultHandler', config: {} },
      },
    ];
    const r = await blockx([
      'submit',
      file('hello.jsonl', tasks.map((t) => JSON.stringify(t)).join('\n')),
      '--worker',
      worker,
    ]);
    expect(r.code, `${r.stdout}\n${r.stderr}\n${output.text()}`).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(`^${tasks[0]!.task_id} SUCCEEDED \\["hello, ct2","hello, blockx"\\]$`, 'm'),
    );
    expect(r.stdout).toMatch(
      new RegExp(`^${tasks[1]!.task_id} SUCCEEDED \\[\\["hello, a","hello, b"\\]\\]$`, 'm'),
    );
  });

  it('a call of a function no file defines fails with FUNCTION_NOT_FOUND listing both languages', async () => {
    // A subcall names its function at run time: the submit-time check cannot see it.
    const task = {
      task_id: `nope-${Date.now()}`,
      functionCallConfig: {
        type: 'CallListCallConfig',
        config: { function: 'calls_missing', callList: [[]] },
      },
      resultHandler: { type: 'ReturnValueResultHandler', config: {} },
    };
    const r = await blockx(['submit', file('nope.json', task), '--worker', worker]);
    expect(r.code, `${r.stdout}\n${r.stderr}`).not.toBe(0);
    expect(r.stdout + r.stderr).toMatch(
      /function "nope" not found in \S+ \(code epoch \w+\); expected nope\.ts, nope\.mjs, nope\.js or nope\.py; available: calls_missing \(JS\), erc20_transfers \(Python\), greet_both \(JS\), hello_world \(Python\)/,
    );
  });

  it('the Python erc20_transfers writes the token_transfers rows of each block', async () => {
    const tasks = BLOCKS.map((n) => ({
      task_id: `py-erc20-${n}-${Date.now()}`,
      functionCallConfig: {
        type: 'BlockTableCallConfig',
        config: { function: 'erc20_transfers', table: 'events', chainId: 1, block: { number: n } },
      },
      resultHandler: {
        type: 'BlockWriteResultHandler',
        config: { table: 'token_transfers', chainId: 1, block: { number: n } },
      },
      taskTimeoutMs: 30_000,
    }));
    const r = await blockx([
      'submit',
      file('erc20.jsonl', tasks.map((t) => JSON.stringify(t)).join('\n')),
      '--worker',
      worker,
    ]);
    expect(r.code, `${r.stdout}\n${r.stderr}\n${output.text()}`).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(`^${BLOCKS.length} task\\(s\\): ${BLOCKS.length} succeeded, 0 failed`, 'm'),
    );

    const sqlite = new Database(db, { readonly: true });
    try {
      let total = 0;
      for (const n of BLOCKS) {
        const events = (
          sqlite
            .prepare(
              `SELECT e.* FROM events e JOIN blocks b
                 ON b.chain_id = e.chain_id AND b.number = e.block_number AND b.hash = e.block_hash
               WHERE e.chain_id = 1 AND e.block_number = ? AND b.canonical = 1 ORDER BY e.idx`,
            )
            .all(n) as Record<string, unknown>[]
        ).map((e) => ({ ...e, topics: JSON.parse(e.topics as string) as unknown }));
        const expected = tokenTransfersOf(events);
        const rows = sqlite
          .prepare(
            `SELECT chain_id, block_number, log_idx, token, from_address, to_address, amount
               FROM token_transfers WHERE chain_id = 1 AND block_number = ? ORDER BY log_idx`,
          )
          .all(n);
        expect(rows).toEqual(expected);
        total += rows.length;
      }
      expect(total).toBeGreaterThan(0);
    } finally {
      sqlite.close();
    }
  });
});
