// The rows of the top level of blockx.config.yaml: tls, registry, storage, functions, plugins,
// observability, up (tables and deployments are maps, described by the schema skeleton in
// schema-skeleton.ts). Row order is the order of the keys in the resolved config and docs/configuration.md.
import type { ConfigField, ConfigGroup } from './field.js';

const POSITIVE = { t: 'int', min: 1 } as const;
const NON_NEGATIVE = { t: 'int', min: 0 } as const;
const TEXT = { t: 'string' } as const;
const top = (row: Omit<ConfigField, 'section'>): ConfigField => ({ section: 'top', ...row });

export const SHARED_GROUPS: readonly ConfigGroup[] = [
  {
    section: 'top',
    path: 'tls',
    description:
      'TLS and mutual authentication of every gRPC endpoint and the metrics endpoint (docs/security.md § TLS and authentication). With ca, cert and key set, every server asks each caller for a certificate signed by `ca`, and every client verifies the server certificate against `ca` and the address it dials. `blockx certs` makes a development CA and certificates.',
    typeName: 'TlsConfig',
  },
  {
    section: 'top',
    path: 'registry',
    description:
      'Worker discovery. With no etcd endpoints, `blockx up` uses its in-process registry and `blockx worker` runs standalone.',
    typeName: 'RegistryConfig',
  },
  {
    section: 'top',
    path: 'registry.etcd',
    description: 'The etcd cluster, its TLS and its auth (docs/security.md § etcd).',
  },
  {
    section: 'top',
    path: 'storage',
    description: 'Where tables live, and how storage operations are bounded.',
    typeName: 'StorageConfig',
  },
  {
    section: 'top',
    path: 'storage.retry',
    description:
      'Retry scopes of the task IO scope: bounded retries with exponential backoff on retryable storage errors (connection reset, serialization failure, admission overload).',
  },
  {
    section: 'top',
    path: 'storage.retry.builder',
    description: 'Reads of the Call Builder.',
    typeName: 'IoRetryConfig',
  },
  {
    section: 'top',
    path: 'storage.retry.calls',
    description: 'Reads of running functions (ctx.io).',
    typeName: 'IoRetryConfig',
  },
  {
    section: 'top',
    path: 'storage.retry.result',
    description:
      'Reads and transactions of the Writer Plugin; a conflict (serialization failure, deadlock) re-runs the whole transaction.',
    typeName: 'IoRetryConfig',
  },
  { section: 'top', path: 'functions', description: 'User functions.', typeName: 'FunctionsConfig' },
  { section: 'top', path: 'plugins', description: 'Plugin packages.', typeName: 'PluginsConfig' },
  {
    section: 'top',
    path: 'observability',
    description: 'Metrics and logs.',
    typeName: 'ObservabilityConfig',
  },
  { section: 'top', path: 'observability.prometheus', description: 'The Prometheus metrics endpoint.' },
  {
    section: 'top',
    path: 'observability.dashboard',
    description:
      'The web dashboard of the Coordinator (docs/dashboard.md): the cluster, throughput and failures, recent tasks and backfill jobs, live.',
  },
  { section: 'top', path: 'up', description: '`blockx up`: the one-machine cluster.', typeName: 'UpConfig' },
];

function ioRetry(scope: string, maxAttempts: number, maxBackoffMs: number): ConfigField[] {
  return [
    top({
      path: `storage.retry.${scope}.maxAttempts`,
      type: POSITIVE,
      default: maxAttempts,
      description: 'Attempts including the first; 1 = no retry.',
    }),
    top({
      path: `storage.retry.${scope}.initialBackoffMs`,
      type: NON_NEGATIVE,
      default: 20,
      description: 'Backoff before the first retry.',
    }),
    top({
      path: `storage.retry.${scope}.maxBackoffMs`,
      type: NON_NEGATIVE,
      default: maxBackoffMs,
      description: 'Largest backoff between retries.',
    }),
  ];
}

