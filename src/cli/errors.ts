// What the CLI prints for an error that reached main(): a user's mistake (a port already in use, a
// permission to bind refused, a coordinator that cannot be reached) is one line saying what to do, with
// the usage exit code; only an error nobody anticipated (a bug) keeps its stack trace.
import { EXIT } from './io.js';

export interface DescribedError {
  readonly line: string;
  readonly exitCode: number;
}

/** The errors along `err`'s cause chain, `err` first (bounded: a cycle cannot hang the CLI). */
function causeChain(err: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e: unknown = err; e !== undefined && e !== null && chain.length < 8;) {
    chain.push(e);
    e = (e as { cause?: unknown }).cause;
  }
  return chain;
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : typeof e === 'string' ? e : '';
}

/**
 * How to free or move the address, by the command that failed to bind its gRPC server (`grpc`), or for
 * another listener (metrics, dashboard) whose address is in the config.
 */
function moveHint(command: string | undefined, grpc: boolean, source: string | undefined): string {
  // A listener that names where its address came from: a flag, or a config key.
  if (source?.startsWith('--')) return `stop the other process or pass another ${source} address`;
  if (source !== undefined)
    return `stop the other process or choose another address (${source} in the config)`;
  if (!grpc) return 'stop the other process or choose another address in the config';
  switch (command) {
    case 'up':
      return 'stop the other process or pass --listen';
    case 'coordinator':
      return 'stop the other process or set COORDINATOR_LISTEN (or the deployment’s coordinator.listen)';
    case 'worker':
      return 'stop the other process or set WORKER_LISTEN (or the deployment’s worker.listen)';
    default:
      return 'stop the other process or choose another address';
  }
}

/** `host:port` of a failed bind: Node's errno fields, else the address in grpc-js's message. */
function boundAddress(chain: readonly unknown[], code: string): string | undefined {
  for (const e of chain) {
    const { address, port } = e as { address?: unknown; port?: unknown };
    if (typeof address === 'string' && typeof port === 'number') {
      return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
    }
  }
  const text = chain.map(messageOf).join(' ');
  const re = new RegExp(`${code}[^\\d\\[]*?((?:\\[[0-9a-fA-F:.]+\\]|[A-Za-z0-9.-]+):\\d+)`);
  return re.exec(text)?.[1] ?? /cannot listen on (\S+?):? /.exec(text)?.[1];
}

/** The one-line form of a known user mistake, or undefined for an error the CLI does not recognise. */
export function describeCliError(err: unknown, command: string | undefined): DescribedError | undefined {
  const chain = causeChain(err);
  const text = chain.map(messageOf).join(' ');
  const codes = new Set(
    chain.map((e) => (e as { code?: unknown }).code).filter((c) => typeof c === 'string'),
  );
  for (const code of ['EADDRINUSE', 'EACCES'] as const) {
    if (!codes.has(code) && !text.includes(code)) continue;
    const address = boundAddress(chain, code);
    if (address === undefined && !/listen/i.test(text)) continue;
    const shown = address ?? 'the address';
    const source = chain
      .map((e) => (e as { configKey?: unknown }).configKey)
      .find((k): k is string => typeof k === 'string');
    return code === 'EADDRINUSE'
      ? {
          line: `address ${shown} is already in use (EADDRINUSE): ${moveHint(command, /cannot listen on|No address added/.test(text), source)}`,
          exitCode: EXIT.USAGE,
        }
      : {
          line: `not allowed to listen on ${shown} (EACCES): ports below 1024 need privileges; choose another port`,
          exitCode: EXIT.USAGE,
        };
  }
  return undefined;
}
