// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-config.mjs from the config field table
// (src/kernel/config-fields/); `node scripts/check-generated.mjs` checks it is fresh. The resolved
// deployment sections (defaults filled in); kernel/config-types.ts assembles them into BlockxConfig.

/** The Coordinator of the deployment. */
export interface CoordinatorConfig {
  /**
   * host:port the Coordinator serves on. Loopback by default: another interface needs `tls` or
   * `tls.allowPlaintext` (docs/security.md). Default 127.0.0.1:8080. Env COORDINATOR_LISTEN.
   */
  readonly listen: string;
  /**
   * Registry prefixes the Coordinator watches for worker heartbeats (comma-separated in the variable,
   * which replaces the list). Default by kind: block [/blockx/workers/]; bundle
   * [/blockx/bundle-workers/, /blockx/prod/lanes/default/bundle-workers/]. Env
   * COORDINATOR_REGISTRY_PREFIXES.
   */
  readonly registryPrefixes: readonly string[];
  /**
   * Deadline of one RequestTaskSlot call to a Worker. Default 3000. Env
   * COORDINATOR_WORKER_RPC_TIMEOUT_MS.
   */
  readonly workerRpcTimeoutMs: number;
  /**
   * How long the Coordinator waits for etcd when it connects. Default 5000. Env
   * COORDINATOR_ETCD_DIAL_TIMEOUT_MS.
   */
  readonly etcdDialTimeoutMs: number;
  /**
   * Pause after a failed registry list+watch before the next try. Default 1000. Env
   * COORDINATOR_ETCD_WATCH_RETRY_DELAY_MS.
   */
  readonly etcdWatchRetryDelayMs: number;
  /**
   * A Worker whose heartbeat is older than this (by the Coordinator clock) is not routable. Default
   * 10000. Env COORDINATOR_HEARTBEAT_TIMEOUT_MS.
   */
  readonly heartbeatTimeoutMs: number;
  /**
   * A heartbeat more than this ahead of the Coordinator's clock is not routable (docs/security.md).
   * Default 5000. Env COORDINATOR_MAX_CLOCK_SKEW_MS.
   */
  readonly maxClockSkewMs: number;
  /**
   * How long a registry watch outage is tolerated before reservations fail Unavailable; must be <=
   * heartbeatTimeoutMs. Default 10000. Env COORDINATOR_WATCH_GRACE_PERIOD_MS.
   */
  readonly watchGracePeriodMs: number;
  /**
   * The reservation window passed to the Worker as ttl_ms; must be <= the worker's maxSlotTtlMs.
   * Default 5000. Env COORDINATOR_SLOT_TTL_MS.
   */
  readonly slotTtlMs: number;
  /** Workers tried per reservation request. Default 3. Env COORDINATOR_MAX_CANDIDATES. */
  readonly maxCandidates: number;
  /**
   * Times the same task id goes back to the same Worker after a timed-out (uncertain) reservation; 0
   * allowed. Default 1. Env COORDINATOR_MAX_TIMEOUT_RETRIES.
   */
  readonly maxTimeoutRetries: number;
  /**
   * Consecutive rejections or timeouts that open a Worker's circuit breaker. Default 3. Env
   * COORDINATOR_CIRCUIT_BREAKER_THRESHOLD.
   */
  readonly circuitBreakerThreshold: number;
  /**
   * How long an open breaker keeps the Worker out of selection. Default 10000. Env
   * COORDINATOR_CIRCUIT_BREAKER_COOLDOWN_MS.
   */
  readonly circuitBreakerCooldownMs: number;
  /**
   * In (0, 1]: a Worker whose heartbeat cpu is above it is not routable (docs/health.md). Default 0.9.
   * Env COORDINATOR_CPU_RED_LINE.
   */
  readonly cpuRedLine: number;
  /**
   * In (0, 1]: a Worker whose heartbeat memory is above it is not routable (docs/health.md). Default
   * 0.9. Env COORDINATOR_MEMORY_RED_LINE.
   */
  readonly memoryRedLine: number;
  /**
   * In (0, 1]: a Worker whose heartbeat error rate is above it is not routable (docs/health.md).
   * Default 0.5. Env COORDINATOR_ERROR_RATE_RED_LINE.
   */
  readonly errorRateRedLine: number;
  /**
   * capacity: most free slots first, counting the Coordinator's own reservations since the last
   * heartbeat; affinity: the same task id goes to the same worker while the routable set is stable
   * (docs/placement.md). Default capacity. Env COORDINATOR_PLACEMENT.
   */
  readonly placement: 'capacity' | 'affinity';
  /**
   * How long the Coordinator remembers the Worker it placed a task id on, so the same id goes back
   * there (docs/placement.md § One execution per task id); the workers' resultRetentionMs by default. 0
   * = off. Default 300000. Env COORDINATOR_PLACEMENT_MEMORY_MS.
   */
  readonly placementMemoryMs: number;
  /**
   * Most task ids remembered at once (about 150 bytes each); past it the oldest are forgotten early. 0
   * = off. Default 200000. Env COORDINATOR_PLACEMENT_MEMORY_MAX_ENTRIES.
   */
  readonly placementMemoryMaxEntries: number;
}