export const SHARED_FIELDS: readonly ConfigField[] = [
  top({
    path: 'tls.ca',
    type: TEXT,
    default: '',
    defaultText: 'empty (TLS off)',
    env: 'BLOCKX_TLS_CA',
    envParser: 'path',
    description: 'PEM file of the cluster CA.',
  }),
  top({
    path: 'tls.cert',
    type: TEXT,
    default: '',
    env: 'BLOCKX_TLS_CERT',
    envParser: 'path',
    description:
      "PEM certificate chain this process presents, as a server and as a client. A server's certificate must name every address it is reached at (IP or DNS SAN).",
  }),
  top({
    path: 'tls.key',
    type: TEXT,
    default: '',
    env: 'BLOCKX_TLS_KEY',
    envParser: 'path',
    description: 'PEM private key of `cert`.',
  }),
  top({
    path: 'tls.allowPlaintext',
    type: { t: 'boolean' },
    default: false,
    defaultText: 'false (a non-loopback listen address without TLS is refused at startup)',
    env: 'BLOCKX_TLS_ALLOW_PLAINTEXT',
    description: 'Let a service listen on a non-loopback address without TLS.',
  }),
  top({
    path: 'registry.etcd.endpoints',
    type: { t: 'list', item: 'string' },
    default: [],
    defaultText: '[] (no etcd)',
    env: 'ETCD_ENDPOINTS',
    description: 'etcd client URLs (comma-separated in the variable).',
  }),
  top({
    path: 'registry.etcd.dialTimeoutMs',
    type: POSITIVE,
    default: 5000,
    description: 'etcd connect timeout.',
  }),
  top({
    path: 'registry.etcd.leaseTtlMs',
    type: { t: 'int', min: 2000 },
    default: 10_000,
    description:
      'Worker heartbeat lease TTL (etcd leases are whole seconds); a crashed worker disappears from the registry after at most this long.',
  }),
  top({
    path: 'registry.etcd.ca',
    type: TEXT,
    default: '',
    defaultText: 'empty (plaintext)',
    env: 'ETCD_CA_FILE',
    envParser: 'path',
    description:
      "PEM file of the CA that signs etcd's server certificate. Set: the client connects with TLS and verifies etcd.",
  }),
  top({
    path: 'registry.etcd.cert',
    type: TEXT,
    default: '',
    env: 'ETCD_CERT_FILE',
    envParser: 'path',
    description: "PEM client certificate for etcd's --client-cert-auth; needs `key` and `ca`.",
  }),
  top({
    path: 'registry.etcd.key',
    type: TEXT,
    default: '',
    env: 'ETCD_KEY_FILE',
    envParser: 'path',
    description: 'PEM private key of `cert`.',
  }),
  top({
    path: 'registry.etcd.username',
    type: TEXT,
    default: '',
    defaultText: 'empty (no auth)',
    env: 'ETCD_USERNAME',
    description: 'etcd user when etcd auth is enabled; needs `password`.',
  }),
  top({
    path: 'registry.etcd.password',
    type: TEXT,
    default: '',
    env: 'ETCD_PASSWORD',
    description: 'Password of `username` (prefer the variable to the file). Never printed.',
  }),
  top({
    path: 'storage.url',
    type: { t: 'string', pattern: '^(sqlite:.+|postgres(ql)?://.+)$' },
    default: 'sqlite:.blockx/blockx.db',
    env: 'BLOCKX_STORAGE_URL',
    envParser: 'storageUrl',
    description: 'sqlite:PATH, sqlite::memory: or postgres://user@host:port/db.',
  }),
  top({
    path: 'storage.maxConcurrentOps',
    type: POSITIVE,
    default: 32,
    description: 'Backend admission cap.',
  }),
  top({
    path: 'storage.admissionWaitMs',
    type: NON_NEGATIVE,
    default: 1000,
    description: 'Longest wait for a backend slot before a retryable overload error.',
  }),
  top({ path: 'storage.poolSize', type: POSITIVE, default: 10, description: 'PostgreSQL pool size.' }),
  top({
    path: 'storage.lostClientTimeoutMs',
    type: NON_NEGATIVE,
    default: 10_000,
    description:
      "PostgreSQL: how long the server keeps the transaction of a connection that went silent (a partition, a lost host) before it aborts it and frees its locks; set per connection as idle_in_transaction_session_timeout, tcp_user_timeout and TCP keepalives (docs/storage.md § A lost connection). 0 = the server's own settings.",
  }),
  top({
    path: 'storage.scanBatchSize',
    type: POSITIVE,
    default: 1000,
    description: 'Rows fetched per page of a table scan (keyset pagination bounds memory).',
  }),
  top({
    path: 'storage.readCacheMaxEntries',
    type: NON_NEGATIVE,
    default: 100_000,
    description:
      'Most cached reads (rows or misses) one task keeps; beyond it the oldest are dropped. 0 = no cache.',
  }),
  ...ioRetry('builder', 3, 500),
  ...ioRetry('calls', 3, 500),
  ...ioRetry('result', 6, 1000),
  top({
    path: 'functions.dir',
    type: { t: 'string', minLength: 1 },
    default: 'functions',
    env: 'BLOCKX_FUNCTIONS_DIR',
    envParser: 'path',
    description: 'Folder of function modules, relative to the config file.',
  }),
  top({
    path: 'functions.source',
    type: { t: 'enum', values: ['local', 'cluster'], typed: true },
    default: 'local',
    env: 'BLOCKX_FUNCTIONS_SOURCE',
    description:
      'Where a Worker gets its function code (docs/functions-deploy.md). `local`: the `functions.dir` folder of its machine. `cluster`: the version deployed with `blockx functions deploy` (in etcd), fetched and hash-checked; new tasks switch to a newly deployed version, running tasks keep theirs.',
  }),
  top({
    path: 'plugins.dirs',
    type: { t: 'list', item: 'string' },
    default: [],
    reload: 'live',
    description:
      "Folders whose subfolders are plugin packages, relative to the config file: the project's own plugins. The built-in plugins (plugins/builders and plugins/writers of the installed package) are always loaded besides them. A running process loads them again when this list or a package's files changed (docs/plugins.md § Loading plugins again).",
  }),
  top({
    path: 'plugins.packages',
    type: { t: 'list', item: 'string' },
    default: [],
    reload: 'live',
    description:
      "npm package names of plugins, resolved from the config file's folder. Loaded again like `plugins.dirs`.",
  }),
  top({
    path: 'observability.prometheus.listenAddr',
    type: TEXT,
    default: '',
    defaultText: 'empty (off)',
    env: 'BLOCKX_PROMETHEUS_LISTEN_ADDR',
    description: 'host:port every service serves its metrics on (`blockx up`: one endpoint for the cluster).',
  }),
  top({
    path: 'observability.prometheus.path',
    type: { t: 'string', pattern: '^/' },
    default: '/metrics',
    env: 'BLOCKX_PROMETHEUS_PATH',
    envParser: 'urlPath',
    description: 'HTTP path of the metrics.',
  }),
  top({
    path: 'observability.dashboard.listenAddr',
    type: TEXT,
    default: '',
    defaultText:
      "empty: `blockx coordinator` serves none; `blockx up` serves one on 127.0.0.1 at its coordinator's port + 1 (8081), or a free port when that port is 0",
    env: 'BLOCKX_DASHBOARD_LISTEN_ADDR',
    description:
      'host:port the Coordinator serves its web dashboard on (HTTPS with client certificates when `tls` is set; without TLS only loopback unless tls.allowPlaintext).',
  }),
  top({
    path: 'observability.dashboard.intervalMs',
    type: { t: 'int', min: 100, max: 60_000 },
    default: 1000,
    env: 'BLOCKX_DASHBOARD_INTERVAL_MS',
    description: 'How often the Coordinator assembles a new snapshot and pushes it to open pages.',
  }),
  top({
    path: 'observability.dashboard.maxEventClients',
    type: { t: 'int', min: 1, max: 1000 },
    default: 16,
    env: 'BLOCKX_DASHBOARD_MAX_EVENT_CLIENTS',
    description: 'Live pages (event streams) served at once; one more is answered 503.',
  }),
  top({
    path: 'observability.dashboard.maxEventClientsPerClient',
    type: { t: 'int', min: 1, max: 1000 },
    default: 4,
    env: 'BLOCKX_DASHBOARD_MAX_EVENT_CLIENTS_PER_CLIENT',
    description:
      'Live pages one client may hold at once (a client: its certificate with TLS, its address without); one more is answered 429, so one client cannot take every stream.',
  }),
  top({
    path: 'observability.dashboard.maxConnectionsPerAddress',
    type: { t: 'int', min: 1, max: 10_000 },
    default: 16,
    env: 'BLOCKX_DASHBOARD_MAX_CONNECTIONS_PER_ADDRESS',
    description:
      'Open connections from one remote address; more are closed at once, so idle connections of one host cannot lock others out.',
  }),
  top({
    path: 'observability.dashboard.allowedHosts',
    type: { t: 'list', item: 'string' },
    default: [],
    env: 'BLOCKX_DASHBOARD_ALLOWED_HOSTS',
    description:
      'Host names the page may be opened by over plain HTTP besides IP addresses and localhost (a defence against DNS rebinding; with TLS any name is accepted).',
  }),
  top({
    path: 'observability.logLevel',
    type: { t: 'enum', values: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] },
    default: 'info',
    env: 'BLOCKX_LOG_LEVEL',
    description: 'Level of the JSON log lines (pino).',
  }),
  top({
    path: 'up.deployment',
    type: { t: 'identifier' },
    default: 'block',
    defaultText: 'block (or the first declared deployment when there is no block)',
    description: 'Deployment it runs.',
  }),
  top({
    path: 'up.workers',
    type: { t: 'int', min: 1, max: 64 },
    default: 2,
    description: 'Workers to start.',
  }),
  top({
    path: 'up.coordinatorListen',
    type: { t: 'listenAddr' },
    default: '127.0.0.1:8080',
    description: 'Where its Coordinator listens.',
  }),
  top({
    path: 'up.workerBasePort',
    type: { t: 'int', min: 0, max: 65535 },
    default: 0,
    description: 'Worker i listens on basePort+i; 0 picks free ports.',
  }),
  top({
    path: 'up.workerProcesses',
    type: { t: 'boolean' },
    default: true,
    description:
      'Run each Worker (with its Executors) in a child process of its own, supervised and restarted by `blockx up`, as `blockx worker` runs in production; false runs them in the `blockx up` process. `sqlite::memory:` storage always runs them in it (a memory database cannot be shared). docs/architecture.md § blockx up.',
  }),
  top({
    path: 'up.demo',
    type: { t: 'boolean' },
    default: true,
    description:
      'Run the demo after start: a backfill of a generated 20-block chain into token_transfers (docs/getting-started.md).',
  }),
];
