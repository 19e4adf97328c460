// unaryCall against a real grpc-js server on loopback: its deadline is enforced by the caller (one
// DeadlineQueue timer), rejects with DEADLINE_EXCEEDED like a gRPC deadline, is not sent to the server as
// grpc-timeout, and still cancels the call on the server. Cancellation through any CancelSignal.
import * as grpc from '@grpc/grpc-js';
import { EventEmitter } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkerClient, pendingUnaryDeadlines, unaryCall } from '../../../src/grpc/clients.js';
import type { WorkerServiceClient, WorkerServiceHandlers } from '../../../src/grpc/proto.js';
import { workerServiceDefinition } from '../../../src/grpc/proto.js';
import { cancelSignalOf } from '../../../src/grpc/server.js';
import { bindServer, statusCodeOf } from '../../../src/grpc/status.js';
import type { RequestTaskSlotResponseWireOut } from '../../../src/grpc/wire-types.js';
import type { CancelSignal } from '../../../src/kernel/cancel.js';
import { UNIMPLEMENTED_WORKER_BATCH } from '../../support/unimplemented.js';

/** What the server saw of each call, by task id. */
const seen = new Map<string, { deadline: grpc.Deadline; cancelled: Promise<void> }>();
let server: grpc.Server;
let client: WorkerServiceClient;

beforeAll(async () => {
  server = new grpc.Server();
  const unused = (): never => {
    throw new Error('not used');
  };
  server.addService(workerServiceDefinition, {
    RequestTaskSlot(call, callback) {
      const { taskId } = call.request;
      const cancelled = new Promise<void>((resolve) => call.once('cancelled', () => resolve()));
      seen.set(taskId, { deadline: call.getDeadline(), cancelled });
      // `hang…` never answers: only the caller's deadline or cancellation ends the call.
      if (!taskId.startsWith('hang')) {
        callback(null, { taskId, slotId: `slot-${taskId}`, state: 'TASK_STATE_ALLOCATED' });
      }
    },
    SubmitTask: unused,
    GetTaskResult: unused,
    WatchTasks: unused,
    ...UNIMPLEMENTED_WORKER_BATCH,
  } satisfies WorkerServiceHandlers);
  const port = await bindServer(server, '127.0.0.1:0');
  client = createWorkerClient(`127.0.0.1:${port}`);
});

afterAll(() => {
  client?.close();
  server?.forceShutdown();
});

const slot = (taskId: string, opts: Parameters<typeof unaryCall>[1]) =>
  unaryCall<RequestTaskSlotResponseWireOut>(
    (md, o, cb) => client.requestTaskSlot({ taskId, ttlMs: 1_000 }, md, o, cb),
    opts,
  );

async function failure(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (err: unknown) => err,
  );
}

describe('unaryCall deadlines', () => {
  it('an answer within the deadline resolves, and its deadline leaves the queue', async () => {
    const res = await slot('ok-1', { timeoutMs: 5_000 });
    expect(res.slotId).toBe('slot-ok-1');
    expect(pendingUnaryDeadlines()).toBe(0);
  });

  it('the deadline is not sent to the server (no grpc-timeout header)', async () => {
    await slot('ok-2', { timeoutMs: 5_000 });
    expect(seen.get('ok-2')?.deadline).toBe(Infinity);
  });

  it('past its deadline a call rejects with DEADLINE_EXCEEDED, and the server sees it cancelled', async () => {
    const started = Date.now();
    const err = await failure(slot('hang-1', { timeoutMs: 150 }));
    const waited = Date.now() - started;
    expect(statusCodeOf(err)).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect((err as grpc.ServiceError).details).toContain('150 ms');
    expect(waited).toBeGreaterThanOrEqual(149);
    await seen.get('hang-1')?.cancelled;
    expect(pendingUnaryDeadlines()).toBe(0);
  });

  it('concurrent calls time out independently: the answered ones resolve', async () => {
    const results = await Promise.allSettled([
      slot('hang-2', { timeoutMs: 100 }),
      slot('ok-3', { timeoutMs: 100 }),
      slot('hang-3', { timeoutMs: 200 }),
      slot('ok-4', { timeoutMs: 5_000 }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'rejected', 'fulfilled']);
    for (const r of results) {
      if (r.status === 'rejected') expect(statusCodeOf(r.reason)).toBe(grpc.status.DEADLINE_EXCEEDED);
    }
    expect(pendingUnaryDeadlines()).toBe(0);
  });
});

/** A CancelSignal that is not an AbortSignal. */
function manualSignal(): CancelSignal & { fire(): void; listeners: number } {
  const emitter = new EventEmitter();
  let aborted = false;
  return {
    get aborted() {
      return aborted;
    },
    get listeners() {
      return emitter.listenerCount('abort');
    },
    fire() {
      aborted = true;
      emitter.emit('abort');
    },
    addEventListener: (_t, l) => void emitter.once('abort', l),
    removeEventListener: (_t, l) => void emitter.off('abort', l),
  };
}

describe('unaryCall cancellation', () => {
  it('any CancelSignal cancels the call in flight: CANCELLED, and the server sees it', async () => {
    const signal = manualSignal();
    const pending = failure(slot('hang-4', { signal, timeoutMs: 5_000 }));
    await new Promise((r) => setTimeout(r, 50));
    signal.fire();
    expect(statusCodeOf(await pending)).toBe(grpc.status.CANCELLED);
    await seen.get('hang-4')?.cancelled;
    expect(pendingUnaryDeadlines()).toBe(0);
  });

  it('a call that ends removes its listener from the signal', async () => {
    const signal = manualSignal();
    await slot('ok-5', { signal });
    expect(signal.listeners).toBe(0);
  });
});

describe('cancelSignalOf (a server call as a CancelSignal)', () => {
  const fakeCall = () => Object.assign(new EventEmitter(), { cancelled: false });

  it('reads the call’s state and runs a listener once when grpc-js reports the call cancelled', () => {
    const call = fakeCall();
    const signal = cancelSignalOf(call);
    let runs = 0;
    signal.addEventListener('abort', () => runs++);
    expect(signal.aborted).toBe(false);
    call.cancelled = true;
    call.emit('cancelled', 'cancelled');
    call.emit('cancelled', 'cancelled');
    expect(signal.aborted).toBe(true);
    expect(runs).toBe(1);
  });

  it('a removed listener never runs, and nothing listens to the call once it is removed', () => {
    const call = fakeCall();
    const signal = cancelSignalOf(call);
    let runs = 0;
    const listener = () => runs++;
    signal.addEventListener('abort', listener);
    expect(call.listenerCount('cancelled')).toBe(1);
    signal.removeEventListener('abort', listener);
    expect(call.listenerCount('cancelled')).toBe(0);
    call.emit('cancelled', 'cancelled');
    expect(runs).toBe(0);
  });

  it('adding to an already cancelled call registers nothing (as with an aborted AbortSignal)', () => {
    const call = fakeCall();
    call.cancelled = true;
    cancelSignalOf(call).addEventListener('abort', () => undefined);
    expect(call.listenerCount('cancelled')).toBe(0);
  });
});
