// The task IO scope over a StorageBackend: the factory the worker wires in, the per-task scope, the
// executor call IO path, and the scan translation.
export { MAX_CALL_SCAN_ROWS, serveCallIo } from './call-io-handler.js';
export { resumableScan, type ResumableScan } from './resumable-scan.js';
export {
  RetryAttempts,
  abortableSleep,
  cancelledError,
  raceAbort,
  withRetries,
  type RetryScope,
  type Sleep,
} from './retry-runner.js';
export { SCAN_OPTIONS, callScanToQuery, tableConfig, toStorageScanQuery } from './scan-query.js';
export {
  StorageIoScopeFactory,
  type StorageIoScopeFactoryOptions,
  type StorageIoScopeFactoryStats,
} from './storage-io-scope-factory.js';
export {
  SCAN_SEED_ROWS,
  StorageTaskIoScope,
  type StorageTaskIoScopeOptions,
  type TaskIoScopeStats,
} from './task-io-scope.js';
export { taskIoTransaction, type TransactionContext } from './task-io-transaction.js';
