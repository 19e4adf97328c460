// The function SDK: what a function author sees. A function is the default export of
// `functions/<name>.{js,mjs,ts}`:
//
//   import type { CallContext } from 'blockx';
//   export default async function helloWorld(ctx: CallContext, name: string) { return `hello, ${name}`; }
//
// Everything on `ctx` that reaches outside the function (io, call) is a round trip to the Worker: the
// executor sends CallWaiting, the Worker answers with ResumeCall; the exception is a `get` / `getMany`
// another call of the same task already made on the same thread, answered from that thread's read
// copy. Functions never write to storage.

import type { RowScan } from '../kernel/row-scan.js';
import type { CallBlock, CallFailureKind } from './protocol.js';

export type { CallBlock, CallFailureKind } from './protocol.js';
export type { RowScan } from '../kernel/row-scan.js';

/** Structured log fields; they travel as JSON next to the message. */
export type LogFields = { readonly [field: string]: unknown };

export interface CallLogger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

/** Options of `io.scan`; `block` narrows the scan to one block (number, or the call's block object). */
export interface IoScanOptions {
  readonly block?: number | string | CallBlock;
  readonly limit?: number;
  readonly [option: string]: unknown;
}

/**
 * What `ctx.io.scan` returns: the scan result plugins get too (a RowScan: `for await`, `toArray()`;
 * docs/functions.md § Reading storage), which can also be awaited as the array of rows, as before.
 * The rows arrive in one answer of at most 10,000 rows (pass a `limit`, or scan in a builder).
 */
export type CallScan<Row> = RowScan<Row> & PromiseLike<Row[]>;

/**
 * Reads through the Worker's task IO scope (cached per task). A failed read rejects with CallWaitError.
 * A missing row is null, for functions and plugins alike. What `get` and `getMany` resolve with is
 * deeply frozen: the same row object may be handed to every call of the task on an execution thread
 * (read copies, docs/executor.md). Copy it to change it.
 */
export interface CallIo {
  get<Row = unknown>(table: string, key: unknown): Promise<Row | null>;
  getMany<Row = unknown>(table: string, keys: readonly unknown[]): Promise<(Row | null)[]>;
  scan<Row = unknown>(table: string, options?: IoScanOptions): CallScan<Row>;
}

export interface CallContext {
  readonly taskId: string;
  readonly callId: string;
  /** 1 for the first attempt; the Worker retries a call with a higher attempt number. */
  readonly attempt: number;
  /** The block the builder attached to this call, if any. */
  readonly block: CallBlock | undefined;
  /** Aborted when the Worker cancels the attempt (deadline, task timeout, fast fail). Honour it. */
  readonly signal: AbortSignal;
  readonly log: CallLogger;
  readonly io: CallIo;
  /** Call another function as a subcall scheduled by the Worker's dispatcher; resolves with its value. */
  call<Result = unknown>(name: string, ...args: unknown[]): Promise<Result>;
}

/** The shape of a function module's default export. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- function authors choose their own args
export type BlockxFunction<Args extends any[] = any[], Result = unknown> = (
  ctx: CallContext,
  ...args: Args
) => Result | Promise<Result>;

/**
 * Throw this (or any error with `retryable: true`) to ask the Worker to retry the attempt. Any other
 * thrown error fails the call for good.
 */
export class RetryableError extends Error {
  readonly retryable = true as const;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RetryableError';
  }
}

/** Rejection of `ctx.io.*` or `ctx.call`: the Worker could not serve the request. */
export class CallWaitError extends Error {
  readonly kind: CallFailureKind;
  readonly retryable: boolean;
  readonly code: string | undefined;
  constructor(message: string, fields: { kind: CallFailureKind; retryable: boolean; code?: string }) {
    super(message);
    this.name = 'CallWaitError';
    this.kind = fields.kind;
    this.retryable = fields.retryable;
    this.code = fields.code;
  }
}
