// Environment variables (docs/architecture.md § Environment variables), typed and validated. Each binding
// names the variable, where its value lands in the config, and how it is parsed; a bad value is an issue
// naming the variable. Coordinator and worker variables apply to the deployment(s) a process runs; shared
// ones to the top level.
import type { ConfigIssue } from './errors.js';
import { redactText } from './redact.js';

export type EnvScope = 'top' | 'coordinator' | 'worker';

type Parsed = { ok: true; value: unknown } | { ok: false; message: string };
type Parser = (raw: string) => Parsed;

const INT = /^[+]?\d+$/;

const positiveInt: Parser = (raw) =>
  INT.test(raw.trim()) && Number(raw) >= 1 && Number.isSafeInteger(Number(raw))
    ? { ok: true, value: Number(raw) }
    : { ok: false, message: `expected a positive integer, got ${JSON.stringify(raw)}` };
const nonNegativeInt: Parser = (raw) =>
  INT.test(raw.trim()) && Number.isSafeInteger(Number(raw))
    ? { ok: true, value: Number(raw) }
    : { ok: false, message: `expected a non-negative integer, got ${JSON.stringify(raw)}` };
const fraction: Parser = (raw) => {
  const n = Number(raw);
  return raw.trim() !== '' && Number.isFinite(n) && n > 0 && n <= 1
    ? { ok: true, value: n }
    : { ok: false, message: `expected a number in (0, 1], got ${JSON.stringify(raw)}` };
};
const text: Parser = (raw) => ({ ok: true, value: raw });
const placement: Parser = (raw) =>
  raw === 'capacity' || raw === 'affinity'
    ? { ok: true, value: raw }
    : { ok: false, message: `expected capacity or affinity, got ${JSON.stringify(raw)}` };
const list: Parser = (raw) => {
  const items = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return items.length > 0
    ? { ok: true, value: items }
    : { ok: false, message: 'expected a comma-separated, non-empty list' };
};
const listenAddr: Parser = (raw) =>
  /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]*):\d{1,5}$/.test(raw) &&
  Number(raw.slice(raw.lastIndexOf(':') + 1)) <= 65535
    ? { ok: true, value: raw }
    : { ok: false, message: `expected host:port or :port, got ${JSON.stringify(raw)}` };
const logLevel: Parser = (raw) =>
  ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(raw)
    ? { ok: true, value: raw }
    : {
        ok: false,
        message: `expected one of fatal, error, warn, info, debug, trace, silent; got ${JSON.stringify(raw)}`,
      };
const storageUrl: Parser = (raw) =>
  /^(sqlite:.+|postgres(ql)?:\/\/.+)$/.test(raw)
    ? { ok: true, value: raw }
    : {
        ok: false,
        message: `expected sqlite:PATH, sqlite::memory: or postgres://..., got ${JSON.stringify(redactText(raw))}`,
      };
const boolean: Parser = (raw) => {
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return { ok: true, value: true };
  if (['0', 'false', 'no', 'off'].includes(v)) return { ok: true, value: false };
  return { ok: false, message: `expected true or false (1/0, yes/no, on/off), got ${JSON.stringify(raw)}` };
};
const pathString: Parser = (raw) =>
  raw.trim() !== '' ? { ok: true, value: raw } : { ok: false, message: 'expected a non-empty path' };

export interface EnvBinding {
  readonly variable: string;
  readonly scope: EnvScope;
  /** Path inside the scope: the top-level config, or a deployment's coordinator/worker section. */
  readonly path: readonly string[];
  readonly parse: Parser;
}

const b = (variable: string, scope: EnvScope, path: string, parse: Parser): EnvBinding => ({
  variable,
  scope,
  path: path.split('.'),
  parse,
});

