// What the built `blockx` says when the user got something wrong: one line that names the thing and what
// to do, the exit code of the contract (0 ok, 1 a task or validation failed, 2 usage / config /
// unreachable / address in use; src/cli/io.ts), and no stack trace. Also: names checked before run time
// (did you mean), JSON errors at line:column, COORDINATOR_LISTEN honoured, a user function's own stack
// frames under its FAILED line.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/ports.js';
import { captureOutput, spawnTracked, stopGroup, waitForLine } from '../support/processes.js';
import { BIN, REPO, cleanEnv, runBlockx } from '../support/cli.js';

const blockx = (args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs?: number) =>
  runBlockx(args, { env: cleanEnv(env), ...(timeoutMs === undefined ? {} : { timeoutMs }) });
const HELLO = path.join(REPO, 'examples/tasks/hello-world.json');
const BLOCK_TABLE = path.join(REPO, 'examples/tasks/block-table-transfers.json');

/** The non-empty lines of a stream, without the services' JSON log lines. */
function lines(text: string): string[] {
  return text.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('{"level"'));
}

const dir = mkdtempSync(path.join(tmpdir(), 'blockx-messages-'));
function file(name: string, text: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
}
function task(fn: string, callList: unknown[][] = [['x']]): string {
  return JSON.stringify({
    task_id: `${fn}-${Math.random().toString(36).slice(2)}`,
    functionCallConfig: { type: 'CallListCallConfig', config: { function: fn, callList } },
    resultHandler: { type: 'ReturnValueResultHandler', config: {} },
  });
}

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('an unreachable coordinator or worker', () => {
  let silent: Server | undefined;
  let silentPort = 0;
  const sockets = new Set<Socket>();

  beforeAll(async () => {
    // Accepts TCP connections and never speaks HTTP/2: what a TLS-only server looks like to plaintext.
    silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => silent!.listen(0, '127.0.0.1', resolve));
    silentPort = (silent.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => (silent ? silent.close(() => resolve()) : resolve()));
  });

  it('nothing listening: exit 2 within the connect bound, one line naming the address, no stack', async () => {
    const nowhere = `127.0.0.1:${await freePort()}`;
    const r = await blockx(['submit', HELLO, '--coordinator', nowhere]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.ms).toBeLessThan(15_000); // 5 s default bound + process start; ECONNREFUSED answers at once
    expect(lines(r.stderr)).toEqual([
      `blockx submit: cannot reach the coordinator at ${nowhere}: nothing is listening there (ECONNREFUSED): is the coordinator running, and on this port? (the address comes from --coordinator, else COORDINATOR_LISTEN, else the config)`,
    ]);
    expect(r.stdout).toBe('');
  });

  it('a worker address nobody listens on: the same, for `--worker`', async () => {
    const nowhere = `127.0.0.1:${await freePort()}`;
    const r = await blockx(['submit', HELLO, '--worker', nowhere]);
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toContain(`cannot reach the worker at ${nowhere}: nothing is listening there`);
  });

  it('a listener that never answers gRPC: the TLS-mismatch line, within --connect-timeout', async () => {
    const r = await blockx([
      'status',
      '--coordinator',
      `127.0.0.1:${silentPort}`,
      '--connect-timeout',
      '1000',
    ]);
    expect(r.code).toBe(2);
    expect(r.ms).toBeLessThan(10_000);
    expect(lines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toContain(
      `cannot reach the coordinator at 127.0.0.1:${silentPort}: it accepts connections but no gRPC session came up within 1000 ms: a TLS mismatch`,
    );
  });

  it('BLOCKX_CONNECT_TIMEOUT_MS sets the bound; a bad value is a usage error naming it', async () => {
    const slow = await blockx(['status', '--coordinator', `127.0.0.1:${silentPort}`], {
      BLOCKX_CONNECT_TIMEOUT_MS: '700',
    });
    expect(slow.code).toBe(2);
    expect(slow.stderr).toContain('within 700 ms');
    const bad = await blockx(['status'], { BLOCKX_CONNECT_TIMEOUT_MS: 'soon' });
    expect(bad.code).toBe(2);
    expect(lines(bad.stderr)).toEqual([
      'blockx: BLOCKX_CONNECT_TIMEOUT_MS must be an integer number of milliseconds in 1..600000, got soon',
    ]);
  });

  it('a host name that does not resolve: the DNS line', async () => {
    const r = await blockx(['status', '--coordinator', 'no-such-host.invalid:50051']);
    expect(r.code).toBe(2);
    expect(lines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toContain(
      'cannot reach the coordinator at no-such-host.invalid:50051: the host name does not resolve (DNS',
    );
  });

  it('status honours COORDINATOR_LISTEN (the address it names is the one it dials)', async () => {
    const nowhere = `127.0.0.1:${await freePort()}`;
    const r = await blockx(['status'], { COORDINATOR_LISTEN: nowhere });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`cannot reach the coordinator at ${nowhere}`);
  });
});

