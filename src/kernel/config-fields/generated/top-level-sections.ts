// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-config.mjs from the config field table
// (src/kernel/config-fields/); `node scripts/check-generated.mjs` checks it is fresh. The resolved
// top-level sections (defaults filled in); kernel/config-types.ts assembles them into BlockxConfig.

/**
 * TLS and mutual authentication of every gRPC endpoint and the metrics endpoint (docs/security.md § TLS
 * and authentication). With ca, cert and key set, every server asks each caller for a certificate
 * signed by `ca`, and every client verifies the server certificate against `ca` and the address it
 * dials. `blockx certs` makes a development CA and certificates.
 */
export interface TlsConfig {
  /** PEM file of the cluster CA. Default empty (TLS off). Env BLOCKX_TLS_CA. */
  readonly ca: string;
  /**
   * PEM certificate chain this process presents, as a server and as a client. A server's certificate
   * must name every address it is reached at (IP or DNS SAN). Default empty. Env BLOCKX_TLS_CERT.
   */
  readonly cert: string;
  /** PEM private key of `cert`. Default empty. Env BLOCKX_TLS_KEY. */
  readonly key: string;
  /**
   * Let a service listen on a non-loopback address without TLS. Default false (a non-loopback listen
   * address without TLS is refused at startup). Env BLOCKX_TLS_ALLOW_PLAINTEXT.
   */
  readonly allowPlaintext: boolean;
}

/**
 * Worker discovery. With no etcd endpoints, `blockx up` uses its in-process registry and `blockx
 * worker` runs standalone.
 */
export interface RegistryConfig {
  /** The etcd cluster, its TLS and its auth (docs/security.md § etcd). */
  readonly etcd: {
    /** etcd client URLs (comma-separated in the variable). Default [] (no etcd). Env ETCD_ENDPOINTS. */
    readonly endpoints: readonly string[];
    /** etcd connect timeout. Default 5000. */
    readonly dialTimeoutMs: number;
    /**
     * Worker heartbeat lease TTL (etcd leases are whole seconds); a crashed worker disappears from the
     * registry after at most this long. Default 10000.
     */
    readonly leaseTtlMs: number;
    /**
     * PEM file of the CA that signs etcd's server certificate. Set: the client connects with TLS and
     * verifies etcd. Default empty (plaintext). Env ETCD_CA_FILE.
     */
    readonly ca: string;
    /**
     * PEM client certificate for etcd's --client-cert-auth; needs `key` and `ca`. Default empty. Env
     * ETCD_CERT_FILE.
     */
    readonly cert: string;
    /** PEM private key of `cert`. Default empty. Env ETCD_KEY_FILE. */
    readonly key: string;
    /**
     * etcd user when etcd auth is enabled; needs `password`. Default empty (no auth). Env
     * ETCD_USERNAME.
     */
    readonly username: string;
    /**
     * Password of `username` (prefer the variable to the file). Never printed. Default empty. Env
     * ETCD_PASSWORD.
     */
    readonly password: string;
  };
}

export interface IoRetryConfig {
  /** Attempts including the first; 1 = no retry. */
  readonly maxAttempts: number;
  /** Backoff before the first retry. */
  readonly initialBackoffMs: number;
  /** Largest backoff between retries. */
  readonly maxBackoffMs: number;
}

/** Where tables live, and how storage operations are bounded. */
export interface StorageConfig {
  /**
   * sqlite:PATH, sqlite::memory: or postgres://user@host:port/db. Default sqlite:.blockx/blockx.db. Env
   * BLOCKX_STORAGE_URL.
   */
  readonly url: string;
  /** Backend admission cap. Default 32. */
  readonly maxConcurrentOps: number;
  /** Longest wait for a backend slot before a retryable overload error. Default 1000. */
  readonly admissionWaitMs: number;
  /** PostgreSQL pool size. Default 10. */
  readonly poolSize: number;
  /**
   * PostgreSQL: how long the server keeps the transaction of a connection that went silent (a
   * partition, a lost host) before it aborts it and frees its locks; set per connection as
   * idle_in_transaction_session_timeout, tcp_user_timeout and TCP keepalives (docs/storage.md § A lost
   * connection). 0 = the server's own settings. Default 10000.
   */
  readonly lostClientTimeoutMs: number;
  /** Rows fetched per page of a table scan (keyset pagination bounds memory). Default 1000. */
  readonly scanBatchSize: number;
  /**
   * Most cached reads (rows or misses) one task keeps; beyond it the oldest are dropped. 0 = no cache.
   * Default 100000.
   */
  readonly readCacheMaxEntries: number;
  /**
   * Retry scopes of the task IO scope: bounded retries with exponential backoff on retryable storage
   * errors (connection reset, serialization failure, admission overload).
   */
  readonly retry: {
    /** Reads of the Call Builder. */
    readonly builder: IoRetryConfig;
    /** Reads of running functions (ctx.io). */
    readonly calls: IoRetryConfig;
    /**
     * Reads and transactions of the Writer Plugin; a conflict (serialization failure, deadlock) re-runs
     * the whole transaction.
     */
    readonly result: IoRetryConfig;
  };
}