export const ENV_BINDINGS: readonly EnvBinding[] = Object.freeze([
  // Coordinator (docs/coordinator.md § Configuration).
  b('COORDINATOR_LISTEN', 'coordinator', 'listen', listenAddr),
  b('ETCD_ENDPOINTS', 'top', 'registry.etcd.endpoints', list),
  b('COORDINATOR_REGISTRY_PREFIXES', 'coordinator', 'registryPrefixes', list),
  b('COORDINATOR_WORKER_RPC_TIMEOUT_MS', 'coordinator', 'workerRpcTimeoutMs', positiveInt),
  b('COORDINATOR_ETCD_DIAL_TIMEOUT_MS', 'coordinator', 'etcdDialTimeoutMs', positiveInt),
  b('COORDINATOR_ETCD_WATCH_RETRY_DELAY_MS', 'coordinator', 'etcdWatchRetryDelayMs', positiveInt),
  b('COORDINATOR_HEARTBEAT_TIMEOUT_MS', 'coordinator', 'heartbeatTimeoutMs', positiveInt),
  b('COORDINATOR_MAX_CLOCK_SKEW_MS', 'coordinator', 'maxClockSkewMs', nonNegativeInt),
  b('COORDINATOR_WATCH_GRACE_PERIOD_MS', 'coordinator', 'watchGracePeriodMs', nonNegativeInt),
  b('COORDINATOR_SLOT_TTL_MS', 'coordinator', 'slotTtlMs', positiveInt),
  b('COORDINATOR_MAX_CANDIDATES', 'coordinator', 'maxCandidates', positiveInt),
  b('COORDINATOR_MAX_TIMEOUT_RETRIES', 'coordinator', 'maxTimeoutRetries', nonNegativeInt),
  b('COORDINATOR_CIRCUIT_BREAKER_THRESHOLD', 'coordinator', 'circuitBreakerThreshold', positiveInt),
  b('COORDINATOR_CIRCUIT_BREAKER_COOLDOWN_MS', 'coordinator', 'circuitBreakerCooldownMs', positiveInt),
  b('COORDINATOR_CPU_RED_LINE', 'coordinator', 'cpuRedLine', fraction),
  b('COORDINATOR_MEMORY_RED_LINE', 'coordinator', 'memoryRedLine', fraction),
  b('COORDINATOR_ERROR_RATE_RED_LINE', 'coordinator', 'errorRateRedLine', fraction),
  b('COORDINATOR_PLACEMENT', 'coordinator', 'placement', placement),
  // Worker (docs/task-lifecycle.md § Defaults) and ours.
  b('TASK_DEADLINE_MS', 'worker', 'taskDeadlineMs', positiveInt),
  b('MAX_TASK_TIMEOUT_MS', 'worker', 'maxTaskTimeoutMs', positiveInt),
  b('MAX_SLOT_TTL_MS', 'worker', 'maxSlotTtlMs', positiveInt),
  b('RESULT_RETENTION_MS', 'worker', 'resultRetentionMs', positiveInt),
  b('WORKER_HEARTBEAT_INTERVAL', 'worker', 'heartbeatIntervalMs', positiveInt),
  b('WORKER_CAPACITY_HEARTBEAT_MS', 'worker', 'capacityHeartbeatMs', nonNegativeInt),
  b('WATCH_DISCONNECT_GRACE_MS', 'worker', 'watchDisconnectGraceMs', nonNegativeInt),
  b('WORKER_LISTEN', 'worker', 'listen', listenAddr),
  b('WORKER_ADVERTISE_ADDR', 'worker', 'advertiseAddr', listenAddr),
  b('WORKER_TASK_SLOTS', 'worker', 'taskSlots', positiveInt),
  b('WORKER_REGISTRY_PREFIX', 'worker', 'registryPrefix', text),
  b('CALL_DEADLINE_MS', 'worker', 'callDeadlineMs', positiveInt),
  b('WORKER_RUN_TASKS_MAX_IN_FLIGHT', 'worker', 'runTasks.maxInFlight', positiveInt),
  b('WORKER_RUN_TASKS_FLUSH_MS', 'worker', 'runTasks.flushMs', nonNegativeInt),
  // Shared.
  b('BLOCKX_FUNCTIONS_DIR', 'top', 'functions.dir', pathString),
  b('BLOCKX_STORAGE_URL', 'top', 'storage.url', storageUrl),
  b('BLOCKX_PROMETHEUS_LISTEN_ADDR', 'top', 'observability.prometheus.listenAddr', text),
  b('BLOCKX_PROMETHEUS_PATH', 'top', 'observability.prometheus.path', (raw) =>
    raw.startsWith('/')
      ? { ok: true, value: raw }
      : { ok: false, message: `expected a path starting with /, got ${JSON.stringify(raw)}` },
  ),
  b('BLOCKX_LOG_LEVEL', 'top', 'observability.logLevel', logLevel),
  // TLS (docs/security.md § TLS and authentication) and etcd's own TLS and auth.
  b('BLOCKX_TLS_CA', 'top', 'tls.ca', pathString),
  b('BLOCKX_TLS_CERT', 'top', 'tls.cert', pathString),
  b('BLOCKX_TLS_KEY', 'top', 'tls.key', pathString),
  b('BLOCKX_TLS_ALLOW_PLAINTEXT', 'top', 'tls.allowPlaintext', boolean),
  b('ETCD_CA_FILE', 'top', 'registry.etcd.ca', pathString),
  b('ETCD_CERT_FILE', 'top', 'registry.etcd.cert', pathString),
  b('ETCD_KEY_FILE', 'top', 'registry.etcd.key', pathString),
  b('ETCD_USERNAME', 'top', 'registry.etcd.username', text),
  b('ETCD_PASSWORD', 'top', 'registry.etcd.password', text),
]);

/** BLOCKX_CONFIG is read by locateConfig; it is listed here so `blockx config --env` can show it. */
export const LOCATOR_VARIABLES = ['BLOCKX_CONFIG'] as const;

export interface EnvOverride {
  readonly binding: EnvBinding;
  readonly value: unknown;
}

/** Parses every bound variable that is set (empty counts as unset). Returns overrides and all issues. */
export function readEnvOverrides(env: NodeJS.ProcessEnv): {
  overrides: EnvOverride[];
  issues: ConfigIssue[];
} {
  const overrides: EnvOverride[] = [];
  const issues: ConfigIssue[] = [];
  for (const binding of ENV_BINDINGS) {
    const raw = env[binding.variable];
    if (raw === undefined || raw === '') continue;
    const parsed = binding.parse(raw);
    if (parsed.ok) overrides.push({ binding, value: parsed.value });
    else
      issues.push({
        source: 'env',
        variable: binding.variable,
        path: (binding.scope === 'top'
          ? binding.path
          : ['deployments.*', binding.scope, ...binding.path]
        ).join('.'),
        message: parsed.message,
      });
  }
  return { overrides, issues };
}
