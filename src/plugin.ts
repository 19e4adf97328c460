// `blockx/plugin`: what a builder or writer plugin imports — the plugin contract's types, the hook
// catalogue's types and the writer-failure helper. Types and one small function only: no gRPC, no
// storage driver in the module graph (test/unit/public-entries.test.ts checks it).
//
//   import type { BuilderPlugin, CallList } from 'blockx/plugin';
export type {
  BlockRange,
  BlockSelector,
  BuilderPlugin,
  CallList,
  CallSpec,
  PluginCommon,
  PluginResult,
  Row,
  RowFilter,
  RowKey,
  ScanQuery,
  TaskCtx,
  TaskIo,
  TaskIoTransaction,
  TaskStage,
  WriterFailure,
  WriterPlugin,
} from './kernel/plugin-types.js';
export { isRetryableWriterFailure } from './kernel/plugin-types.js';
export type { PluginHooks } from './kernel/hooks.js';
