// Acceptance of a WatchTasks request (docs/security.md § Input bounds).
//
// A watch costs the worker one snapshot and, for an active task, one subscription per id, all in one
// synchronous turn of the event loop. Unbounded, a few large watches stalled the loop long enough for
// the worker to declare its healthy Executor lost. So the number of distinct ids is capped, duplicates
// collapse to their first occurrence, and every id is bounded like a task id. Empty ids are kept: they
// answer `not_found` like any unknown id (docs/task-lifecycle.md § WatchTasks: one bad id does not fail the
// batch).

import { MAX_ID_BYTES, idPreview, utf8ByteLength } from '../../../kernel/input-bounds.js';
import { WorkerAdmissionError } from './errors.js';

/** Most distinct task ids one WatchTasks request may name. */
export const MAX_WATCH_TASK_IDS = 10_000;

/** The distinct ids of a watch, in request order; InvalidArgument when too many or one is too long. */
export function acceptWatchTaskIds(taskIds: readonly string[]): string[] {
  // The cap counts distinct ids: repeating one id costs nothing once deduplicated. A Set of even a
  // maximal message's ids (the gRPC message limit bounds them) takes milliseconds.
  const ids = [...new Set(taskIds)];
  if (ids.length > MAX_WATCH_TASK_IDS) {
    return throwTooMany(ids.length);
  }
  for (const id of ids) {
    if (typeof id !== 'string' || utf8ByteLength(id, MAX_ID_BYTES) > MAX_ID_BYTES) {
      throw WorkerAdmissionError.invalidArgument(
        '',
        'taskIds',
        idPreview(id),
        `must hold ids of at most ${MAX_ID_BYTES} bytes (UTF-8)`,
      );
    }
  }
  return ids;
}

function throwTooMany(count: number): never {
  throw WorkerAdmissionError.invalidArgument(
    '',
    'taskIds',
    count,
    `must name at most ${MAX_WATCH_TASK_IDS} distinct ids, got ${count}`,
  );
}
