// `blockx ingest --rpc URL --from N [--to M] [--follow] [--coordinator ADDR] [--json]`, or `--source NAME` for
// a `sources.<name>` entry of the config (docs/ingest.md). Flags override the entry's fields.
//
// 1. Ask the node (through the RPC access layer, a bounded probe) for its chain id and head: an unreachable
//    URL is one line and exit 2 within the probe's bound; a node on another chain than --chain-id is refused.
// 2. The range ends at --to, else at the head minus --finality.
// 3. Run the ingestion tasks on the cluster — builder ChainIngestCallConfig, writer ChainIngestResultHandler —
//    with the machinery of `blockx backfill` (runBlockJob): every unit validated, a resumable journal,
//    retries, a line per task and the summary. A range of more than the source's bundleThreshold blocks (or
//    any range, with --bundle-size S > 1) runs its whole aligned bundles as one task each and its edges one
//    task per block; a shorter one, or --bundle-size 1, one task per block (docs/ingest.md § Bundles by
//    default).
// --follow: from the job's cursor the range up to head − finality, then the head followed — new blocks,
// reorgs healed, a reorg deeper than the finality refused (./ingest-follow.ts, docs/ingest.md § Following
// the head).
import type { Command } from 'commander';
import type { RpcSourceSettings } from '../../services/chain-rpc/adapters/rpc-client.js';
import type { TaskSource } from '../../services/chain-rpc/adapters/shared-clients.js';
import type { SourceConfig } from '../../kernel/config-types.js';
import type { Kernel } from '../../kernel/kernel.js';
import { CONFIG_FLAG, COORDINATOR_FLAG, EXIT, UsageError, WORKER_FLAG, type CliIo } from '../io.js';
import { CONNECT_TIMEOUT_FLAG } from '../connect.js';
import {
  DEFAULT_CONCURRENCY,
  DEFAULT_STATE_DIR,
  integerFlag,
  runBlockJob,
  runFlags,
  type JobFlags,
} from './backfill.js';

interface IngestOptions extends JobFlags {
  config?: string;
  source?: string;
  rpc?: string;
  fallbackRpc?: string;
  ws?: string;
  chainId?: string;
  from?: string;
  to?: string;
  finality?: string;
  follow?: boolean;
  pollInterval?: string;
  waitForLock?: boolean;
  traces: boolean;
  maxConcurrentRequests?: string;
  requestsPerSecond?: string;
  requestTimeoutMs?: string;
  bundleSize?: string;
}

/** The probe of step 1 gives up after this many attempts, each bounded by the request timeout (≤ 5 s). */
const PROBE_ATTEMPTS = 2;
const PROBE_TIMEOUT_CAP_MS = 5_000;

export function registerIngestCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  const dflt = "(default: the source's, else the field table's: docs/configuration.md § sources)";
  program
    .command('ingest')
    .description('read blocks from an Ethereum JSON-RPC node into the chain tables, as tasks on the cluster')
    .option(...CONFIG_FLAG)
    .option('--source <name>', 'a sources.<name> entry of the config: the node and its limits')
    .option(
      '--rpc <url>',
      "the node's JSON-RPC URL (http:// or https://), without a key (it travels in every task); overrides the source's rpcUrl",
    )
    .option('--fallback-rpc <url>', 'a second URL, without a key, used when a request to the first fails')
    .option(
      '--ws <url>',
      "with --follow: the node's WebSocket URL (ws:// or wss://), where new heads are announced; overrides the source's wsUrl",
    )
    .option('--chain-id <id>', "the chain the node must be on (default: the source's, else any)")
    .requiredOption('--from <n>', 'first block (inclusive)')
    .option('--to <n>', 'last block (inclusive; default: the head minus the finality)')
    .option('--finality <n>', `blocks behind the head left out when --to is not given ${dflt}`)
    .option(
      '--follow',
      'after the range, follow the head: ingest new blocks, heal reorgs (orphaned blocks kept, canonical = false)',
    )
    .option('--poll-interval <ms>', `with --follow: how often the node's head is asked ${dflt}`)
    .option('--wait-for-lock', 'with --follow: wait while another follower holds the job (default: exit 1)')
    .option('--no-traces', 'leave the traces table out')
    .option('--max-concurrent-requests <n>', `HTTP requests in flight per worker ${dflt}`)
    .option('--requests-per-second <n>', `HTTP requests per second per worker, 0 = no limit ${dflt}`)
    .option('--request-timeout-ms <ms>', `timeout of one HTTP request ${dflt}`)
    .option(...COORDINATOR_FLAG)
    .option(...WORKER_FLAG)
    .option(
      '--bundle-size <n>',
      "one task per whole aligned bundle of n blocks in the range, its edges per block; 1 = one task per block (default: the source's bundleSize over a range longer than its bundleThreshold, else per block)",
    )
    .option(
      '--concurrency <n>',
      `tasks in flight at once (default ${DEFAULT_CONCURRENCY.block} per block, ${DEFAULT_CONCURRENCY.bundle} when bundled)`,
    )
    .option('--retries <n>', 'attempts after the first for a block that failed retryably', '3')
    .option(
      '--json',
      'one JSON object per task (a block, or a bundle with fromBlock and toBlock); the last line is {"summary": {...}}',
    )
    .option('--state-dir <dir>', 'where job journals live (what a rerun skips)', DEFAULT_STATE_DIR)
    .option('--fresh', "forget this job's journal and ingest every block again")
    .option(...CONNECT_TIMEOUT_FLAG)
    .addHelpText(
      'after',
      `
Examples:
  blockx ingest --rpc http://127.0.0.1:8545 --from 0 --to 1000
  blockx ingest --source mainnet --chain-id 1 --from 19000000 --finality 64 --json
    (sources.mainnet.rpcUrl, or BLOCKX_SOURCE_MAINNET_RPC_URL, where the Workers and this command run:
    a URL with a key never goes by --rpc, which travels in every task)
  blockx ingest --source mainnet --from 19000000 --follow --poll-interval 2000`,
    )
    .action(async (opts: IngestOptions) => setExit(await ingest(opts, io)));
}