/** Phase-level admission semaphores. */
export interface AdmissionConfig {
  /** builderSem: tasks in their Builder phase. Default 16. */
  readonly builderSlots: number;
  /** executorSem: tasks in their Calls phase. Default 32. */
  readonly executorTaskSlots: number;
  /** pluginSem: tasks in their Writer phase. Default 16. */
  readonly pluginSlots: number;
  /** scanSem: table scans at once. Default 8. */
  readonly scanSlots: number;
}

/** CallRetryPolicy: bounded per-call attempt retries. */
export interface CallRetryConfig {
  /** Attempts of one call, including the first. Default 3. */
  readonly maxAttempts: number;
  /**
   * The failure kinds after which a call runs again (docs/retries.md § Call level): `executor_crash`
   * (the Executor died under it), `deadline` (it spent its callDeadlineMs), `io` and `user` (an IO
   * error or a thrown error, only when the error says it is retryable). A call that spent its budget is
   * not retried unless `deadline` is listed. `functions.retry.<name>` sets it per function. Default
   * [executor_crash, io, user].
   */
  readonly retryOn: readonly ('executor_crash' | 'deadline' | 'io' | 'user')[];
  /** Backoff before the first retry. Default 50. */
  readonly initialBackoffMs: number;
  /** Largest backoff between retries; must be >= initialBackoffMs. Default 1000. */
  readonly maxBackoffMs: number;
}

/** The batched RunTasks stream (docs/batched-protocol.md). */
export interface RunTasksConfig {
  /**
   * Credits each RunTasks stream grants (tasks in flight per stream). Default the worker's taskSlots.
   * Env WORKER_RUN_TASKS_MAX_IN_FLIGHT.
   */
  readonly maxInFlight?: number;
  /**
   * How long terminal updates wait to share one message; 0 = the next event-loop turn. Default 2. Env
   * WORKER_RUN_TASKS_FLUSH_MS.
   */
  readonly flushMs: number;
}