describe('an address already in use', () => {
  let held: Server | undefined;
  let port = 0;
  beforeAll(async () => {
    held = createServer();
    await new Promise<void>((resolve) => held!.listen(0, '127.0.0.1', resolve));
    port = (held.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => (held ? held.close(() => resolve()) : resolve()));
  });

  it('blockx up --listen on a taken port: exit 2, one line saying what to do, no stack', async () => {
    const r = await blockx(['up', '--no-demo', '--workers', '1', '--listen', `127.0.0.1:${port}`], {
      BLOCKX_STORAGE_URL: 'sqlite::memory:',
    });
    expect(r.code, r.stderr).toBe(2);
    expect(lines(r.stderr)).toEqual([
      `blockx: address 127.0.0.1:${port} is already in use (EADDRINUSE): stop the other process or pass --listen`,
    ]);
    expect(r.stderr).not.toMatch(/^\s+at /m);
  });

  it('blockx up --dashboard on a taken port: the line blames the flag, not the config', async () => {
    const r = await blockx(
      ['up', '--no-demo', '--workers', '1', '--listen', '127.0.0.1:0', '--dashboard', `127.0.0.1:${port}`],
      { BLOCKX_STORAGE_URL: 'sqlite::memory:' },
    );
    expect(r.code, r.stderr).toBe(2);
    expect(lines(r.stderr)).toEqual([
      `blockx: address 127.0.0.1:${port} is already in use (EADDRINUSE): stop the other process or pass another --dashboard address`,
    ]);
  });
});

