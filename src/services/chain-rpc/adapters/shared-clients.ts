// The sources of this process and their one client each (docs/ingest.md § Where the URL lives, § The RPC
// access layer).
//
// Where the URL comes from. A task names its source (`sources.<name>`) and carries its limits, never a URL
// with a key: a Worker reads the URL from its own config and environment (BLOCKX_SOURCE_<NAME>_RPC_URL), which
// the process declares here at start (`declareProcessSources`). So a provider's key stays on the machines that
// hold it and never reaches etcd, the Coordinator, task status or logs. A task may carry `urls` only for a
// source given by flag (`blockx ingest --rpc URL`), and the CLI sends none that holds a key; such URLs win over
// a declaration of the same name.
//
// One client per source. Every task of the process that reads one source (its name and URLs) goes through
// one RpcClient, so the source's concurrency, its token bucket (requests per second and burst) and a 429's
// pause hold for the process as a whole, and what the BlockFetcher learnt about the node is shared. A task
// whose limits differ from the client's reconfigures it: the limits of the task that came last are in force
// for all (one job per source at a time is the usual case; two at once with different limits share the
// later one's).
import { defaultSourceConfig } from '../../../kernel/config-defaults.js';
import type { SourceConfig } from '../../../kernel/config-types.js';
import { SourceNotDeclaredError } from '../errors.js';
import { BlockFetcher } from './block-fetcher.js';
import { RpcClient, type RpcLimits, type RpcSourceSettings } from './rpc-client.js';

/** A task's source (the writer config's `source`): its name, its limits, and URLs only when given by flag. */
export interface TaskSource extends Omit<RpcLimits, 'requestBurst'> {
  readonly name: string;
  readonly urls?: readonly string[];
  /** Absent in tasks of a CLI older than the field: the field table's default. */
  readonly requestBurst?: number;
}

const LIMIT_KEYS = [
  'maxConcurrentRequests',
  'requestsPerSecond',
  'requestBurst',
  'requestTimeoutMs',
  'maxAttempts',
  'initialBackoffMs',
  'maxBackoffMs',
  'maxRetryAfterMs',
] as const satisfies readonly (keyof RpcLimits)[];

let declared: Readonly<Record<string, SourceConfig>> = {};
const fetchers = new Map<string, BlockFetcher>();

/** The sources of this process's config (env overrides applied); a Worker calls it once at start. */
export function declareProcessSources(sources: Readonly<Record<string, SourceConfig>>): void {
  declared = sources;
}

/** The URLs of `source`: the task's own (given by flag), else this process's declaration. */
export function resolveSourceUrls(source: Pick<TaskSource, 'name' | 'urls'>): readonly string[] {
  if (source.urls !== undefined && source.urls.length > 0) return source.urls;
  const entry = declared[source.name];
  if (entry?.rpcUrl === undefined) {
    const variable = `BLOCKX_SOURCE_${source.name.toUpperCase()}_RPC_URL`;
    const names = Object.keys(declared).filter((n) => declared[n]?.rpcUrl !== undefined);
    throw new SourceNotDeclaredError(
      source.name,
      `this process has no URL for it: set sources.${source.name}.rpcUrl in the config it loads or ${variable} ` +
        `in its environment (declared here: ${names.join(', ') || 'none'})`,
    );
  }
  return entry.fallbackUrl === undefined ? [entry.rpcUrl] : [entry.rpcUrl, entry.fallbackUrl];
}

/** The process's fetcher of a task's source, its limits brought to the task's. */
export function sharedBlockFetcher(source: TaskSource): BlockFetcher {
  const urls = resolveSourceUrls(source);
  const limits = Object.fromEntries(
    LIMIT_KEYS.map((k) => [k, source[k] ?? defaultSourceConfig()[k]]),
  ) as unknown as RpcLimits;
  const key = JSON.stringify([source.name, ...urls]);
  const fetcher = fetchers.get(key);
  if (fetcher === undefined) {
    const settings: RpcSourceSettings = { ...limits, name: source.name, urls };
    const created = new BlockFetcher(new RpcClient(settings));
    fetchers.set(key, created);
    return created;
  }
  const current = fetcher.client.settings;
  if (LIMIT_KEYS.some((k) => current[k] !== limits[k])) fetcher.client.reconfigure(limits);
  return fetcher;
}