/** A Worker of the deployment. */
export interface WorkerConfig {
  /**
   * host:port the Worker serves on. Loopback by default: another interface needs `tls` or
   * `tls.allowPlaintext`. Default 127.0.0.1:9090. Env WORKER_LISTEN.
   */
  readonly listen: string;
  /**
   * host:port clients and the Coordinator dial; published in the heartbeat. Default empty (the listen
   * address with the host resolved). Env WORKER_ADVERTISE_ADDR.
   */
  readonly advertiseAddr: string;
  /**
   * Registry prefix the Worker publishes its heartbeat under. Default by kind: block /blockx/workers/;
   * bundle /blockx/bundle-workers/. Env WORKER_REGISTRY_PREFIX.
   */
  readonly registryPrefix: string;
  /**
   * The unified slot pool. At most 100000: a Coordinator refuses a heartbeat claiming more
   * (docs/security.md § The registry). Default 64. Env WORKER_TASK_SLOTS.
   */
  readonly taskSlots: number;
  /** Slot TTL of an inline SubmitTask reservation; must be <= maxSlotTtlMs. Default 5000. */
  readonly defaultTtlMs: number;
  /**
   * Largest ttl_ms RequestTaskSlot accepts; above it INVALID_ARGUMENT (docs/security.md). Must be >=
   * defaultTtlMs and >= the coordinator's slotTtlMs. Default 60000. Env MAX_SLOT_TTL_MS.
   */
  readonly maxSlotTtlMs: number;
  /**
   * Most reserved-but-not-submitted slots one client (certificate identity) may hold on this worker;
   * beyond it RESOURCE_EXHAUSTED NoSlot. 0 = no fixed limit; a fair-share reclaim applies either way
   * (docs/security.md § Reservations per client). Default 0. Env MAX_RESERVED_SLOTS_PER_CLIENT.
   */
  readonly maxReservedSlotsPerClient: number;
  /**
   * Timeout of a task submitted with task_timeout_ms = 0; must be <= maxTaskTimeoutMs. Default 300000.
   * Env TASK_DEADLINE_MS.
   */
  readonly taskDeadlineMs: number;
  /** Largest task_timeout_ms SubmitTask accepts. Default 28800000 (8 h). Env MAX_TASK_TIMEOUT_MS. */
  readonly maxTaskTimeoutMs: number;
  /** How long a terminal result stays queryable and idempotent. Default 300000. Env RESULT_RETENTION_MS. */
  readonly resultRetentionMs: number;
  /**
   * Registry heartbeat period. Default 200 (2000 recommended in production). Env
   * WORKER_HEARTBEAT_INTERVAL.
   */
  readonly heartbeatIntervalMs: number;
  /**
   * The soonest an extra heartbeat follows the previous one when tasks ended on a worker whose last
   * heartbeat showed it at least half full, so the Coordinator sees freed slots before the next regular
   * heartbeat (docs/batched-protocol.md). 0 = off. Default 25. Env WORKER_CAPACITY_HEARTBEAT_MS.
   */
  readonly capacityHeartbeatMs: number;
  /**
   * Grace from the last WatchTasks stream of a task detaching to WATCH_DISCONNECTED. Default 0 (off;
   * 120000 recommended in production). Env WATCH_DISCONNECT_GRACE_MS.
   */
  readonly watchDisconnectGraceMs: number;
  /** TickTimers period. Default 500. */
  readonly timerScanMs: number;
  /** gRPC keepalive PING interval. Default 30000. */
  readonly keepaliveTimeMs: number;
  /** gRPC keepalive ACK timeout. Default 10000. */
  readonly keepaliveTimeoutMs: number;
  /** On SIGTERM: how long running tasks may finish before exit. Default 30000. */
  readonly drainTimeoutMs: number;
  /** Phase-level admission semaphores. */
  readonly admission: AdmissionConfig;
  readonly fusion: {
    /**
     * Task fusion (docs/task-fusion.md): up to this many tasks of one submitter that reach their
     * Builder, Calls or Writer phase in the same event-loop turn, with plugins that say they may, run
     * that phase together (one scan, one call phase, one write transaction), each keeping its own id,
     * outcome and write; a fused phase that fails runs each task alone. 1 turns fusion off. Default 64.
     * Env WORKER_FUSION_MAX_TASKS.
     */
    readonly maxTasks: number;
  };
  /** Per-task in-flight call cap. Default 1024. */
  readonly taskMaxInflightCalls: number;
  /**
   * Pages: up to this many consecutive calls of one function whose arguments are rows of a scan travel
   * to the Executor as one attempt (docs/performance.md, Pages); a page that fails in any way is split
   * and its calls run on their own, each with its own attempts and budget. 1 turns pages off. Default
   * 256.
   */
  readonly callPageRows: number;
  /**
   * Call budget: call attempts one task may dispatch over its Calls phase (root calls, subcalls and
   * retries); one more fails the task with CALL_BUDGET_EXCEEDED (docs/security.md, Task isolation).
   * Default 1000000.
   */
  readonly taskMaxCallAttempts: number;
  /**
   * Call budget: ctx.call subcalls of one task that may be pending (asked for and not ended) at once;
   * one more fails the task with CALL_BUDGET_EXCEEDED. Default 10000.
   */
  readonly taskMaxPendingSubcalls: number;
  /** Per-call CPU + IO budget. Default 5000. Env CALL_DEADLINE_MS. */
  readonly callDeadlineMs: number;
  /** Cap on the summed JSON size of a task's outputs. Default 67108864 (64 MiB). */
  readonly maxCollectedOutputBytes: number;
  /** CallRetryPolicy: bounded per-call attempt retries. */
  readonly callRetry: CallRetryConfig;
  /** The batched RunTasks stream (docs/batched-protocol.md). */
  readonly runTasks: RunTasksConfig;
}

