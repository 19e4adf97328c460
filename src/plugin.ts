// `blockx/plugin`: what a builder or writer plugin imports — the plugin contract's types, the hook
// catalogue's types, `defineBuilder` / `defineWriter`, the one `PluginError`, and the writer-failure
// helper (docs/plugins.md). No gRPC, no storage driver, no package at all in the module graph
// (test/process/public-entries.test.ts checks it). The built-in plugins under plugins/ import this
// module and nothing else of BlockX.
//
//   import { defineBuilder, PluginError, type CallList } from 'blockx/plugin';
export type {
  BlockColumns,
  BlockRange,
  BlockSelector,
  BuilderFusion,
  BuilderPlugin,
  CallArgs,
  CallList,
  CallSpec,
  EncodedArgs,
  EncodedRow,
  FusedTask,
  FusedWrite,
  PluginCommon,
  Row,
  RowFilter,
  RowKey,
  RowScan,
  ScanQuery,
  TaskCtx,
  TaskIo,
  TaskIoTransaction,
  TaskStage,
  WriterFailure,
  WriterFusion,
  WriterPlugin,
  WriterResult,
  WriteFence,
} from './kernel/plugin-types.js';
import type { WriterResult } from './kernel/plugin-types.js';
/**
 * @deprecated Use `WriterResult`: what a writer returns. `PluginResult` now names the shape a task's
 * result carries (`blockx/client`, src/contracts/task.ts); this alias keeps existing writers compiling.
 */
export type PluginResult = WriterResult;
export { defineBuilder, defineWriter, isRetryableWriterFailure } from './kernel/plugin-types.js';
export { rowScan } from './kernel/row-scan.js';
export { encodedArgsText, encodedRowArgs } from './contracts/call-args.js';
export { PluginError } from './kernel/errors.js';
export type { PluginErrorLocation, PluginErrorOptions } from './kernel/errors.js';
export type { PluginHooks } from './kernel/hooks.js';
