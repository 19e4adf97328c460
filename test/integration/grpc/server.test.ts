import { describe, it, expect } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import {
  CLIENT_CHANNEL_OPTIONS,
  KEEPALIVE_TIMEOUT_MS,
  KEEPALIVE_TIME_MS,
  SERVER_OPTIONS,
  bindServer,
  listenAddress,
  shutdownServer,
  statusCodeOf,
} from '../../../src/grpc/status.js';
import { workerServiceDefinition } from '../../../src/grpc/proto.js';
import type { WorkerServiceHandlers } from '../../../src/grpc/proto.js';
import { createWorkerClient } from '../../../src/grpc/clients.js';
import { UNIMPLEMENTED_WORKER_BATCH } from '../../support/unimplemented.js';

describe('listenAddress', () => {
  it.each([
    [':9090', '0.0.0.0:9090'],
    ['9090', '0.0.0.0:9090'],
    [' :8080 ', '0.0.0.0:8080'],
    ['127.0.0.1:0', '127.0.0.1:0'],
    ['localhost:9090', 'localhost:9090'],
    ['[::]:9090', '[::]:9090'],
    ['unix:/tmp/w.sock', 'unix:/tmp/w.sock'],
  ])('%j -> %j', (input, expected) => {
    expect(listenAddress(input)).toBe(expected);
  });
});

describe('channel options', () => {
  it('use the documented keepalive (30 s / 10 s) on both sides', () => {
    expect([KEEPALIVE_TIME_MS, KEEPALIVE_TIMEOUT_MS]).toEqual([30_000, 10_000]);
    for (const o of [SERVER_OPTIONS, CLIENT_CHANNEL_OPTIONS]) {
      expect(o['grpc.keepalive_time_ms']).toBe(30_000);
      expect(o['grpc.keepalive_timeout_ms']).toBe(10_000);
      expect(o['grpc.max_receive_message_length']).toBeGreaterThan(4 * 1024 * 1024);
    }
  });
});

const unimplemented = (): never => {
  throw new Error('not used');
};

describe('bindServer / shutdownServer', () => {
  it('port 0 binds an OS-chosen port and reports it', async () => {
    const a = new grpc.Server();
    const b = new grpc.Server();
    try {
      const pa = await bindServer(a, '127.0.0.1:0');
      const pb = await bindServer(b, '127.0.0.1:0');
      expect(pa).toBeGreaterThan(0);
      expect(pb).toBeGreaterThan(0);
      expect(pa).not.toBe(pb);
      // The port is taken: a second bind on it fails with the address in the message.
      const c = new grpc.Server();
      await expect(bindServer(c, `127.0.0.1:${pa}`)).rejects.toThrow(`127.0.0.1:${pa}`);
      c.forceShutdown();
    } finally {
      a.forceShutdown();
      b.forceShutdown();
    }
  });

  it('shutdownServer cancels streams still open after the grace period', async () => {
    const server = new grpc.Server(SERVER_OPTIONS);
    let opened!: () => void;
    const streamOpened = new Promise<void>((r) => (opened = r));
    const handlers: WorkerServiceHandlers = {
      ...UNIMPLEMENTED_WORKER_BATCH,
      RequestTaskSlot: unimplemented,
      SubmitTask: unimplemented,
      GetTaskResult: unimplemented,
      WatchTasks: () => opened(), // never ends on its own
    };
    server.addService(workerServiceDefinition, handlers);
    const port = await bindServer(server, '127.0.0.1:0');
    const client = createWorkerClient(`127.0.0.1:${port}`);
    try {
      const stream = client.watchTasks({ taskIds: ['t'] });
      const ended = new Promise<unknown>((resolve) => {
        stream.on('error', resolve);
        stream.on('end', () => resolve(undefined));
      });
      stream.on('data', () => undefined);
      await streamOpened;
      await shutdownServer(server, 0);
      const err = await ended;
      expect(statusCodeOf(err)).toBeDefined();
      expect(statusCodeOf(err)).not.toBe(grpc.status.OK);
    } finally {
      client.close();
    }
  });
});