/**
 * The source: `--source NAME`'s entry (or the defaults), with the flags given over it; `settings` for this
 * command's own requests, `task` for the tasks' writer config (docs/ingest.md § Where the URL lives): the name
 * and the limits, and the URLs only when a flag gave one, never with a key in them.
 */
async function sourceOf(
  opts: IngestOptions,
  kernel: Kernel,
): Promise<{ settings: RpcSourceSettings; source: SourceConfig; task: TaskSource }> {
  const [{ defaultSource, rpcSettingsOf }, { rpcUrlHasKey, maskRpcUrl }] = await Promise.all([
    import('../../services/chain-rpc/source-settings.js'),
    import('../../services/chain-rpc/url-mask.js'),
  ]);
  let base: SourceConfig = defaultSource();
  if (opts.source !== undefined) {
    const declared = kernel.config.sources[opts.source];
    if (declared === undefined) {
      const names = Object.keys(kernel.config.sources);
      throw new UsageError(
        `--source ${opts.source}: no sources.${opts.source} in the config (declared: ${names.join(', ') || 'none'})`,
      );
    }
    base = declared;
  }
  const rpcUrl = opts.rpc ?? base.rpcUrl;
  if (rpcUrl === undefined) {
    throw new UsageError(
      opts.source === undefined
        ? 'give --rpc <url> or --source <name>'
        : `sources.${opts.source}.rpcUrl is not set`,
    );
  }
  const int = (flag: string, text: string | undefined, fallback: number, min: number) =>
    text === undefined ? fallback : integerFlag(flag, text, min);
  const source: SourceConfig = {
    ...base,
    rpcUrl,
    ...(opts.fallbackRpc !== undefined ? { fallbackUrl: opts.fallbackRpc } : {}),
    ...(opts.ws !== undefined ? { wsUrl: wsUrlFlag(opts.ws) } : {}),
    ...(opts.chainId !== undefined ? { chainId: integerFlag('--chain-id', opts.chainId, 0) } : {}),
    finality: int('--finality', opts.finality, base.finality, 0),
    pollIntervalMs: int('--poll-interval', opts.pollInterval, base.pollIntervalMs, 1),
    traces: opts.traces && base.traces,
    maxConcurrentRequests: int(
      '--max-concurrent-requests',
      opts.maxConcurrentRequests,
      base.maxConcurrentRequests,
      1,
    ),
    requestsPerSecond: int('--requests-per-second', opts.requestsPerSecond, base.requestsPerSecond, 0),
    requestTimeoutMs: int('--request-timeout-ms', opts.requestTimeoutMs, base.requestTimeoutMs, 1),
  };
  const settings = rpcSettingsOf(opts.source ?? 'rpc', { ...source, rpcUrl });
  const { urls, ...limits } = settings;
  if (opts.rpc === undefined && opts.fallbackRpc === undefined) return { settings, source, task: limits };
  // A URL given by flag reaches the Workers only in the task, so it must hold no key.
  const keyed = urls.find(rpcUrlHasKey);
  if (keyed !== undefined) {
    const name = opts.source ?? 'NAME';
    throw new UsageError(
      `${maskRpcUrl(keyed)} holds a key (shown masked), and a URL given by --rpc or --fallback-rpc travels ` +
        `in every task: declare it as sources.${name}.rpcUrl (or BLOCKX_SOURCE_${name.toUpperCase()}_RPC_URL) ` +
        `in the config or environment of the Workers and of this command, and give --source ${name} ` +
        `without --rpc (docs/ingest.md § Where the URL lives)`,
    );
  }
  return { settings, source, task: { ...limits, urls } };
}

