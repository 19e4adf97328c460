// The resolved BlockX configuration: what `loadConfig` returns after parsing, validation, env overrides,
// defaults and cross-field rules. Every field is present (defaults filled in) and the object is frozen.
// The file form (what users write) is the same shape with every field optional except `version`
// and each deployment's `kind`; schemas/blockx.config.schema.json is its single source of truth.

export type DeploymentKind = 'block' | 'bundle';
export type ColumnType = 'integer' | 'bigint' | 'real' | 'text' | 'boolean' | 'json' | 'bytes';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface ColumnConfig {
  readonly type: ColumnType;
  readonly nullable: boolean;
}

export interface TableConfig {
  readonly description?: string;
  readonly columns: Readonly<Record<string, ColumnConfig>>;
  readonly primaryKey: readonly string[];
  readonly blockColumn?: string;
  readonly chainColumn?: string;
  /** The block hash column (text): several blocks can share a height; the hash picks one. */
  readonly blockHashColumn?: string;
  /**
   * Whether tasks (writers, through the task IO scope) may write this table. `loadConfig` fills in
   * false when the file leaves it out; absent in an in-process config means false too. Chain data loaded
   * by `blockx data load|generate` is not a task write. docs/storage.md, "Which tables tasks may write".
   */
  readonly writable?: boolean;
}

/** One retry scope of the task IO scope (docs/task-lifecycle.md § Retry scopes: Builder, Calls, Result). */
export interface IoRetryConfig {
  /** Attempts including the first; 1 = no retry. */
  readonly maxAttempts: number;
  readonly initialBackoffMs: number;
  readonly maxBackoffMs: number;
}

export interface CoordinatorConfig {
  readonly listen: string;
  readonly registryPrefixes: readonly string[];
  readonly workerRpcTimeoutMs: number;
  readonly etcdDialTimeoutMs: number;
  readonly etcdWatchRetryDelayMs: number;
  readonly heartbeatTimeoutMs: number;
  /** A heartbeat more than this ahead of the Coordinator's clock is not routable. */
  readonly maxClockSkewMs: number;
  readonly watchGracePeriodMs: number;
  readonly slotTtlMs: number;
  readonly maxCandidates: number;
  readonly maxTimeoutRetries: number;
  readonly circuitBreakerThreshold: number;
  readonly circuitBreakerCooldownMs: number;
  readonly cpuRedLine: number;
  readonly memoryRedLine: number;
  readonly errorRateRedLine: number;
  /** capacity | affinity: how candidates are ranked (docs/placement.md). */
  readonly placement: 'capacity' | 'affinity';
}

export interface AdmissionConfig {
  readonly builderSlots: number;
  readonly executorTaskSlots: number;
  readonly pluginSlots: number;
  readonly scanSlots: number;
}

export interface CallRetryConfig {
  readonly maxAttempts: number;
  readonly initialBackoffMs: number;
  readonly maxBackoffMs: number;
}

/** The batched RunTasks stream of a Worker (docs/batched-protocol.md § Worker). */
export interface RunTasksConfig {
  /** Credits each RunTasks stream grants (tasks in flight per stream); unset = the worker's taskSlots. */
  readonly maxInFlight?: number;
  /** How long terminal updates wait to share one message, in ms; 0 = the next event-loop turn. */
  readonly flushMs: number;
}

export interface WorkerConfig {
  readonly listen: string;
  /** Empty string: derived from `listen` at startup. */
  readonly advertiseAddr: string;
  readonly registryPrefix: string;
  readonly taskSlots: number;
  readonly defaultTtlMs: number;
  /** Largest RequestTaskSlot ttl_ms; above it InvalidArgument (docs/security.md § Input bounds). */
  readonly maxSlotTtlMs: number;
  readonly taskDeadlineMs: number;
  readonly maxTaskTimeoutMs: number;
  readonly resultRetentionMs: number;
  readonly heartbeatIntervalMs: number;
  /**
   * The soonest an extra heartbeat follows the previous one when tasks ended on a busy worker (0 = off;
   * docs/batched-protocol.md § Capacity heartbeats). Env WORKER_CAPACITY_HEARTBEAT_MS.
   */
  readonly capacityHeartbeatMs: number;
  readonly watchDisconnectGraceMs: number;
  readonly timerScanMs: number;
  readonly keepaliveTimeMs: number;
  readonly keepaliveTimeoutMs: number;
  readonly drainTimeoutMs: number;
  readonly admission: AdmissionConfig;
  readonly taskMaxInflightCalls: number;
  /** Call budget (docs/security.md, Task isolation): attempts per task, and pending subcalls per task. */
  readonly taskMaxCallAttempts: number;
  readonly taskMaxPendingSubcalls: number;
  readonly callDeadlineMs: number;
  readonly maxCollectedOutputBytes: number;
  readonly callRetry: CallRetryConfig;
  readonly runTasks: RunTasksConfig;
}

