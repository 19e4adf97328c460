// The raw Python UDS ping-pong of bench/calls.ts: Node sends ExecuteCall frames (the executor's codec)
// over a Unix socket to a standard-library Python echo server (python_pingpong.py next to this file),
// with `inflight` in flight, and counts the CallCompleted answers. The transport plus Python's own
// framing and JSON: the ceiling of any Python executor on this box (docs/executor.md, "The Python
// Executor"). The interpreter is the Worker's (`BLOCKX_PYTHON`, else python3).

import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { FrameDecoder, FrameWriter } from '../../src/executor/frame-codec.js';
import { pythonInterpreter } from '../../src/executor/python-command.js';

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
  const decoder = new FrameDecoder();
  const writer = new FrameWriter(sock);
  let round = 0;
  const run = (total: number) =>
    new Promise<number>((resolve) => {
      const t0 = performance.now();
      const r = round++;
      let next = 0;
      let done = 0;
      const submit = (): void => {
        const i = next++;
        writer.send({
          type: 'ExecuteCall',
          taskId: 't',
          callId: `t/${r}/${i}`,
          attempt: 1,
          function: 'noop',
          args: [],
          codeEpoch: 'e',
          budgetMs: 5000,
        });
      };
      const onData = (chunk: Buffer): void => {
        for (const raw of decoder.pushRaw(chunk)) {
          JSON.parse(raw);
          done++;
          if (next < total) submit();
          if (done === total) {
            sock.off('data', onData);
            resolve(performance.now() - t0);
          }
        }
      };
      sock.on('data', onData);
      for (let i = 0; i < Math.min(inflight, total); i++) submit();
    });
  return {
    run,
    close: async () => {
      sock.destroy();
      child.kill('SIGKILL');
      await exited;
    },
  };
}
