// The IO port of the executor call path: how the Worker answers `ctx.io.get / getMany / scan` of a
// running function. The IO subsystem supplies the real handler (reads through the task's IO scope);
// until it is wired, `noStorageIoHandler` fails every read clearly and not retryably.

import type { WaitRequest as ExecutorWaitRequest } from '../../../executor/protocol.js';
import { NoStorageError } from './errors.js';

/** An IO read a running function asked for (`ctx.io.get / getMany / scan`). */
export type CallIoRequest = Extract<ExecutorWaitRequest, { kind: 'io' }>;

/**
 * Serves the IO reads of a task's calls. Resolves with the value the function's `await` gets; rejects
 * with an error whose `retryable` (and optional string `code`) says how the call should treat it.
 */
export type CallIoHandler = ((taskId: string, request: CallIoRequest) => Promise<unknown>) & {
  /**
   * Present when the answers are cached for the task (the read cache is on): the executor may then keep
   * read copies (executor/read-copies.ts) and reports the hits they served, counted here per task.
   */
  readonly countCopyHits?: (taskId: string, hits: number) => void;
};

/** Until the IO subsystem is wired: every read fails, not retryably, naming the missing storage. */
export const noStorageIoHandler: CallIoHandler = (taskId, request) =>
  Promise.reject(new NoStorageError(taskId, request.op));
