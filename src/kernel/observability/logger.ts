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
// A pino Logger satisfies the services' logging port (`ServiceLogger`, service-logger.ts) as is:
// `(fields, message)`. No adapter is needed.
//
// What a line may carry is bounded and masked in one place (docs/security.md § Logs; log-fields.ts):
// every line's fields, the bindings and the message (and its `%s` arguments) go through `logFields` /
// `logString`, so a secret (a storage URL's password, a field named like a token) is never written and
// a hostile 1 MiB task id is written cut to 256 bytes.

import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import type { BlockxConfig, LogLevel } from '../config-types.js';
import { logFields, logString } from './log-fields.js';

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
  return boundedPino(
    { level: options.level ?? config.observability.logLevel, base: { ...bindings } },
    stream,
  );
}

/**
 * `pino(options, stream)` with every line masked and bounded (docs/security.md § Logs), children
 * included: for the loggers BlockX makes with pino directly (the worker command, `blockx up`).
 */
export function boundedPino(options: LoggerOptions, stream: DestinationStream): Logger {
  return withBoundedChildren(pino({ ...options, ...boundedLogOptions() }, stream));
}

/**
 * pino runs the bindings formatter on the root logger's bindings only, never on a child's: so every
 * `child(bindings)` of `logger` (and of its children, which inherit the method) bounds them itself.
 */
function withBoundedChildren(logger: Logger): Logger {
  type Child = (this: Logger, bindings: Record<string, unknown>, ...rest: unknown[]) => Logger;
  const { child } = Object.getPrototypeOf(logger) as { child: Child };
  logger.child = function boundedChild(this: Logger, bindings: Record<string, unknown>, ...rest: unknown[]) {
    return child.call(this, logFields(bindings, serializeError), ...rest);
  } as unknown as Logger['child'];
  return logger;
}

const serializeError = (err: Error): Record<string, unknown> => ({ ...pino.stdSerializers.err(err) });

/** The pino options that mask and bound every line's fields, root bindings and message. */
function boundedLogOptions(): Pick<LoggerOptions, 'formatters' | 'serializers' | 'hooks'> {
  return {
    formatters: {
      bindings: (bindings) => logFields(bindings, serializeError),
      log: (fields) => logFields(fields, serializeError),
    },
    // `logFields` has already made every Error plain fields; pino's own err serializer would take the
    // plain object for an error again and call its type "Object".
    serializers: { err: (value: unknown) => value },
    hooks: {
      logMethod(args, method) {
        const bounded: unknown[] = args.map((a: unknown) => (typeof a === 'string' ? logString(a) : a));
        // `log(err)` and `log({ err })` without a message take the error's message as the line's: pino
        // reads it before any formatter runs, so it is bounded here.
        const [first] = args as unknown[];
        if (bounded.length === 1 && first instanceof Error) bounded.push(logString(first.message));
        else if (bounded.length === 1 && typeof first === 'object' && first !== null) {
          const err = (first as { err?: unknown }).err;
          if (err instanceof Error && (first as { msg?: unknown }).msg === undefined)
            bounded.push(logString(err.message));
        }
        return method.apply(this, bounded as Parameters<typeof method>);
      },
    },
  };
}
