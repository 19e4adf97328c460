// The logging surface of the worker adapters and app; a pino Logger satisfies it. Task lines carry
// `task_id`.

/** The logging surface the worker adapters use; a pino Logger satisfies it. */
export interface WorkerLogger {
  debug(obj: Record<string, unknown>, msg: string): void;
  info(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
  error(obj: Record<string, unknown>, msg: string): void;
}

export const silentWorkerLogger: WorkerLogger = Object.freeze({
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
});
