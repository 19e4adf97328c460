// `blockx status [--coordinator ADDR] [--json] [--config FILE]`: the Coordinator's view of its Workers
// (CoordinatorAdminService.GetClusterStatus), one row per Worker: address, registry prefix, slots
// (total, reserved, running, free), cpu, memory, error rate, breaker, heartbeat age, and whether the next
// reservation would consider it (and if not, why), and the code version it serves (docs/functions-deploy.md;
// a Worker that could not switch to the deployed version gets a line under the table saying why). Exit 0 when the Coordinator answered, 2 when it
// cannot be reached within the connect timeout (src/cli/connect.ts), 1 when the call failed otherwise.
//
// The address: --coordinator, else COORDINATOR_LISTEN, else the config's `up.coordinatorListen` (else the
// block deployment's coordinator.listen), made dialable (`:8080` → `127.0.0.1:8080`).
import type { Command } from 'commander';
import type { ClusterStatusView } from '../../client/types.js';
import { loadTlsMaterial, type TlsMaterial } from '../../kernel/tls-files.js';
import type { BlockxConfig } from '../../kernel/config-types.js';
import type { JobStatus } from '../../services/follow/adapters/job-status.js';
import { CONNECT_TIMEOUT_FLAG, checkReachable, connectTimeout } from '../connect.js';
import { CONFIG_FLAG, COORDINATOR_FLAG, EXIT, UsageError, type CliIo } from '../io.js';
import { renderTable } from '../table.js';

interface StatusOptions {
  config?: string;
  coordinator?: string;
  json?: boolean;
  timeout?: string;
  connectTimeout?: string;
}

export function registerStatusCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command('status')
    .description("the coordinator's view of its workers: slots, load, breaker, heartbeat, routable")
    .option(...CONFIG_FLAG)
    .option(...COORDINATOR_FLAG)
    .option('--json', 'print the status as JSON')
    .option('--timeout <ms>', 'deadline of the status call', '5000')
    .option(...CONNECT_TIMEOUT_FLAG)
    .action(async (opts: StatusOptions) => setExit(await status(opts, io)));
}

/** The client's `tls` option from the config's `tls` key: mutual TLS when it is on, nothing when off. */
export function clientTlsOf(config: BlockxConfig): { tls?: TlsMaterial } {
  const tls = loadTlsMaterial(config.tls);
  return tls === undefined ? {} : { tls };
}

/** The Coordinator a client on this machine should dial, from the config. */
export function coordinatorAddressFromConfig(config: BlockxConfig, env: NodeJS.ProcessEnv = {}): string {
  // COORDINATOR_LISTEN names where the coordinator listens (docs/architecture.md § CLI: submit, status and
  // backfill honour it); without it, `blockx up`'s coordinator, then the block deployment's.
  const fromEnv = env.COORDINATOR_LISTEN?.trim();
  if (fromEnv) return fromEnv;
  return config.up.coordinatorListen || config.deployments.block?.coordinator.listen || ':8080';
}

async function status(opts: StatusOptions, io: CliIo): Promise<number> {
  const timeoutMs = Number(opts.timeout);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1)
    throw new UsageError(`--timeout must be a positive integer, got ${opts.timeout}`);
  const connectTimeoutMs = await connectTimeout(opts.connectTimeout, io);
  const [{ BlockxClient }, { dialAddress }] = await Promise.all([
    import('../../client/client.js'),
    import('../../client/address.js'),
  ]);
  // The config gives the default address and the TLS files (docs/security.md § TLS and authentication).
  const { loadConfig } = await import('../../kernel/config.js');
  const config = loadConfig({ configPath: opts.config, cwd: io.cwd(), env: io.env });
  const address = dialAddress(opts.coordinator ?? coordinatorAddressFromConfig(config, io.env));
  const tls = clientTlsOf(config);
  const client = new BlockxClient({ coordinator: address, rpcTimeoutMs: timeoutMs, ...tls });
  try {
    const unreachable = await checkReachable(
      client,
      {
        command: 'status',
        timeoutMs: connectTimeoutMs,
        tls: tls.tls !== undefined,
        ...(tls.tls ? { tlsMaterial: tls.tls } : {}),
      },
      io,
    );
    if (unreachable !== undefined) return unreachable;
    const view = await client.clusterStatus();
    const jobs = await jobStatuses(config, io);
    if (opts.json) io.stdout(`${JSON.stringify({ ...statusJson(address, view), jobs }, null, 2)}\n`);
    else io.stdout(renderStatus(address, view) + renderJobs(jobs));
    return EXIT.OK;
  } catch (err) {
    const e = err as { code?: string; grpcStatus?: number; message?: string };
    const hint = e.grpcStatus === 12 ? ' (this coordinator does not serve CoordinatorAdminService)' : '';
    io.stderr(`blockx status: ${address}: ${e.code ?? 'ERROR'}: ${e.message ?? String(err)}${hint}\n`);
    return EXIT.FAILED;
  } finally {
    client.close();
  }
}

/**
 * The follow jobs of the configured storage database (docs/follow.md § Watching a job); none when it has
 * no job tables. A database that cannot be read is a line on stderr, not a failed status.
 */
