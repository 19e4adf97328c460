// Defaults of every config field (docs/task-lifecycle.md § Defaults, docs/coordinator.md § Configuration). A
// field the user omits takes the value here; the README and the schema descriptions name the same numbers.
import {
  defaultRegistryPrefixes,
  LEGACY_BLOCK_WORKER_REGISTRY_PREFIX,
  LEGACY_BUNDLE_WORKER_REGISTRY_PREFIX,
} from '../services/registry/prefix.js';
import type { CoordinatorConfig, DeploymentKind, ExecutorConfig, WorkerConfig } from './config-types.js';

export function defaultCoordinatorConfig(kind: DeploymentKind): CoordinatorConfig {
  return {
    // Loopback: reaching a Coordinator from other hosts is a choice, with TLS (docs/security.md).
    listen: '127.0.0.1:8080',
    registryPrefixes: [...defaultRegistryPrefixes(kind)],
    workerRpcTimeoutMs: 3000,
    etcdDialTimeoutMs: 5000,
    etcdWatchRetryDelayMs: 1000,
    heartbeatTimeoutMs: 10_000,
    maxClockSkewMs: 5000,
    watchGracePeriodMs: 10_000,
    slotTtlMs: 5000,
    maxCandidates: 3,
    maxTimeoutRetries: 1,
    circuitBreakerThreshold: 3,
    circuitBreakerCooldownMs: 10_000,
    cpuRedLine: 0.9,
    memoryRedLine: 0.9,
    errorRateRedLine: 0.5,
    placement: 'capacity',
  };
}

export function defaultWorkerConfig(kind: DeploymentKind): WorkerConfig {
  return {
    listen: '127.0.0.1:9090',
    advertiseAddr: '',
    registryPrefix:
      kind === 'block' ? LEGACY_BLOCK_WORKER_REGISTRY_PREFIX : LEGACY_BUNDLE_WORKER_REGISTRY_PREFIX,
    taskSlots: 64,
    defaultTtlMs: 5000,
    maxSlotTtlMs: 60_000,
    taskDeadlineMs: 300_000,
    maxTaskTimeoutMs: 8 * 60 * 60 * 1000,
    resultRetentionMs: 300_000,
    heartbeatIntervalMs: 200,
    capacityHeartbeatMs: 25,
    watchDisconnectGraceMs: 0,
    timerScanMs: 500,
    keepaliveTimeMs: 30_000,
    keepaliveTimeoutMs: 10_000,
    drainTimeoutMs: 30_000,
    admission: { builderSlots: 16, executorTaskSlots: 32, pluginSlots: 16, scanSlots: 8 },
    taskMaxInflightCalls: 1024,
    taskMaxCallAttempts: 1_000_000,
    taskMaxPendingSubcalls: 10_000,
    callDeadlineMs: 5000,
    maxCollectedOutputBytes: 64 * 1024 * 1024,
    callRetry: { maxAttempts: 3, initialBackoffMs: 50, maxBackoffMs: 1000 },
    // maxInFlight unset: each RunTasks stream grants the worker's taskSlots (docs/batched-protocol.md).
    runTasks: { flushMs: 2 },
  };
}

export function defaultExecutorConfig(): ExecutorConfig {
  return {
    socketDir: '',
    threads: 2,
    heartbeatIntervalMs: 500,
    heartbeatTimeoutMs: 3000,
    restartBackoffInitialMs: 100,
    restartBackoffMaxMs: 5000,
    cancelHardLimitMs: 1000,
    readCopyMaxEntries: 10_000,
    isolation: 'task',
    threadHeapMb: 1024,
    threadMemoryMb: 1536,
    maxRssMb: 4096,
  };
}

/** Top-level defaults (everything except deployments and tables, which have no meaningful default). */
export const TOP_LEVEL_DEFAULTS = {
  tls: { ca: '', cert: '', key: '', allowPlaintext: false },
  registry: {
    etcd: {
      endpoints: [] as string[],
      dialTimeoutMs: 5000,
      leaseTtlMs: 10_000,
      ca: '',
      cert: '',
      key: '',
      username: '',
      password: '',
    },
  },
  storage: {
    url: 'sqlite:.blockx/blockx.db',
    maxConcurrentOps: 32,
    admissionWaitMs: 1000,
    poolSize: 10,
    scanBatchSize: 1000,
    readCacheMaxEntries: 100_000,
    retry: {
      builder: { maxAttempts: 3, initialBackoffMs: 20, maxBackoffMs: 500 },
      calls: { maxAttempts: 3, initialBackoffMs: 20, maxBackoffMs: 500 },
      result: { maxAttempts: 6, initialBackoffMs: 20, maxBackoffMs: 1000 },
    },
  },
  functions: { dir: 'functions' },
  plugins: { dirs: ['plugins/builders', 'plugins/writers'], packages: [] as string[] },
  observability: { prometheus: { listenAddr: '', path: '/metrics' }, logLevel: 'info' as const },
  up: { deployment: 'block', workers: 2, coordinatorListen: '127.0.0.1:8080', workerBasePort: 0, demo: true },
};