/** User functions. */
export interface FunctionsConfig {
  /**
   * Folder of function modules, relative to the config file. Default functions. Env
   * BLOCKX_FUNCTIONS_DIR.
   */
  readonly dir: string;
  /**
   * Where a Worker gets its function code (docs/functions-deploy.md). `local`: the `functions.dir`
   * folder of its machine. `cluster`: the version deployed with `blockx functions deploy` (in etcd),
   * fetched and hash-checked; new tasks switch to a newly deployed version, running tasks keep theirs.
   * Default local. Env BLOCKX_FUNCTIONS_SOURCE.
   */
  readonly source: 'local' | 'cluster';
}

/** Plugin packages. */
export interface PluginsConfig {
  /**
   * Folders whose subfolders are plugin packages, relative to the config file: the project's own
   * plugins. The built-in plugins (plugins/builders and plugins/writers of the installed package) are
   * always loaded besides them. A running process loads them again when this list or a package's files
   * changed (docs/plugins.md § Loading plugins again). Default [].
   */
  readonly dirs: readonly string[];
  /**
   * npm package names of plugins, resolved from the config file's folder. Loaded again like
   * `plugins.dirs`. Default [].
   */
  readonly packages: readonly string[];
}

/** Metrics and logs. */
export interface ObservabilityConfig {
  /** The Prometheus metrics endpoint. */
  readonly prometheus: {
    /**
     * host:port every service serves its metrics on (`blockx up`: one endpoint for the cluster).
     * Default empty (off). Env BLOCKX_PROMETHEUS_LISTEN_ADDR.
     */
    readonly listenAddr: string;
    /** HTTP path of the metrics. Default /metrics. Env BLOCKX_PROMETHEUS_PATH. */
    readonly path: string;
  };
  /**
   * The web dashboard of the Coordinator (docs/dashboard.md): the cluster, throughput and failures,
   * recent tasks and backfill jobs, live.
   */
  readonly dashboard: {
    /**
     * host:port the Coordinator serves its web dashboard on (HTTPS with client certificates when `tls`
     * is set; without TLS only loopback unless tls.allowPlaintext). Default empty: `blockx coordinator`
     * serves none; `blockx up` serves one on 127.0.0.1 at its coordinator's port + 1 (8081), or a free
     * port when that port is 0. Env BLOCKX_DASHBOARD_LISTEN_ADDR.
     */
    readonly listenAddr: string;
    /**
     * How often the Coordinator assembles a new snapshot and pushes it to open pages. Default 1000. Env
     * BLOCKX_DASHBOARD_INTERVAL_MS.
     */
    readonly intervalMs: number;
    /**
     * Live pages (event streams) served at once; one more is answered 503. Default 16. Env
     * BLOCKX_DASHBOARD_MAX_EVENT_CLIENTS.
     */
    readonly maxEventClients: number;
    /**
     * Live pages one client may hold at once (a client: its certificate with TLS, its address without);
     * one more is answered 429, so one client cannot take every stream. Default 4. Env
     * BLOCKX_DASHBOARD_MAX_EVENT_CLIENTS_PER_CLIENT.
     */
    readonly maxEventClientsPerClient: number;
    /**
     * Open connections from one remote address; more are closed at once, so idle connections of one
     * host cannot lock others out. Default 16. Env BLOCKX_DASHBOARD_MAX_CONNECTIONS_PER_ADDRESS.
     */
    readonly maxConnectionsPerAddress: number;
    /**
     * Host names the page may be opened by over plain HTTP besides IP addresses and localhost (a
     * defence against DNS rebinding; with TLS any name is accepted). Default []. Env
     * BLOCKX_DASHBOARD_ALLOWED_HOSTS.
     */
    readonly allowedHosts: readonly string[];
  };
  /** Level of the JSON log lines (pino). Default info. Env BLOCKX_LOG_LEVEL. */
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
}

/** `blockx up`: the one-machine cluster. */
export interface UpConfig {
  /** Deployment it runs. Default block (or the first declared deployment when there is no block). */
  readonly deployment: string;
  /** Workers to start. Default 2. */
  readonly workers: number;
  /** Where its Coordinator listens. Default 127.0.0.1:8080. */
  readonly coordinatorListen: string;
  /** Worker i listens on basePort+i; 0 picks free ports. Default 0. */
  readonly workerBasePort: number;
  /**
   * Run each Worker (with its Executors) in a child process of its own, supervised and restarted by
   * `blockx up`, as `blockx worker` runs in production; false runs them in the `blockx up` process.
   * `sqlite::memory:` storage always runs them in it (a memory database cannot be shared).
   * docs/architecture.md § blockx up. Default true.
   */
  readonly workerProcesses: boolean;
  /**
   * Run the demo after start: a backfill of a generated 20-block chain into token_transfers
   * (docs/getting-started.md). Default true.
   */
  readonly demo: boolean;
}