async function jobStatuses(config: BlockxConfig, io: CliIo): Promise<JobStatus[]> {
  const [{ JobStore }, { openJobLeases }, { readJobStatuses }, { openStorage }] = await Promise.all([
    import('../../services/follow/adapters/job-store.js'),
    import('../../services/follow/adapters/job-lease.js'),
    import('../../services/follow/adapters/job-status.js'),
    import('../../services/storage/open-storage.js'),
  ]);
  try {
    const store = await JobStore.openExisting(config.storage, config.baseDir);
    if (store === undefined) return [];
    try {
      const leases = await openJobLeases(config, store.backend);
      const chain = await openStorage(config.storage, config.tables, { baseDir: config.baseDir });
      try {
        return await readJobStatuses(store, leases, chain, Date.now());
      } finally {
        await chain.close();
        await leases.close();
      }
    } finally {
      await store.close();
    }
  } catch (err) {
    io.stderr(`blockx status: the jobs could not be read: ${(err as Error).message}\n`);
    return [];
  }
}

/** The jobs' table under the Workers': head, finalized, lag in blocks and seconds, reorgs, last error. */
export function renderJobs(jobs: readonly JobStatus[]): string {
  if (jobs.length === 0) return '';
  const n = (v: number | null): string => (v === null ? '-' : String(v));
  const rows = jobs.map((j) => ({
    job: j.jobId,
    chain: String(j.chainId),
    state: j.state,
    head: n(j.head),
    finalized: n(j.finalized),
    lag: j.lagBlocks === null ? '-' : `${j.lagBlocks} blk / ${n(j.lagSeconds)} s`,
    reorgs: `${j.reorgs} (deepest ${j.deepestReorg})`,
    runner: j.runner ?? '-',
    'last error': j.lastError ?? '',
  }));
  return `jobs:\n${renderTable(['job', 'chain', 'state', 'head', 'finalized', 'lag', 'reorgs', 'runner', 'last error'], rows)}`;
}

/** The JSON form: the wire fields, cluster-level first, then the Workers. */
function statusJson(address: string, v: ClusterStatusView): Record<string, unknown> {
  return {
    coordinator: address,
    ready: v.ready,
    unavailableReason: v.unavailableReason,
    initialized: v.initialized,
    nowMs: v.nowMs,
    watchDisconnectedAtMs: v.watchDisconnectedAtMs,
    registryPrefixes: v.registryPrefixes,
    limits: v.limits,
    workers: v.workers,
  };
}

export function renderStatus(address: string, v: ClusterStatusView): string {
  const routable = v.workers.filter((w) => w.routable).length;
  const head = v.ready
    ? `coordinator ${address}: ready · ${v.workers.length} worker(s), ${routable} routable`
    : `coordinator ${address}: NOT READY (${v.unavailableReason}) · ${v.workers.length} worker(s)`;
  const lines = [head];
  if (v.registryPrefixes.length > 0) lines.push(`registry: ${v.registryPrefixes.join(', ')}`);
  if (v.watchDisconnectedAtMs > 0) {
    lines.push(`registry watch disconnected ${age(v.nowMs - v.watchDisconnectedAtMs)} ago`);
  }
  if (v.workers.length === 0) return `${lines.join('\n')}\nno workers\n`;
  const rows = v.workers.map((w) => ({
    worker: w.workerAddr,
    registry: w.registryPrefix ? `${w.registryFormat} ${w.registryPrefix}` : '-',
    slots: String(w.taskSlots),
    reserved: String(w.reservedSlots),
    running: String(w.runningTasks),
    free: String(w.freeSlots),
    cpu: percent(w.cpuPercent),
    mem: percent(w.memoryPercent),
    errors: percent(w.errorRate),
    breaker: breaker(w, v.nowMs),
    heartbeat: `${age(w.heartbeatAgeMs)} ago`,
    code: (w.codeVersion || '-') + (w.codeVersionError ? ' !' : ''),
    routable: w.routable ? 'yes' : `no: ${w.notRoutableReason}`,
  }));
  const columns = [
    'worker',
    'registry',
    'slots',
    'reserved',
    'running',
    'free',
    'cpu',
    'mem',
    'errors',
    'breaker',
    'heartbeat',
    'code',
    'routable',
  ] as const;
  const codeProblems = v.workers
    .filter((w) => w.codeVersionError)
    .map((w) => `! ${w.workerAddr} code: ${w.codeVersionError}\n`);
  return `${lines.join('\n')}\n${renderTable(columns, rows)}${codeProblems.join('')}`;
}

function breaker(w: ClusterStatusView['workers'][number], nowMs: number): string {
  const fails =
    w.consecutiveFailures > 0
      ? ` (${w.consecutiveFailures} fail${w.consecutiveFailures === 1 ? '' : 's'})`
      : '';
  if (w.breakerState === 'open') return `open ${age(w.breakerOpenUntilMs - nowMs)} more${fails}`;
  return `${w.breakerState}${fails}`;
}

function percent(fraction: number): string {
  return `${Math.round(fraction * 100)}%`;
}

function age(ms: number): string {
  if (ms < 0) return '0s';
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)}s`;
  if (ms < 120_000) return `${Math.round(ms / 1000)}s`;
  return `${Math.round(ms / 60_000)}m`;
}
