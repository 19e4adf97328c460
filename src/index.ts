// Public API of the `blockx` package: types for function and plugin authors, the kernel, and errors.
export * from './kernel/errors.js';
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
export type { PluginHooks, KernelHooks } from './kernel/hooks.js';
export type { BlockxConfig, DeploymentConfig } from './kernel/config-types.js';
export { loadConfig, resolveConfig, type LoadConfigOptions } from './kernel/config.js';
export { bootKernel, type Kernel } from './kernel/kernel.js';
export * from './executor/sdk.js';