/**
 * The Python Executor a Worker runs beside the JS one for `functions/<name>.py` (docs/executor.md,
 * Python functions on a Worker).
 */
export interface PythonExecutorConfig {
  /**
   * auto: the Worker starts the Python Executor once the functions folder holds a .py function (at
   * start, or when the first one appears); on: always, at start; off: never (a call of a Python
   * function fails with a load error). Default auto.
   */
  readonly enabled: 'auto' | 'on' | 'off';
  /**
   * The Python interpreter that runs the Python Executor: a command on PATH or an absolute path.
   * Default empty ($BLOCKX_PYTHON, else python3).
   */
  readonly interpreter: string;
}

/** The Executor a Worker spawns and supervises. */
export interface ExecutorConfig {
  /** Folder for the Worker↔Executor Unix sockets. Default empty (the OS temp dir). */
  readonly socketDir: string;
  /** Execution units (worker threads) inside the Executor. Default 2. */
  readonly threads: number;
  /** Executor → Worker heartbeat period. Default 500. */
  readonly heartbeatIntervalMs: number;
  /**
   * Missed heartbeats for this long → Executor declared lost and restarted; must be >
   * heartbeatIntervalMs. Default 3000.
   */
  readonly heartbeatTimeoutMs: number;
  /** First Executor restart backoff. Default 100. */
  readonly restartBackoffInitialMs: number;
  /** Largest Executor restart backoff; must be >= restartBackoffInitialMs. Default 5000. */
  readonly restartBackoffMaxMs: number;
  /** A call that ignores CancelCall past this is terminated with its execution unit. Default 1000. */
  readonly cancelHardLimitMs: number;
  /**
   * Calls running at once on one execution unit; further calls wait in the Executor (a call waiting on
   * a subcall does not count). Default 256.
   */
  readonly maxCallsPerThread: number;
  /**
   * Rows (one per key read) of ctx.io.get / getMany answers each execution thread keeps for the other
   * calls of the same task (read copies; src/executor/PROTOCOL.md). 0 turns them off: every read goes
   * to the Worker. Default 10000.
   */
  readonly readCopyMaxEntries: number;
  /**
   * task: execution threads lock down the JavaScript intrinsics (SES lockdown), freeze the global
   * object and give each task its own instance of a function module; none: no isolation between tasks
   * on a thread (docs/security.md, Task isolation). Default task.
   */
  readonly isolation: 'task' | 'none';
  /**
   * V8 old-generation heap limit of each execution thread (worker_threads resourceLimits); a thread
   * over it dies and its calls fail with EXECUTOR_MEMORY_LIMIT. Default 1024.
   */
  readonly threadHeapMb: number;
  /**
   * Heap plus off-heap memory (Buffers, ArrayBuffers) one execution thread may hold; a thread over it
   * is terminated and its calls fail with EXECUTOR_MEMORY_LIMIT. 0 turns the check off. Default 1536.
   */
  readonly threadMemoryMb: number;
  /**
   * Resident memory of the whole Executor process; above it the thread holding the most memory is
   * terminated (its calls fail with EXECUTOR_MEMORY_LIMIT). 0 turns the check off. Default 4096.
   */
  readonly maxRssMb: number;
  /**
   * Names of environment variables the Executors get besides the fixed list (PATH, HOME, locale, TZ,
   * temp dirs, Python and Node search paths, BLOCKX_LOG_LEVEL, EXECUTOR_CPU_PROFILE/TRACE): nothing
   * else of the Worker's environment (credentials, storage URL, TLS paths) reaches a function
   * (docs/security.md, What a function can reach). Default [].
   */
  readonly passEnv: readonly string[];
  /**
   * The Unix user the Executors run as (a name, or UID:GID; needs a Worker running as root). auto: as
   * root, the unprivileged user nobody when it can reach the package and the functions folder, else the
   * Worker's user with one warning; as any other user, that user. Empty: always the Worker's user. A
   * named user that does not exist or cannot read those files stops the Worker (docs/security.md,
   * Executors as their own user). Default auto (as root: nobody, when it can read the package and the
   * functions folder).
   */
  readonly user: string;
  /**
   * RLIMIT_NPROC of the Executors when they run as a user of their own (executor.user): the processes
   * and threads that user may have, so a fork storm in a function fails its own forks, not the node.
   * Counted per user across the host (an idle JS Executor has about 15 threads, plus about 2 per
   * execution thread): every Worker of the host whose Executors share the user shares it. 0: no limit.
   * Default 4096.
   */
  readonly maxProcesses: number;
  /**
   * When the Worker runs as root, start each Executor as PID 1 of a PID namespace of its own
   * (util-linux unshare, and setpriv to drop to executor.user inside it), so that the child processes a
   * function starts cannot kill or stop it: the kernel keeps SIGKILL and SIGSTOP from inside a
   * namespace off its init. Where unshare or setpriv is missing or a namespace cannot be made, the
   * Worker warns once and runs the Executors without one. false: never (docs/security.md, An Executor
   * as PID 1 of its own PID namespace). Default true (as root, each Executor is PID 1 of a PID
   * namespace of its own).
   */
  readonly pidNamespace: boolean;
  /**
   * Hard memory ceiling of each Executor (the JS one and the Python one, each with what it forks): a
   * cgroup of its own under the Worker's, with this memory limit and no swap, where the host lets the
   * Worker make one (cgroup v2 with the memory controller delegated, or v1's memory tree; usually as
   * root); the kernel ends a process that allocates past it, inside that Executor. Where none can be
   * made the Worker says why once and runs the Executor without it. Above maxRssMb, which acts first
   * when memory grows slowly. 0: no cgroup (docs/security.md, A memory ceiling per Executor). Default
   * 6144.
   */
  readonly memoryMaxMb: number;
  /**
   * The Python Executor a Worker runs beside the JS one for `functions/<name>.py` (docs/executor.md,
   * Python functions on a Worker).
   */
  readonly python: PythonExecutorConfig;
}

