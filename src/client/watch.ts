// WatchTasks as an async iterator. The Worker first sends a snapshot per task id (an unknown id comes back
// terminal with error "not_found"), then one terminal update per task still running, and closes the stream
// once every task is terminal. The iterator ends when every requested task has had a terminal update;
// leaving the loop early (break, return, throw) cancels the stream, which is how a watch unsubscribes.
//
// Once every task has had its terminal update the stream is not cancelled: the Worker ends it right
// after that update, and a cancel would only turn that clean end into a CANCELLED status at both ends (an
// error with a formatted stack trace here, an RST_STREAM there: about a tenth of the client's CPU in
// bench/bullmq). A stream that has not ended `WATCH_END_GRACE_MS` later is cancelled all the same, so a
// peer that never ends it cannot keep it open.
//
// grpc-js reports the cancellation as an 'error' event on the stream; the listener stays attached for the
// stream's whole life so that event never goes unhandled.
import type * as grpc from '@grpc/grpc-js';
import { taskUpdateFromWire } from '../grpc/convert.js';
import type { TaskUpdate } from '../grpc/domain-types.js';
import type { TaskUpdateWireOut } from '../grpc/wire-types.js';
import { BlockxClientError, ClientErrorCode, toClientError } from './errors.js';

/** The part of WorkerServiceClient this needs (a fake in tests). */
export interface WatchSource {
  watchTasks(request: { taskIds: string[] }): grpc.ClientReadableStream<TaskUpdateWireOut>;
}

type Item =
  | { readonly kind: 'update'; readonly wire: TaskUpdateWireOut }
  | { readonly kind: 'error'; readonly error: unknown }
  | { readonly kind: 'end' };

/** How long a watch whose tasks are all terminal waits for the Worker to end the stream before cancelling. */
export const WATCH_END_GRACE_MS = 5_000;

export async function* watchTaskUpdates(
  source: WatchSource,
  taskIds: readonly string[],
  opts: {
    readonly address?: string;
    readonly signal?: AbortSignal;
    /** Default WATCH_END_GRACE_MS. */
    readonly endGraceMs?: number;
  } = {},
): AsyncGenerator<TaskUpdate, void, undefined> {
  const pending = new Set(taskIds);
  if (pending.size === 0) return;
  const context = { rpc: 'WatchTasks', ...(opts.address !== undefined ? { address: opts.address } : {}) };
  if (opts.signal?.aborted) throw cancelled(context);

  const items: Item[] = [];
  let wake: (() => void) | undefined;
  let closed = false;
  const push = (item: Item): void => {
    if (closed) return;
    items.push(item);
    wake?.();
  };
  const stream = source.watchTasks({ taskIds: [...pending] });
  stream.on('data', (wire: TaskUpdateWireOut) => push({ kind: 'update', wire }));
  stream.on('error', (error: unknown) => push({ kind: 'error', error }));
  stream.on('end', () => push({ kind: 'end' }));
  let finished = false;
  stream.once('status', () => (finished = true));
  const onAbort = (): void => stream.cancel();
  opts.signal?.addEventListener('abort', onAbort, { once: true });

  try {
    while (pending.size > 0) {
      while (items.length === 0) {
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
      const item = items.shift() as Item;
      if (item.kind === 'error') {
        if (opts.signal?.aborted) throw cancelled(context);
        throw toClientError(item.error, context);
      }
      if (item.kind === 'end') {
        throw new BlockxClientError(
          ClientErrorCode.UNAVAILABLE,
          `WatchTasks ended before ${pending.size} task(s) reached a terminal state`,
          context,
        );
      }
      let update: TaskUpdate;
      try {
        update = taskUpdateFromWire(item.wire);
      } catch (err) {
        throw toClientError(err, { ...context, taskId: item.wire.taskId });
      }
      if (update.isTerminal) pending.delete(update.taskId);
      yield update;
    }
  } finally {
    closed = true;
    opts.signal?.removeEventListener('abort', onAbort);
    if (pending.size > 0) stream.cancel();
    else if (!finished) {
      const timer = setTimeout(() => stream.cancel(), opts.endGraceMs ?? WATCH_END_GRACE_MS);
      timer.unref();
      stream.once('status', () => clearTimeout(timer));
    }
  }
}

function cancelled(context: { rpc: string; address?: string }): BlockxClientError {
  return new BlockxClientError(ClientErrorCode.CANCELLED, 'WatchTasks cancelled', context);
}
