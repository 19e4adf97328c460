// Acceptance of a batched request's size (docs/batched-protocol.md, docs/security.md § Input bounds).
//
// RequestTaskSlots costs one admission step per id in one synchronous turn, like a WatchTasks; the cap
// keeps a single call from stalling the event loop. An empty batch is refused too: it is a client bug.
// (A RunTasks message is bounded by the same constant, in run-stream.ts.)

import { MAX_BATCH_TASKS } from '../../../kernel/input-bounds.js';
import { WorkerAdmissionError } from './errors.js';

/** InvalidArgument unless 1 <= count <= MAX_BATCH_TASKS. */
export function requireBatchSize(field: string, count: number): void {
  if (count >= 1 && count <= MAX_BATCH_TASKS) return;
  throw WorkerAdmissionError.invalidArgument(
    '',
    field,
    count,
    `must hold 1 to ${MAX_BATCH_TASKS} ids, got ${count}`,
  );
}
