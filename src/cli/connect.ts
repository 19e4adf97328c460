// The connect check of the client commands (submit, status, backfill): before the first task, the target
// must answer within the connect timeout (--connect-timeout, else BLOCKX_CONNECT_TIMEOUT_MS, else 5000 ms).
// When it does not, the command prints one line naming the address and the likely cause and exits 2
// (EXIT.UNREACHABLE), which a script tells apart from a task that ran and failed (1).
import type { BlockxClient } from '../client/client.js';
import { EXIT, UsageError, type CliIo } from './io.js';

/** `--connect-timeout <ms>`, shared by the client commands. */
export const CONNECT_TIMEOUT_FLAG = [
  '--connect-timeout <ms>',
  'give up when the coordinator (or worker) does not answer within this (default: BLOCKX_CONNECT_TIMEOUT_MS, else 5000)',
] as const;

/** The connect bound in ms; a bad flag or env value is a usage error naming it. */
export async function connectTimeout(flag: string | undefined, io: CliIo): Promise<number> {
  const { connectTimeoutOf } = await import('../client/reachability.js');
  try {
    return connectTimeoutOf(flag, io.env);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/**
 * Undefined when `client`'s target answers; otherwise prints `blockx <command>: <one line>` and returns
 * the exit code to end with.
 */
export async function checkReachable(
  client: BlockxClient,
  opts: {
    command: string;
    timeoutMs: number;
    tls: boolean;
    /** The client's TLS files, to tell a certificate from another CA apart (reachability.ts). */
    tlsMaterial?: { readonly ca: Buffer; readonly cert: Buffer; readonly key: Buffer };
  },
  io: CliIo,
): Promise<number | undefined> {
  const { ensureReachable } = await import('../client/reachability.js');
  const role = client.coordinator !== undefined ? 'coordinator' : 'worker';
  const address = client.coordinator ?? client.worker ?? '';
  try {
    await ensureReachable({
      role,
      address,
      timeoutMs: opts.timeoutMs,
      tls: opts.tls,
      ...(opts.tlsMaterial ? { tlsMaterial: opts.tlsMaterial } : {}),
      waitForReady: (ms) => client.waitForReady(ms),
    });
    return undefined;
  } catch (err) {
    const hint =
      role === 'coordinator'
        ? ' (the address comes from --coordinator, else COORDINATOR_LISTEN, else the config)'
        : '';
    io.stderr(`blockx ${opts.command}: ${(err as Error).message}${hint}\n`);
    return EXIT.UNREACHABLE;
  }
}
