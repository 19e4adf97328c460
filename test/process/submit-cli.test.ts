// Process-level tests of `blockx submit` and `blockx status` against a real one-machine cluster
// (`blockx up --no-demo --workers 2`), all through the built CLI (bin/blockx.js → dist/).
//
// The cluster's red lines are raised to 1 (COORDINATOR_CPU/MEMORY_RED_LINE) so that a busy test machine
// does not make the Coordinator filter its Workers as overloaded; storage is in memory.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlockxClient } from '../../src/client/client.js';
import { captureOutput, spawnTracked, stopGroup, waitForLine } from '../support/processes.js';
import { BIN, REPO, cleanEnv, runBlockx } from '../support/cli.js';

const blockx = runBlockx;

function helloTask(name: string, taskId?: string): Record<string, unknown> {
  return {
    ...(taskId ? { task_id: taskId } : {}),
    functionCallConfig: {
      type: 'CallListCallConfig',
      config: { function: 'hello_world', callList: [[name]] },
    },
    resultHandler: { type: 'ReturnValueResultHandler', config: {} },
  };
}

describe('blockx submit / status against `blockx up`', () => {
  let up: ChildProcess | undefined;
  let output: ReturnType<typeof captureOutput>;
  let coordinator = '';
  let workers: string[] = [];
  const dir = mkdtempSync(path.join(tmpdir(), 'blockx-submit-'));
  const file = (name: string, text: string) => {
    const p = path.join(dir, name);
    writeFileSync(p, text);
    return p;
  };

  beforeAll(async () => {
    up = spawnTracked(
      process.execPath,
      [BIN, 'up', '--no-demo', '--workers', '2', '--listen', '127.0.0.1:0'],
      {
        cwd: REPO,
        env: cleanEnv({
          BLOCKX_STORAGE_URL: 'sqlite::memory:',
          COORDINATOR_CPU_RED_LINE: '1',
          COORDINATOR_MEMORY_RED_LINE: '1',
        }),
      },
    );
    output = captureOutput(up);
    await waitForLine(up, /^serving; press Ctrl-C/, 45_000);
    const text = output.text();
    coordinator = /coordinator listening on (\S+)/.exec(text)?.[1] ?? '';
    workers = [...text.matchAll(/worker #\d+ listening on (\S+)/g)].map((m) => m[1] as string);
    expect(coordinator).not.toBe('');
    expect(workers).toHaveLength(2);
  });

  afterAll(async () => {
    if (up) await stopGroup(up, 'SIGTERM', 5_000);
  });

  it('runs 500 hello_world tasks from a JSONL file: exit 0, 500 SUCCEEDED lines and a summary', async () => {
    const lines = Array.from({ length: 500 }, (_, i) => JSON.stringify(helloTask(`n${i}`)));
    const jsonl = file('many.jsonl', `${lines.join('\n')}\n`);
    const r = await blockx(['submit', jsonl, '--coordinator', coordinator]);
    expect(r.code, `${r.stderr}\n${output.text()}`).toBe(0);
    const results = r.stdout.split('\n').filter((l) => / (SUCCEEDED|FAILED) /.test(l));
    expect(results).toHaveLength(500);
    expect(results.every((l) => / SUCCEEDED \["hello, n\d+"\]$/.test(l))).toBe(true);
    const ids = new Set(results.map((l) => l.split(' ')[0]));
    expect(ids.size).toBe(500);
    expect(r.stdout).toMatch(/^500 task\(s\): 500 succeeded, 0 failed in /m);
  });

  it('a task whose function does not exist is refused before anything is submitted: exit 1, did you mean', async () => {
    const bad = {
      task_id: `missing-fn-${Date.now()}`,
      functionCallConfig: {
        type: 'CallListCallConfig',
        config: { function: 'hello_wrld', callList: [['x']] },
      },
    };
    const r = await blockx([
      'submit',
      file('bad-fn.json', JSON.stringify(bad)),
      file('good.json', JSON.stringify(helloTask('ok'))),
      '--coordinator',
      coordinator,
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /bad-fn\.json: \/functionCallConfig\/config\/function: function "hello_wrld" is not in .*functions \(did you mean "hello_world"\?; available: .*\) \(rule: functions\.dir\)/,
    );
    expect(r.stderr).toContain('nothing submitted');
    expect(r.stdout).not.toContain('SUCCEEDED');
  });

  it('an invalid task exits 1 before anything is submitted, naming FILE:LINE and the schema path', async () => {
    const validId = `never-submitted-${Date.now()}`;
    const jsonl = file(
      'mixed.jsonl',
      [
        JSON.stringify(helloTask('fine', validId)),
        '{not json',
        JSON.stringify({
          task_id: 'x2',
          functionCallConfig: { type: 'CallListCallConfig', config: { function: 'hello_world' } },
        }),
      ].join('\n'),
    );
    const r = await blockx(['submit', jsonl, '--coordinator', coordinator]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/mixed\.jsonl:2:2: not valid JSON: expected a property name in double quotes/);
    expect(r.stderr).toMatch(/mixed\.jsonl:3: \/functionCallConfig\/config: .*callList.*\(rule: required\)/);
    expect(r.stderr).toContain('nothing submitted');
    expect(r.stdout).not.toContain('SUCCEEDED');
    // The valid task on line 1 reached no Worker.
    const client = new BlockxClient({ coordinator });
    try {
      for (const w of workers) {
        await expect(client.getResult(validId, { workerAddr: w })).rejects.toMatchObject({
          code: 'NOT_FOUND',
        });
      }
    } finally {
      client.close();
    }
  });

  it('reads a task from stdin (-), straight to one worker (--worker), with --json', async () => {
    const r = await blockx(['submit', '-', '--worker', workers[0] as string, '--json'], {
      input: JSON.stringify(helloTask('stdin')),
    });
    expect(r.code, r.stderr).toBe(0);
    const rows = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      source: '<stdin>',
      state: 'SUCCEEDED',
      success: true,
      workerAddr: workers[0],
      pluginResults: [{ pluginName: 'ReturnValueResultHandler', result: ['hello, stdin'] }],
    });
    expect(r.stderr).toMatch(/^1 task\(s\): 1 succeeded, 0 failed/m);
  });

  it('usage errors exit 2', async () => {
    const r = await blockx(['submit', 'x.json', '--coordinator', 'a:1', '--worker', 'b:2']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('not both');
    expect((await blockx(['submit', 'x.json', '--concurrency', '0'])).code).toBe(2);
  });

  it('blockx status lists both workers with their slots and routability', async () => {
    const r = await blockx(['status', '--coordinator', coordinator]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/coordinator \S+: ready · 2 worker\(s\)/);
    expect(r.stdout).toMatch(
      /^WORKER +REGISTRY +SLOTS +RESERVED +RUNNING +FREE +CPU +MEM +ERRORS +BREAKER +HEARTBEAT +CODE +ROUTABLE$/m,
    );
    for (const w of workers) {
      expect(r.stdout).toMatch(new RegExp(`^${w.replace(/\./g, '\\.')} +legacy /blockx/workers/ +64 `, 'm'));
      // Local mode has a code version too: the functions folder's epoch id (docs/functions-deploy.md).
      expect(r.stdout).toMatch(new RegExp(`^${w.replace(/\./g, '\\.')} .* ago +[0-9a-f]{16} +yes$`, 'm'));
    }

    const json = await blockx(['status', '--coordinator', coordinator, '--json']);
    expect(json.code).toBe(0);
    const view = JSON.parse(json.stdout) as {
      ready: boolean;
      workers: { workerAddr: string; taskSlots: number }[];
    };
    expect(view.ready).toBe(true);
    expect(view.workers.map((w) => w.workerAddr).sort()).toEqual([...workers].sort());
    expect(view.workers.every((w) => w.taskSlots === 64)).toBe(true);
  });

  it('blockx status against nothing listening exits 2 (unreachable), naming the address', async () => {
    const r = await blockx(['status', '--coordinator', '127.0.0.1:1', '--timeout', '2000']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^blockx status: cannot reach the coordinator at 127\.0\.0\.1:1: nothing is listening there/,
    );
  });
});
