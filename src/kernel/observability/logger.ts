// Structured logs of every service: pino JSON lines, one object per line, at
// `observability.logLevel` (BLOCKX_LOG_LEVEL). Each line carries the service's identity as base fields
// ({service, deployment, ...bindings}); lines about a task carry `task_id` (and `slot_id`, `call_id`,
// `worker_addr` where they apply), so one task can be followed across Coordinator, Worker and Executor
// with a single filter.
//
// stdout belongs to the commands' own output (`worker listening on ...`, `blockx up` progress), so logs
// go to stderr unless told otherwise. Writes are synchronous by default: a crash must not lose the lines
// that explain it, and the volume (a few lines per task) does not need pino's async buffering.
//
// A pino Logger satisfies the services' logging ports (`WorkerLogger`, the registry's `Logger`) as is:
// `(fields, message)`. No adapter is needed.

import { pino, type DestinationStream, type Logger } from 'pino';
import type { BlockxConfig, LogLevel } from '../config-types.js';

export type { Logger } from 'pino';

/** Fields on every line of one service instance. */
export interface LogBindings {
  readonly service: string;
  readonly deployment?: string;
  readonly [field: string]: unknown;
}

export interface CreateLoggerOptions {
  /** A file descriptor (1 stdout, 2 stderr) or a stream. Default 2. */
  readonly destination?: number | DestinationStream;
  /** Overrides `config.observability.logLevel`. */
  readonly level?: LogLevel;
  /** Default true for file descriptors (ignored for streams). */
  readonly sync?: boolean;
}

export function createLogger(
  config: Pick<BlockxConfig, 'observability'>,
  bindings: LogBindings,
  options: CreateLoggerOptions = {},
): Logger {
  const dest = options.destination ?? 2;
  const stream = typeof dest === 'number' ? pino.destination({ dest, sync: options.sync ?? true }) : dest;
  return pino({ level: options.level ?? config.observability.logLevel, base: { ...bindings } }, stream);
}
