// `blockx/function`: what a function author imports (README, "Functions"). Only the
// SDK's types and its two error classes: no gRPC, no config loader, no storage driver in the module graph
// (test/process/public-entries.test.ts checks it), so importing it into a function costs nothing.
//
//   import { RetryableError, type CallContext } from 'blockx/function';
export { CallWaitError, RetryableError } from './executor/sdk.js';
export type {
  BlockxFunction,
  CallBlock,
  CallContext,
  CallFailureKind,
  CallIo,
  CallLogger,
  CallScan,
  IoScanOptions,
  LogFields,
  RowScan,
} from './executor/sdk.js';
