// Shared by python-worker.test.ts (not a test file itself): the worker-executor harness with both
// executors (the folder holds .py functions) and task IO on a fresh SQLite file.
import {
  killExecutor,
  startWorkerWithExecutor,
  type StartOptions,
  type WorkerWithStorage,
} from './worker-executor-harness.js';

export { collectingLogger } from './worker-executor-harness.js';

export type PythonWorker = WorkerWithStorage;
export type PythonWorkerOptions = StartOptions;

export function startPythonWorker(opts: PythonWorkerOptions): Promise<PythonWorker> {
  return startWorkerWithExecutor({ ...opts, storage: true });
}

/** Last resort for afterAll: neither executor may outlive the test file. */
export const killExecutors = killExecutor;
