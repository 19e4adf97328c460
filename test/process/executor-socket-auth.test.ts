// Who may speak for the executor (docs/security.md, "The executor socket"), against real executor
// processes: the spawn secret opens one connection only, it is in neither the executor's argv nor its
// environment (so user functions cannot read it there), a silent connection is closed after the Hello
// bound, and a hand-started `blockx executor --socket PATH` gets its secret with `--secret-fd`.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FunctionCodeView } from '../../src/executor/code-epochs.js';
import { packagePath } from '../../src/kernel/package-root.js';
import { ExecutorLink, type ExecutorLinkEvent } from '../../src/services/call-host/adapters/executor-link.js';
import { ExecutorHarness, FIXTURE_FUNCTIONS } from '../integration/executor/executor-harness.js';
import { SECRET_SHAPE, SocketClient } from '../support/socket-client.js';
import { eventually } from '../support/eventually.js';

const leakDir = mkdtempSync(join(tmpdir(), 'bx-leak-'));
writeFileSync(join(leakDir, 'package.json'), '{"type":"module"}');
// What a user function can see of its process (its thread's argv and env, and the process's own from
// /proc): no secret may be among it.
writeFileSync(
  join(leakDir, 'leak.mjs'),
  `import { readFileSync } from 'node:fs';
export default () => ({
  argv: process.argv,
  env: { ...process.env },
  cmdline: readFileSync('/proc/self/cmdline', 'utf8'),
  environ: readFileSync('/proc/self/environ', 'utf8'),
});\n`,
);
const leakView = new FunctionCodeView({ dir: leakDir });

const secrets: string[] = [];
const warnings: string[] = [];
let h: ExecutorHarness;

beforeAll(async () => {
  h = new ExecutorHarness({
    functionsDir: leakDir,
    helloTimeoutMs: 300,
    log: (level, message) => void (level === 'warn' && warnings.push(message)),
  });
  // Record the secrets the supervisor hands out (the test's only way to know them).
  const issue = h.link.issueSecret.bind(h.link);
  h.link.issueSecret = () => {
    const secret = issue();
    secrets.push(secret);
    return secret;
  };
  await h.start();
});

afterAll(async () => {
  await h?.stop();
  rmSync(leakDir, { recursive: true, force: true });
});

describe('the spawn secret', () => {
  it('is 32 random bytes in hex, and not in the argv or environment a user function sees', async () => {
    expect(secrets).toHaveLength(1);
    expect(secrets[0]).toMatch(/^[0-9a-f]{64}$/);
    const done = await h.run({ function: 'leak', codeEpoch: await leakView.pinCurrent() });
    expect(done.type).toBe('callCompleted');
    const seen = JSON.stringify(done.type === 'callCompleted' ? done.value : null);
    expect(seen).toContain('--secret-fd'); // the process's command line, read from /proc
    expect(seen).not.toContain(secrets[0]);
  });

  it('opens one connection only: replayed after use it is refused, and the executor stays', async () => {
    const pid = h.supervisor.pid;
    const replay = await SocketClient.connect(h.link.socketPath);
    replay.hello(secrets[0]);
    await replay.closed;
    expect(replay.receivedBytes).toBe(0);
    expect(warnings.at(-1)).toMatch(/wrong or already used secret/);
    const done = await h.run({ function: 'leak', codeEpoch: await leakView.pinCurrent() });
    expect(done.type).toBe('callCompleted');
    expect(h.supervisor.pid).toBe(pid);
    expect(h.supervisor.starts).toBe(1);
    expect(h.count('executorLost')).toBe(0);
  });

  it('a connection that says nothing is closed after the Hello bound, without touching the executor', async () => {
    const silent = await SocketClient.connect(h.link.socketPath);
    await silent.closed;
    expect(silent.receivedBytes).toBe(0);
    expect(warnings.at(-1)).toMatch(/no Hello within 300 ms/);
    expect(h.supervisor.ready).toBe(true);
    expect(h.count('executorLost')).toBe(0);
    expect(warnings.join('\n')).not.toMatch(SECRET_SHAPE);
  });
});

describe('blockx executor --socket PATH, started by hand', () => {
  let socketDir: string;
  let link: ExecutorLink;
  const events: ExecutorLinkEvent[] = [];
  const linkWarnings: string[] = [];

  beforeAll(async () => {
    socketDir = mkdtempSync(join(tmpdir(), 'bx-hand-'));
    link = new ExecutorLink({
      socketDir,
      onEvent: (ev) => events.push(ev),
      log: (level, message) => void (level === 'warn' && linkWarnings.push(message)),
    });
    await link.listen();
  });
  afterAll(async () => {
    await link?.close();
    rmSync(socketDir, { recursive: true, force: true });
  });

  const startExecutor = (extra: string[], stdin: string | undefined) => {
    const child = spawn(
      process.execPath,
      [packagePath('bin', 'blockx.js'), 'executor', '--socket', link.socketPath, ...extra],
      { stdio: [stdin === undefined ? 'ignore' : 'pipe', 'ignore', 'pipe'] },
    );
    child.stdin?.end(stdin);
    let stderr = '';
    child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<{ code: number | null; stderr: string }>((resolve) =>
      child.once('exit', (code) => resolve({ code, stderr })),
    );
    return { child, exited };
  };

  it('without a secret it is refused, and stops', async () => {
    link.issueSecret();
    const { exited } = startExecutor(['--functions-dir', FIXTURE_FUNCTIONS], undefined);
    const { code, stderr } = await exited;
    expect(code).toBe(0);
    expect(stderr).toContain('stopped: connection closed');
    expect(linkWarnings.at(-1)).toMatch(/its Hello carries no secret/);
    expect(events.filter((e) => e.type === 'executorReady')).toHaveLength(0);
  });

  it('with --secret-fd 0 it reads the secret from stdin and becomes the executor', async () => {
    const secret = link.issueSecret();
    const { child, exited } = startExecutor(
      ['--functions-dir', FIXTURE_FUNCTIONS, '--secret-fd', '0', '--threads', '1'],
      `${secret}\n`,
    );
    try {
      await eventually(() => events.some((e) => e.type === 'executorReady'), {
        timeoutMs: 20_000,
        message: 'the executor ready',
      });
      expect(link.executorPid).toBe(child.pid);
    } finally {
      await link.close();
    }
    expect((await exited).code).toBe(0);
  });
});