async function ingest(opts: IngestOptions, io: CliIo): Promise<number> {
  if (opts.coordinator !== undefined && opts.worker !== undefined) {
    throw new UsageError('give --coordinator or --worker, not both');
  }
  const from = integerFlag('--from', opts.from, 0);
  const toFlag = opts.to === undefined ? undefined : integerFlag('--to', opts.to, 0);
  const bundleSizeFlag =
    opts.bundleSize === undefined ? undefined : integerFlag('--bundle-size', opts.bundleSize, 1);
  const flags = await runFlags(opts, 'block', io);

  const [{ RpcClient }, { BlockFetcher }, { ChainRpcError }, { bootKernel }] = await Promise.all([
    import('../../services/chain-rpc/adapters/rpc-client.js'),
    import('../../services/chain-rpc/adapters/block-fetcher.js'),
    import('../../services/chain-rpc/errors.js'),
    import('../../kernel/kernel.js'),
  ]);
  const kernel = await bootKernel({ configPath: opts.config, cwd: io.cwd(), env: io.env });
  const { settings: source, source: entry, task: taskSource } = await sourceOf(opts, kernel);
  const { finality } = entry;
  const expectedChain = entry.chainId;
  let probe: InstanceType<typeof RpcClient>;
  try {
    probe = new RpcClient({
      ...source,
      maxAttempts: PROBE_ATTEMPTS,
      requestTimeoutMs: Math.min(source.requestTimeoutMs, PROBE_TIMEOUT_CAP_MS),
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  let chainId: number;
  let head: number;
  try {
    const fetcher = new BlockFetcher(probe);
    chainId = await fetcher.chainId();
    head = await fetcher.head();
  } catch (err) {
    if (!(err instanceof ChainRpcError)) throw err;
    io.stderr(`blockx ingest: ${err.message}\n`);
    return EXIT.UNREACHABLE;
  } finally {
    probe.close();
  }
  if (expectedChain !== undefined && expectedChain !== chainId) {
    io.stderr(
      `blockx ingest: source ${source.name} (${probe.maskedUrl}) is on chain ${chainId}, not chain ${expectedChain}\n`,
    );
    return EXIT.USAGE;
  }
  if (opts.follow === true && toFlag !== undefined) {
    throw new UsageError('--follow goes on past the head: drop --to');
  }
  const to = toFlag ?? head - finality;
  if (to < from && opts.follow !== true) {
    const why =
      toFlag !== undefined
        ? `--to ${to} is below --from ${from}`
        : `the node's head is ${head}: with --finality ${finality} the range ends at ${to}, below --from ${from}`;
    throw new UsageError(why);
  }
  if (toFlag !== undefined && toFlag > head) {
    io.stderr(
      `blockx ingest: note: --to ${toFlag} is past the node's head ${head}; those blocks fail until mined\n`,
    );
  }

  // The task of a unit, its selector filled by the job: a block, or a bundle of bundleSize blocks.
  const templateOf = (unit: { block: { number: number } } | { bundle: number; bundleSize: number }) => ({
    functionCallConfig: { type: 'ChainIngestCallConfig', config: { chainId, ...unit } },
    resultHandler: {
      type: 'ChainIngestResultHandler',
      config: { source: taskSource, chainId, ...unit, traces: entry.traces },
    },
  });
  const template = templateOf({ block: { number: from } });
  // Bundles: of the flag's size over any range, else of the source's over a range longer than its threshold.
  const bundleSize = bundleSizeFlag ?? entry.bundleSize;
  const split =
    bundleSize > 1
      ? {
          bundleTemplate: templateOf({ bundle: 0, bundleSize }),
          bundleSize,
          longerThan: bundleSizeFlag === undefined ? entry.bundleThreshold : 0,
        }
      : undefined;
  // Bundles in flight by default when the range will run as bundles (each holds its blocks until written).
  const bundled = split !== undefined && (opts.follow === true || to - from + 1 > split.longerThan);
  const concurrency =
    opts.concurrency === undefined && bundled ? DEFAULT_CONCURRENCY.bundle : flags.concurrency;
  const { retries, connectTimeoutMs } = flags;
  const run = {
    ...(opts.coordinator !== undefined ? { coordinator: opts.coordinator } : {}),
    ...(opts.worker !== undefined ? { worker: opts.worker } : {}),
    concurrency,
    retries,
    json: opts.json === true,
    stateDir: opts.stateDir,
    fresh: opts.fresh === true,
    connectTimeoutMs,
  };
  if (opts.follow === true) {
    const { ingestFollow } = await import('./ingest-follow.js');
    return ingestFollow(
      {
        kernel,
        settings: source,
        source: entry,
        maskedUrl: probe.maskedUrl,
        chainId,
        from,
        head,
        template,
        ...(split !== undefined ? { split } : {}),
        run,
        waitForLock: opts.waitForLock === true,
      },
      io,
    );
  }
  const { sourceMissing } = await import('./ingest-follow.js');
  return runBlockJob({
    command: 'ingest',
    where: `ingest from ${probe.maskedUrl}`,
    template,
    range: { from, to },
    per: 'block',
    ...(split !== undefined ? { split } : {}),
    run,
    kernel,
    io,
    stopOn: sourceMissing,
  });
}

/** `--ws`: a ws:// or wss:// URL (the field's own pattern, sources.<name>.wsUrl). */
function wsUrlFlag(url: string): string {
  if (!/^wss?:\/\//.test(url)) throw new UsageError(`--ws must be a ws:// or wss:// URL, got ${url}`);
  return url;
}