export interface ExecutorConfig {
  /** Empty string: the OS temp dir. */
  readonly socketDir: string;
  readonly threads: number;
  readonly heartbeatIntervalMs: number;
  readonly heartbeatTimeoutMs: number;
  readonly restartBackoffInitialMs: number;
  readonly restartBackoffMaxMs: number;
  readonly cancelHardLimitMs: number;
  /** Rows of `ctx.io.get/getMany` answers each execution thread keeps for a task's other calls; 0 = off. */
  readonly readCopyMaxEntries: number;
  /** task | none: isolation between tasks on an execution thread (docs/security.md, Task isolation). */
  readonly isolation: 'task' | 'none';
  /** Execution thread V8 heap limit (resourceLimits.maxOldGenerationSizeMb). */
  readonly threadHeapMb: number;
  /** Heap + off-heap memory one execution thread may hold; 0 = unchecked. */
  readonly threadMemoryMb: number;
  /** Executor process RSS bound; 0 = unchecked. */
  readonly maxRssMb: number;
}

export interface DeploymentConfig {
  readonly name: string;
  readonly kind: DeploymentKind;
  readonly coordinator: CoordinatorConfig;
  readonly worker: WorkerConfig;
  readonly executor: ExecutorConfig;
}

export interface TlsConfig {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
  /** A non-loopback listen address without TLS is refused unless this is true. */
  readonly allowPlaintext: boolean;
}

export interface BlockxConfig {
  readonly version: 1;
  /** Absolute path of the config file; empty when built from defaults alone. */
  readonly configFile: string;
  /** Folder relative paths are resolved against (the config file's folder). */
  readonly baseDir: string;
  /**
   * TLS and mutual authentication (docs/security.md § TLS and authentication): on when ca, cert and key
   * are all set (absolute paths after resolution), off when all are empty.
   */
  readonly tls: TlsConfig;
  readonly registry: {
    readonly etcd: {
      readonly endpoints: readonly string[];
      readonly dialTimeoutMs: number;
      readonly leaseTtlMs: number;
      /** TLS to etcd: CA file (empty = plaintext), and a client certificate and key (both or neither). */
      readonly ca: string;
      readonly cert: string;
      readonly key: string;
      /** etcd auth: user and password (both or neither; empty = no auth). */
      readonly username: string;
      readonly password: string;
    };
  };
  readonly storage: {
    readonly url: string;
    readonly maxConcurrentOps: number;
    readonly admissionWaitMs: number;
    readonly poolSize: number;
    readonly scanBatchSize: number;
    readonly readCacheMaxEntries: number;
    readonly retry: {
      readonly builder: IoRetryConfig;
      readonly calls: IoRetryConfig;
      readonly result: IoRetryConfig;
    };
  };
  /** `dir` is absolute after resolution. */
  readonly functions: { readonly dir: string };
  /** `dirs` are absolute after resolution. */
  readonly plugins: { readonly dirs: readonly string[]; readonly packages: readonly string[] };
  readonly tables: Readonly<Record<string, TableConfig>>;
  readonly observability: {
    readonly prometheus: { readonly listenAddr: string; readonly path: string };
    readonly logLevel: LogLevel;
  };
  readonly up: {
    readonly deployment: string;
    readonly workers: number;
    readonly coordinatorListen: string;
    readonly workerBasePort: number;
    readonly demo: boolean;
  };
  readonly deployments: Readonly<Record<string, DeploymentConfig>>;
}
