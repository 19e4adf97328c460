// grpc-js prints its own "E No address added out of total N resolved" line when a server cannot bind,
// before the error reaches us; main() then prints the one line that says what to do (errors.ts). The
// service commands install this logger so a port in use is one line, not two. Every other grpc-js log
// line is written as grpc-js's default logger writes it (GRPC_VERBOSITY still chooses which are logged).
import * as grpc from '@grpc/grpc-js';

/** The grpc-js messages main() reports itself, in its own words. */
const REPORTED_BY_THE_CLI = /^No address added out of total \d+ resolved/;

export function installGrpcLogger(): void {
  grpc.setLogger({
    error: (message?: unknown, ...rest: unknown[]) => {
      if (typeof message === 'string' && REPORTED_BY_THE_CLI.test(message)) return;
      console.error(`E ${String(message)}`, ...rest);
    },
    info: (message?: unknown, ...rest: unknown[]) => console.error(`I ${String(message)}`, ...rest),
    debug: (message?: unknown, ...rest: unknown[]) => console.error(`D ${String(message)}`, ...rest),
  });
}
