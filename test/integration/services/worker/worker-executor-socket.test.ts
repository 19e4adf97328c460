// The executor socket behind a real Worker (docs/security.md, "The executor socket"): it sits in a
// private 0700 directory and is 0600; a bare connect or an impostor that says Hello without the spawn
// secret is closed, gets no frame (no function source, no call), and never displaces the real
// Executor: the task running meanwhile succeeds on it, and no executor is declared lost.
import { existsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SECRET_SHAPE, SocketClient } from '../../../support/socket-client.js';
import { eventually } from '../../../support/eventually.js';
import { killExecutor, startWorkerWithExecutor, type WorkerWithExecutor } from './worker-executor-harness.js';
import {
  callListTask,
  makeFunctionsDir,
  outputsOf,
  removeDir,
  SLEEPY,
  submit,
  terminalOf,
} from '../../../support/worker-tasks.js';

// Real executor processes started from src/ under tsx: the bounds these tests had in the process tier.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

let functionsDir = '';
let w: WorkerWithExecutor | undefined;

beforeAll(async () => {
  functionsDir = makeFunctionsDir({ 'sleepy.mjs': SLEEPY });
  w = await startWorkerWithExecutor({ functionsDir, worker: { taskMaxInflightCalls: 4 } });
});

afterAll(async () => {
  try {
    await w?.close();
  } finally {
    killExecutor(w);
    removeDir(functionsDir);
  }
});

const refusals = (logs: readonly string[]) =>
  logs.filter((l) => l.startsWith('warn refused a connection to the executor socket'));

describe('the executor socket of a running Worker', () => {
  it('lives in a 0700 directory of its own under the OS temp dir, and is 0600', () => {
    const socketPath = w!.ports.socketPath;
    const dir = path.dirname(socketPath);
    expect(path.dirname(dir)).toBe(tmpdir());
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(socketPath).isSocket()).toBe(true);
    expect(statSync(socketPath).mode & 0o777).toBe(0o600);
  });

  it('a bare connect and impostors without the secret neither get frames nor disturb a running task', async () => {
    const { client, ports, logs } = w!;
    const firstPid = ports.supervisor.pid;
    const n = 12;
    await submit(
      client,
      callListTask(
        'under-attack',
        'sleepy',
        Array.from({ length: n }, () => [150]),
      ),
    );
    const terminal = terminalOf(client, 'under-attack', 45_000);
    await eventually(() => (ports.callRunner.core.taskStats('under-attack')?.inflight ?? 0) > 0, {
      timeoutMs: 20_000,
      message: 'calls in flight',
    });
    const refusedBefore = refusals(logs).length;

    const bare = await SocketClient.connect(ports.socketPath);
    const noSecret = await SocketClient.connect(ports.socketPath);
    noSecret.hello(undefined);
    const wrongSecret = await SocketClient.connect(ports.socketPath);
    wrongSecret.hello('0'.repeat(64));
    const heartbeatFirst = await SocketClient.connect(ports.socketPath);
    heartbeatFirst.heartbeat();
    // Closed by the Worker, each of them, before anything was sent to it.
    await Promise.all([noSecret.closed, wrongSecret.closed, heartbeatFirst.closed]);
    for (const impostor of [noSecret, wrongSecret, heartbeatFirst]) expect(impostor.receivedBytes).toBe(0);

    const last = await terminal;
    expect(last.state).toBe('SUCCEEDED');
    expect(outputsOf(last)).toEqual(Array.from({ length: n }, () => 'slept 150'));
    // The bare connection, silent all along, was given nothing either (it is closed after 5 s).
    expect(bare.receivedBytes).toBe(0);
    bare.destroy();
    await bare.closed;
    await eventually(() => refusals(logs).length >= refusedBefore + 4, {
      timeoutMs: 10_000,
      message: 'four refusals logged',
    });

    // Still the first executor, never declared lost; one warn line per refused connection, no secret.
    expect(ports.supervisor.starts).toBe(1);
    expect(ports.supervisor.pid).toBe(firstPid);
    expect(ports.supervisor.ready).toBe(true);
    expect(logs.some((l) => l.includes('executor lost'))).toBe(false);
    expect(refusals(logs).length - refusedBefore).toBe(4);
    expect(logs.join('\n')).not.toMatch(SECRET_SHAPE);

    // And the next task runs on the same executor too.
    await submit(client, callListTask('after-attack', 'hello_world', [['ct2']]));
    const after = await terminalOf(client, 'after-attack', 30_000);
    expect(after.state).toBe('SUCCEEDED');
    expect(ports.supervisor.pid).toBe(firstPid);
  });

  it('removes the socket and its directory on close', async () => {
    const socketPath = w!.ports.socketPath;
    await w!.close();
    w = undefined;
    expect(existsSync(socketPath)).toBe(false);
    expect(existsSync(path.dirname(socketPath))).toBe(false);
  });
});