describe('names and syntax checked before run time', () => {
  it('validate: a misspelt function, with did you mean and the functions available (exit 1)', async () => {
    const r = await blockx(['validate', file('misspelt-fn.json', task('helo_world'))]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /\/functionCallConfig\/config\/function: function "helo_world" is not in functions \(did you mean "hello_world"\?; available: .*hello_world.*\) \(rule: functions\.dir\)/,
    );
  });

  it('validate: a misspelt table in the builder and the writer, and a misspelt column (exit 1)', async () => {
    const text = JSON.stringify({
      task_id: 'misspelt-table',
      functionCallConfig: {
        type: 'BlockTableCallConfig',
        config: {
          function: 'erc20_transfers',
          table: 'event',
          chainId: 1,
          block: { number: 1 },
        },
      },
      resultHandler: {
        type: 'BlockWriteResultHandler',
        config: { table: 'token_transfer', chainId: 1, block: { number: 1 } },
      },
    });
    const r = await blockx(['validate', file('misspelt-table.json', text)]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /\/functionCallConfig\/config\/table: table "event" is not declared in the config \(did you mean "events"\?; declared: .*\) \(rule: tables\)/,
    );
    expect(r.stdout).toMatch(
      /\/resultHandler\/config\/table: table "token_transfer" is not declared in the config \(did you mean "token_transfers"\?/,
    );
    const example = JSON.parse((await import('node:fs')).readFileSync(BLOCK_TABLE, 'utf8')) as {
      functionCallConfig: { config: Record<string, unknown> };
    };
    example.functionCallConfig.config.where = { selectr: '0x' };
    const col = await blockx(['validate', file('misspelt-column.json', JSON.stringify(example))]);
    expect(col.code).toBe(1);
    expect(col.stdout).toMatch(
      /\/functionCallConfig\/config\/where\/selectr: column "selectr" is not a column of table "\w+" \(did you mean "selector"\?/,
    );
  });

  it('validate and submit: a JSON syntax error at line:column', async () => {
    const bad = file(
      'syntax.json',
      '{\n  "functionCallConfig": {\n    "type": "CallListCallConfig",\n  }\n}\n',
    );
    const v = await blockx(['validate', bad]);
    expect(v.code).toBe(1);
    expect(v.stdout).toContain(
      '/: not valid JSON at 4:3: expected a property name in double quotes, got "}" (rule: json)',
    );
    const s = await blockx(['submit', bad, '--coordinator', '127.0.0.1:1']);
    expect(s.code).toBe(1);
    expect(s.stderr).toMatch(
      /syntax\.json:4:3: not valid JSON: expected a property name in double quotes, got "}"/,
    );
    expect(s.stderr).toContain('nothing submitted');
  });

  it('an unloadable config (a YAML alias bomb): exit 2, no stack', async () => {
    const levels = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 8; i++) {
      const prev = String.fromCharCode(96 + i);
      const name = String.fromCharCode(97 + i);
      levels.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    const bomb = file('bomb.yaml', `${levels.join('\n')}\n`);
    const r = await blockx(['status', '--config', bomb]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('YAML cannot be expanded');
    expect(r.stderr).not.toMatch(/^\s+at /m);
    expect(r.stderr).not.toContain('unexpected error');
  });
});

describe('against a running `blockx up`', () => {
  let up: ChildProcess | undefined;
  let output: ReturnType<typeof captureOutput>;
  let coordinator = '';
  const functions = mkdtempSync(path.join(tmpdir(), 'blockx-messages-fns-'));
  const env = { BLOCKX_FUNCTIONS_DIR: functions };

  beforeAll(async () => {
    copyFileSync(path.join(REPO, 'functions/hello_world.ts'), path.join(functions, 'hello_world.ts'));
    writeFileSync(
      path.join(functions, 'thrower.mjs'),
      'function inner(x) {\n  throw new Error(`bad input ${x}`);\n}\nexport default async function thrower(_ctx, x) {\n  return inner(x);\n}\n',
    );
    up = spawnTracked(
      process.execPath,
      [BIN, 'up', '--no-demo', '--workers', '1', '--listen', '127.0.0.1:0'],
      {
        cwd: REPO,
        env: cleanEnv({
          ...env,
          BLOCKX_STORAGE_URL: 'sqlite::memory:',
          COORDINATOR_CPU_RED_LINE: '1',
          COORDINATOR_MEMORY_RED_LINE: '1',
        }),
      },
    );
    output = captureOutput(up);
    await waitForLine(up, /^serving; press Ctrl-C/, 45_000);
    coordinator = /coordinator listening on (\S+)/.exec(output.text())?.[1] ?? '';
    expect(coordinator).not.toBe('');
  });

  afterAll(async () => {
    if (up) await stopGroup(up, 'SIGTERM', 5_000);
    rmSync(functions, { recursive: true, force: true });
  });

  it('submit and status honour COORDINATOR_LISTEN; --coordinator overrides it', async () => {
    const s = await blockx(['submit', HELLO], { ...env, COORDINATOR_LISTEN: coordinator });
    expect(s.code, `${s.stderr}\n${output.text()}`).toBe(0);
    expect(s.stdout).toMatch(/ SUCCEEDED \["hello, ct2","hello, blockx"\]$/m);
    const st = await blockx(['status'], { COORDINATOR_LISTEN: coordinator });
    expect(st.code, st.stderr).toBe(0);
    expect(st.stdout).toContain(`coordinator ${coordinator}: ready`);
    const dead = `127.0.0.1:${await freePort()}`;
    const flag = await blockx(['status', '--coordinator', coordinator], { COORDINATOR_LISTEN: dead });
    expect(flag.code, flag.stderr).toBe(0);
  });

  it("a function's thrown error shows the function's own stack frames under the FAILED line", async () => {
    const r = await blockx(
      ['submit', file('thrower.json', task('thrower', [[1]])), '--coordinator', coordinator],
      env,
    );
    expect(r.code).toBe(1);
    const out = r.stdout.split('\n');
    const failed = out.findIndex((l) => / FAILED CALL_FAILED .*\(thrower\).*user: bad input 1$/.test(l));
    expect(failed, r.stdout).toBeGreaterThanOrEqual(0);
    expect(out.slice(failed + 1, failed + 3)).toEqual([
      `    at inner (${path.join(functions, 'thrower.mjs')}:2:9)`,
      `    at thrower (${path.join(functions, 'thrower.mjs')}:5:10)`,
    ]);
    expect(r.stdout).not.toMatch(/dist\/executor|node:internal/);
    // The result keeps them too (--json), and so does the worker's log line.
    const j = await blockx(
      ['submit', '--json', file('thrower2.json', task('thrower', [[2]])), '--coordinator', coordinator],
      env,
    );
    const result = JSON.parse(j.stdout.trim().split('\n')[0]!) as {
      failureMessage: string;
      codeVersion: string;
    };
    // The code version that ran it (the functions folder's content hash, docs/functions-deploy.md).
    expect(result.codeVersion).toMatch(/^[0-9a-f]{16}$/);
    expect(result.failureMessage).toContain(`\n    at inner (${path.join(functions, 'thrower.mjs')}:2:9)`);
    expect(output.text()).toContain(`at inner (${path.join(functions, 'thrower.mjs')}:2:9)`);
  });

  it('`up --help` says what --once runs', async () => {
    const r = await blockx(['up', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /run the demo \(a backfill of a generated 20-block chain\s+into token_transfers\)/,
    );
    expect(r.stdout).toContain('Examples:');
  });
});
