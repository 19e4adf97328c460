// The logging port every service's adapters are written against (Worker, call host, Coordinator,
// registry): `(fields, message)` at four levels. A pino Logger (logger.ts) satisfies it as is, so
// production passes the process's logger and tests pass a recording fake or `silentLogger`. Kept apart
// from logger.ts so that naming the port does not load pino.

/** The logging surface of a service's adapters; a pino Logger satisfies it. Task lines carry `task_id`. */
export interface ServiceLogger {
  debug(obj: Record<string, unknown>, msg: string): void;
  info(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
  error(obj: Record<string, unknown>, msg: string): void;
}

/** A ServiceLogger that drops everything (the default when none is injected). */
export const silentLogger: ServiceLogger = Object.freeze({
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
});