/**
 * An Ethereum JSON-RPC node `blockx ingest --source NAME` reads into the chain tables, and the limits
 * of the requests to it (docs/ingest.md).
 */
export interface SourceConfig {
  /**
   * The node's JSON-RPC URL (http:// or https://); required to ingest. Env BLOCKX_SOURCE_<NAME>_RPC_URL
   * (the name upper-cased) overrides it, or declares the source. Read by each process from its own
   * config: tasks name the source, never its URL, so a key in it (user:KEY@, a path segment, a query
   * value) stays on the machines that hold it, and is masked in every message.
   */
  readonly rpcUrl?: string;
  /**
   * A second URL: after a failed attempt on one URL the next attempt goes to the other. Env
   * BLOCKX_SOURCE_<NAME>_FALLBACK_URL overrides it. Unset: none.
   */
  readonly fallbackUrl?: string;
  /**
   * With `blockx ingest --follow`: the node's WebSocket URL (ws:// or wss://). The follower subscribes
   * there to new heads (eth_subscribe newHeads) and asks for the head as soon as one is announced; it
   * still asks every pollIntervalMs, which is all it does while the socket is down (opened again after
   * 1 s, doubling to 30 s). Blocks are fetched over rpcUrl. Read by the follower only, never sent in a
   * task. Env BLOCKX_SOURCE_<NAME>_WS_URL overrides it. Unset: polling alone (docs/ingest.md §
   * Following the head).
   */
  readonly wsUrl?: string;
  /**
   * The chain the node must be on, checked with eth_chainId before the job and in every block's batch.
   * Unset: whatever the node reports.
   */
  readonly chainId?: number;
  /**
   * Blocks at or below head − finality are final: a job without an end block stops there, and `blockx
   * ingest --follow` stops on a reorg deeper than this (docs/ingest.md § Following the head). Default
   * 64.
   */
  readonly finality: number;
  /**
   * With `blockx ingest --follow`, how often the node is asked for its head once caught up. Default
   * 1000.
   */
  readonly pollIntervalMs: number;
  /**
   * Fill the traces table (trace_block, or debug_traceBlockByNumber with the call tracer); a node
   * serving neither is said once and skipped. Default true.
   */
  readonly traces: boolean;
  /**
   * Blocks per ingestion task over a long range: `blockx ingest` without --bundle-size runs every whole
   * aligned bundle of this many blocks in a range of more than bundleThreshold blocks as one task (its
   * blocks fetched side by side, written in one transaction) and the blocks at the edges one task each;
   * 1 = always one task per block. A bundle task holds its blocks in memory until it writes them: lower
   * it for chains of heavy blocks (docs/ingest.md § Bundles by default). Default 50.
   */
  readonly bundleSize: number;
  /**
   * `blockx ingest` without --bundle-size runs a range of more than this many blocks as bundles of
   * bundleSize (with the edges per block); a shorter range, and a follower at the head, run one task
   * per block. Default 500.
   */
  readonly bundleThreshold: number;
  /**
   * HTTP requests in flight to the node at once, per process, all its tasks together (a JSON-RPC batch
   * is one request). Default 8.
   */
  readonly maxConcurrentRequests: number;
  /**
   * HTTP requests sent per second to the node by one process, all its tasks together (a token bucket
   * shared by every task of the process that reads the source); 0 = no limit. Default 0.
   */
  readonly requestsPerSecond: number;
  /**
   * Requests that may go back to back after a quiet spell (the token bucket holds this many): over any
   * window of W seconds at most requestBurst + requestsPerSecond · W go. 1 = evenly spaced. Default 1.
   */
  readonly requestBurst: number;
  /** Timeout of one HTTP request; a request past it is a failed attempt. Default 10000. */
  readonly requestTimeoutMs: number;
  /**
   * Attempts per request, the first included, on timeouts, connection errors, unreadable bodies, HTTP
   * 429 and 5xx. Default 5.
   */
  readonly maxAttempts: number;
  /**
   * Ceiling of the wait before the second attempt; it doubles per attempt up to maxBackoffMs, and the
   * wait is drawn uniformly below it. Default 100.
   */
  readonly initialBackoffMs: number;
  /** Largest ceiling of the wait between attempts. Default 5000. */
  readonly maxBackoffMs: number;
  /**
   * Longest Retry-After of a 429 that is waited out (pausing the whole source); a longer one fails the
   * request as RATE_LIMITED. Default 60000.
   */
  readonly maxRetryAfterMs: number;
}

