// The raw Python UDS ping-pong of bench/calls.ts: Node sends ExecuteCall frames (the executor's codec)
// over a Unix socket to a standard-library Python echo server (python_pingpong.py next to this file),
// with `inflight` in flight, and counts the CallCompleted answers. The transport plus Python's own
// framing and JSON: the ceiling of any Python executor on this box (docs/executor.md, "The Python
// Executor"). The interpreter is the Worker's (`BLOCKX_PYTHON`, else python3).

import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { pythonInterpreter } from '../../src/executor/python-command.js';
import { framePingPong } from './frame-pingpong.js';

const SCRIPT = path.join(import.meta.dirname, 'python_pingpong.py');

export interface PythonPingPong {
  /** Send `total` calls, `inflight` at a time; resolves with the elapsed milliseconds. */
  run(total: number): Promise<number>;
  close(): Promise<void>;
}

/** Start the Python echo server on `<dir>/py-pp.sock` and connect to it. */
export async function startPythonPingPong(
  dir: string,
  options: { inflight?: number; python?: string } = {},
): Promise<PythonPingPong> {
  const inflight = options.inflight ?? 1024;
  const sockPath = path.join(dir, 'py-pp.sock');
  const child = spawn(pythonInterpreter({ python: options.python }), ['-B', SCRIPT, sockPath], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', () => resolve());
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`python_pingpong.py exited (${code}) before listening`)));
  });
  const sock: Socket = connect(sockPath);
  await new Promise((resolve, reject) => {
    sock.once('connect', resolve);
    sock.once('error', reject);
  });
  sock.setNoDelay?.(true);
  const run = framePingPong(sock, inflight);
  return {
    run,
    close: async () => {
      sock.destroy();
      child.kill('SIGKILL');
      await exited;
    },
  };
}
