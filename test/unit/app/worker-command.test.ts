// workerCommand in-process: boots the kernel from the repository config, serves, drains on SIGTERM.
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createWorkerClient, unaryCall } from '../../../src/grpc/clients.js';
import type { GetTaskResultResponseWireOut } from '../../../src/grpc/wire-types.js';
import { silentLogger } from '../../../src/kernel/observability/service-logger.js';
import type { RunningWorker } from '../../../src/services/worker/app/run-worker.js';
import { workerCommand, type SignalSource } from '../../../src/app/worker-command.js';
import { statusCodeOf } from '../../../src/grpc/status.js';

const REPO = path.resolve(import.meta.dirname, '../../..');

function io(env: NodeJS.ProcessEnv = {}) {
  const out: string[] = [];
  return {
    out,
    io: { stdout: (s: string) => void out.push(s), stderr: () => undefined, env, cwd: () => REPO },
  };
}

describe('workerCommand', () => {
  it('prints the listening line, serves, and on SIGTERM drains and returns 0', async () => {
    const signals = new EventEmitter();
    const { out, io: cmdIo } = io({ WORKER_LISTEN: '127.0.0.1:0' });
    let worker: RunningWorker | undefined;
    let listening: () => void = () => undefined;
    const served = new Promise<void>((resolve) => (listening = resolve));
    const exited = workerCommand({ deployment: 'block' }, cmdIo, {
      signals: signals as unknown as SignalSource,
      logger: silentLogger,
      onListening: (w) => {
        worker = w;
        listening();
      },
    });
    await served;
    expect(out.join('')).toMatch(
      /^worker listening on 127\.0\.0\.1:\d+ \(bound 127\.0\.0\.1:\d+, deployment block\)\n$/,
    );
    const client = createWorkerClient(worker!.address);
    const missing = await unaryCall<GetTaskResultResponseWireOut>((md, o, cb) =>
      client.getTaskResult({ taskId: 'x' }, md, o, cb),
    ).catch((err: unknown) => statusCodeOf(err));
    expect(missing).toBe(5); // NOT_FOUND: the server answers
    client.close();
    signals.emit('SIGTERM');
    expect(await exited).toBe(0);
    expect(signals.listenerCount('SIGTERM')).toBe(0);
    expect(signals.listenerCount('SIGINT')).toBe(0);
  });

  it('rejects an unknown deployment with a config error', async () => {
    const { io: cmdIo } = io();
    await expect(
      workerCommand({ deployment: 'nope' }, cmdIo, { logger: silentLogger }),
    ).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
    });
  });
});