/**
 * A job `blockx jobs run NAME` runs: a task template from a first block, kept current as the chain
 * moves (docs/follow.md).
 */
export interface JobConfig {
  /**
   * The task template (a task JSON file whose builder and writer carry a block selector), relative to
   * the config file; required to run.
   */
  readonly template?: string;
  /** The first block of the job. Default 0. */
  readonly from: number;
  /** Blocks at or below head − finality are final; a change to one stops the job. Default 64. */
  readonly finality: number;
  /** How often the blocks table is read once the job is caught up. Default 1000. */
  readonly pollIntervalMs: number;
  /**
   * When `blockx up` or `blockx jobs run` supervises the job: the wait before restarting a runner that
   * failed; it doubles with each failure in a row. Default 1000.
   */
  readonly restartInitialBackoffMs: number;
  /**
   * The longest wait before a restart; a run that lasted at least this long starts a new row of
   * failures. Default 60000.
   */
  readonly restartMaxBackoffMs: number;
}

/**
 * How calls of the function named <name> are retried (docs/retries.md § Call level); a field left out
 * takes the deployment's worker.callRetry.
 */
export interface FunctionRetryConfig {
  /**
   * Attempts of one call of this function, including the first. Default the deployment's
   * worker.callRetry.maxAttempts.
   */
  readonly maxAttempts?: number;
  /**
   * The failure kinds after which a call of this function runs again; `io` and `user` only when the
   * error says it is retryable. Default the deployment's worker.callRetry.retryOn.
   */
  readonly retryOn?: readonly ('executor_crash' | 'deadline' | 'io' | 'user')[];
}
