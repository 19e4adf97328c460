// The rows of `sources.<name>`: an Ethereum JSON-RPC node `blockx ingest --source NAME` reads (docs/ingest.md).
// Row order is the order of the keys in the resolved config, the schema and docs/configuration.md. The
// request limits hold per process (each Worker that ingests has one client per source, shared by its tasks).
import type { ConfigField, ConfigGroup } from './field.js';

const POSITIVE = { t: 'int', min: 1 } as const;
const NON_NEGATIVE = { t: 'int', min: 0 } as const;
const HTTP_URL = { t: 'string', pattern: '^https?://' } as const;
const s = (row: Omit<ConfigField, 'section'>): ConfigField => ({ section: 'source', ...row });

export const SOURCE_GROUPS: readonly ConfigGroup[] = [
  {
    section: 'source',
    path: '',
    description:
      'An Ethereum JSON-RPC node `blockx ingest --source NAME` reads into the chain tables, and the limits of the requests to it (docs/ingest.md).',
    typeName: 'SourceConfig',
  },
];

export const SOURCE_FIELDS: readonly ConfigField[] = [
  s({
    path: 'rpcUrl',
    type: HTTP_URL,
    description:
      "The node's JSON-RPC URL (http:// or https://); required to ingest. Env BLOCKX_SOURCE_<NAME>_RPC_URL (the name upper-cased) overrides it, or declares the source. Read by each process from its own config: tasks name the source, never its URL, so a key in it (user:KEY@, a path segment, a query value) stays on the machines that hold it, and is masked in every message.",
  }),
  s({
    path: 'fallbackUrl',
    type: HTTP_URL,
    description:
      'A second URL: after a failed attempt on one URL the next attempt goes to the other. Env BLOCKX_SOURCE_<NAME>_FALLBACK_URL overrides it. Unset: none.',
  }),
  s({
    path: 'wsUrl',
    type: { t: 'string', pattern: '^wss?://' },
    description:
      "With `blockx ingest --follow`: the node's WebSocket URL (ws:// or wss://). The follower subscribes there to new heads (eth_subscribe newHeads) and asks for the head as soon as one is announced; it still asks every pollIntervalMs, which is all it does while the socket is down (opened again after 1 s, doubling to 30 s). Blocks are fetched over rpcUrl. Read by the follower only, never sent in a task. Env BLOCKX_SOURCE_<NAME>_WS_URL overrides it. Unset: polling alone (docs/ingest.md § Following the head).",
  }),
  s({
    path: 'chainId',
    type: NON_NEGATIVE,
    description:
      "The chain the node must be on, checked with eth_chainId before the job and in every block's batch. Unset: whatever the node reports.",
  }),
  s({
    path: 'finality',
    type: NON_NEGATIVE,
    default: 64,
    description:
      'Blocks at or below head − finality are final: a job without an end block stops there, and `blockx ingest --follow` stops on a reorg deeper than this (docs/ingest.md § Following the head).',
  }),
  s({
    path: 'pollIntervalMs',
    type: POSITIVE,
    default: 1_000,
    description: 'With `blockx ingest --follow`, how often the node is asked for its head once caught up.',
  }),
  s({
    path: 'traces',
    type: { t: 'boolean' },
    default: true,
    description:
      'Fill the traces table (trace_block, or debug_traceBlockByNumber with the call tracer); a node serving neither is said once and skipped.',
  }),
  s({
    path: 'bundleSize',
    type: POSITIVE,
    default: 50,
    description:
      'Blocks per ingestion task over a long range: `blockx ingest` without --bundle-size runs every whole aligned bundle of this many blocks in a range of more than bundleThreshold blocks as one task (its blocks fetched side by side, written in one transaction) and the blocks at the edges one task each; 1 = always one task per block. A bundle task holds its blocks in memory until it writes them: lower it for chains of heavy blocks (docs/ingest.md § Bundles by default).',
  }),
  s({
    path: 'bundleThreshold',
    type: NON_NEGATIVE,
    default: 500,
    description:
      '`blockx ingest` without --bundle-size runs a range of more than this many blocks as bundles of bundleSize (with the edges per block); a shorter range, and a follower at the head, run one task per block.',
  }),
  s({
    path: 'maxConcurrentRequests',
    type: POSITIVE,
    default: 8,
    description:
      'HTTP requests in flight to the node at once, per process, all its tasks together (a JSON-RPC batch is one request).',
  }),
  s({
    path: 'requestsPerSecond',
    type: NON_NEGATIVE,
    default: 0,
    description:
      'HTTP requests sent per second to the node by one process, all its tasks together (a token bucket shared by every task of the process that reads the source); 0 = no limit.',
  }),
  s({
    path: 'requestBurst',
    type: POSITIVE,
    default: 1,
    description:
      'Requests that may go back to back after a quiet spell (the token bucket holds this many): over any window of W seconds at most requestBurst + requestsPerSecond · W go. 1 = evenly spaced.',
  }),
  s({
    path: 'requestTimeoutMs',
    type: POSITIVE,
    default: 10_000,
    description: 'Timeout of one HTTP request; a request past it is a failed attempt.',
  }),
  s({
    path: 'maxAttempts',
    type: POSITIVE,
    default: 5,
    description:
      'Attempts per request, the first included, on timeouts, connection errors, unreadable bodies, HTTP 429 and 5xx.',
  }),
  s({
    path: 'initialBackoffMs',
    type: NON_NEGATIVE,
    default: 100,
    description:
      'Ceiling of the wait before the second attempt; it doubles per attempt up to maxBackoffMs, and the wait is drawn uniformly below it.',
  }),
  s({
    path: 'maxBackoffMs',
    type: NON_NEGATIVE,
    default: 5_000,
    description: 'Largest ceiling of the wait between attempts.',
  }),
  s({
    path: 'maxRetryAfterMs',
    type: NON_NEGATIVE,
    default: 60_000,
    description:
      'Longest Retry-After of a 429 that is waited out (pausing the whole source); a longer one fails the request as RATE_LIMITED.',
  }),
];
