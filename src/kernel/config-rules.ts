// Cross-field rules: what the JSON Schema cannot say. Each rule returns problems as {path, message};
// the pipeline attaches where the offending value came from (file line:column, env var or flag).
import { parseRegistryPrefix } from '../contracts/registry-prefix.js';
import type { BlockxConfig, CoordinatorConfig, DeploymentConfig } from './config-types.js';
import { MAX_HEARTBEAT_SLOTS } from '../contracts/heartbeat.js';

export interface RuleViolation {
  /** Config path segments of the value to blame. */
  path: (string | number)[];
  message: string;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
export type ConfigDraft = Mutable<Omit<BlockxConfig, 'deployments'>> & {
  deployments: Record<string, DeploymentConfig>;
};

export function checkConfigRules(config: ConfigDraft): RuleViolation[] {
  const out: RuleViolation[] = [];
  for (const [name, dep] of Object.entries(config.deployments)) out.push(...checkDeployment(name, dep));
  out.push(...checkTables(config));
  out.push(...checkTls(config));
  if (Object.keys(config.deployments).length > 0 && !(config.up.deployment in config.deployments)) {
    out.push({
      path: ['up', 'deployment'],
      message: `names deployment "${config.up.deployment}", which is not declared (declared: ${Object.keys(config.deployments).join(', ')})`,
    });
  }
  return out;
}

type CoordinatorLimits = Pick<
  CoordinatorConfig,
  'heartbeatTimeoutMs' | 'watchGracePeriodMs' | 'cpuRedLine' | 'memoryRedLine' | 'errorRateRedLine'
>;

/**
 * The coordinator's rules across fields (docs/coordinator.md § Configuration), written once: checked here
 * for every deployment of a config, and by the CoordinatorCore on the config it is given.
 * - watchGracePeriodMs <= heartbeatTimeoutMs: by the time the grace runs out, a Worker that died during
 *   the outage has also aged out of the view's trust;
 * - the red lines in (0, 1] (an env override is not seen by the schema).
 */
export function coordinatorLimitProblems(
  c: CoordinatorLimits,
): { field: keyof CoordinatorLimits; message: string }[] {
  const out: { field: keyof CoordinatorLimits; message: string }[] = [];
  if (c.watchGracePeriodMs > c.heartbeatTimeoutMs) {
    out.push({
      field: 'watchGracePeriodMs',
      message: `must be <= heartbeatTimeoutMs (${c.heartbeatTimeoutMs}), got ${c.watchGracePeriodMs}`,
    });
  }
  for (const key of ['cpuRedLine', 'memoryRedLine', 'errorRateRedLine'] as const) {
    if (!(c[key] > 0 && c[key] <= 1)) out.push({ field: key, message: `must be in (0, 1], got ${c[key]}` });
  }
  return out;
}

function checkDeployment(name: string, dep: DeploymentConfig): RuleViolation[] {
  const out: RuleViolation[] = [];
  const at = (...p: (string | number)[]) => ['deployments', name, ...p];
  const c = dep.coordinator;
  for (const { field, message } of coordinatorLimitProblems(c))
    out.push({ path: at('coordinator', field), message });
  const seen = new Set<string>();
  c.registryPrefixes.forEach((prefix, i) => {
    if (seen.has(prefix))
      out.push({ path: at('coordinator', 'registryPrefixes', i), message: `duplicate prefix ${prefix}` });
    seen.add(prefix);
    out.push(
      ...prefixKindProblems(prefix, dep.kind).map((message) => ({
        path: at('coordinator', 'registryPrefixes', i),
        message,
      })),
    );
  });
  out.push(
    ...prefixKindProblems(dep.worker.registryPrefix, dep.kind).map((message) => ({
      path: at('worker', 'registryPrefix'),
      message,
    })),
  );

  const w = dep.worker;
  if (w.taskDeadlineMs > w.maxTaskTimeoutMs) {
    out.push({
      path: at('worker', 'taskDeadlineMs'),
      message: `must be <= maxTaskTimeoutMs (${w.maxTaskTimeoutMs}), got ${w.taskDeadlineMs}`,
    });
  }
  // docs/security.md § The registry: a Coordinator ignores a heartbeat claiming more slots, so such a worker
  // would never be routed to. (The schema says so for the file; this catches WORKER_TASK_SLOTS too.)
  if (w.taskSlots > MAX_HEARTBEAT_SLOTS) {
    out.push({
      path: at('worker', 'taskSlots'),
      message: `must be <= ${MAX_HEARTBEAT_SLOTS}, got ${w.taskSlots}`,
    });
  }
  // docs/security.md § Input bounds: a worker refuses ttl_ms above maxSlotTtlMs, so an inline TTL or a
  // coordinator slotTtlMs above it would make every reservation of this deployment fail.
  if (w.defaultTtlMs > w.maxSlotTtlMs) {
    out.push({
      path: at('worker', 'defaultTtlMs'),
      message: `must be <= maxSlotTtlMs (${w.maxSlotTtlMs}), got ${w.defaultTtlMs}`,
    });
  }
  if (dep.coordinator.slotTtlMs > w.maxSlotTtlMs) {
    out.push({
      path: at('coordinator', 'slotTtlMs'),
      message: `must be <= worker.maxSlotTtlMs (${w.maxSlotTtlMs}), got ${dep.coordinator.slotTtlMs}`,
    });
  }
  if (w.callRetry.maxBackoffMs < w.callRetry.initialBackoffMs) {
    out.push({
      path: at('worker', 'callRetry', 'maxBackoffMs'),
      message: `must be >= initialBackoffMs (${w.callRetry.initialBackoffMs}), got ${w.callRetry.maxBackoffMs}`,
    });
  }
  const e = dep.executor;
  if (e.heartbeatTimeoutMs <= e.heartbeatIntervalMs) {
    out.push({
      path: at('executor', 'heartbeatTimeoutMs'),
      message: `must be > heartbeatIntervalMs (${e.heartbeatIntervalMs}), got ${e.heartbeatTimeoutMs}`,
    });
  }
  if (e.restartBackoffMaxMs < e.restartBackoffInitialMs) {
    out.push({
      path: at('executor', 'restartBackoffMaxMs'),
      message: `must be >= restartBackoffInitialMs (${e.restartBackoffInitialMs}), got ${e.restartBackoffMaxMs}`,
    });
  }
  return out;
}

function prefixKindProblems(prefix: string, kind: DeploymentConfig['kind']): string[] {
  const parsed = parseRegistryPrefix(prefix);
  if (!parsed.ok) return [parsed.error.message];
  if (parsed.value.kind !== kind)
    return [`prefix ${prefix} registers ${parsed.value.kind} workers, but the deployment kind is ${kind}`];
  return [];
}

function checkTables(config: ConfigDraft): RuleViolation[] {
  const out: RuleViolation[] = [];
  for (const [name, table] of Object.entries(config.tables)) {
    const cols = table.columns;
    table.primaryKey.forEach((col, i) => {
      if (!(col in cols))
        out.push({
          path: ['tables', name, 'primaryKey', i],
          message: `primary key column "${col}" is not declared in columns`,
        });
      else if (cols[col]?.nullable)
        out.push({
          path: ['tables', name, 'primaryKey', i],
          message: `primary key column "${col}" cannot be nullable`,
        });
    });
    for (const key of ['blockColumn', 'chainColumn'] as const) {
      const col = table[key];
      if (col === undefined) continue;
      const decl = cols[col];
      if (!decl)
        out.push({ path: ['tables', name, key], message: `column "${col}" is not declared in columns` });
      else if (decl.type !== 'integer' && decl.type !== 'bigint') {
        out.push({
          path: ['tables', name, key],
          message: `column "${col}" must be integer or bigint, is ${decl.type}`,
        });
      }
    }
    const hashCol = table.blockHashColumn;
    if (hashCol !== undefined) {
      const decl = cols[hashCol];
      if (!decl)
        out.push({
          path: ['tables', name, 'blockHashColumn'],
          message: `column "${hashCol}" is not declared in columns`,
        });
      else if (decl.type !== 'text')
        out.push({
          path: ['tables', name, 'blockHashColumn'],
          message: `column "${hashCol}" must be text, is ${decl.type}`,
        });
    }
  }
  return out;
}

/**
 * TLS files come as a set: the cluster's ca, cert and key all or none; etcd's client cert and key
 * together and only with its ca; an etcd user with a password (docs/security.md § TLS and authentication).
 */
function checkTls(config: ConfigDraft): RuleViolation[] {
  const out: RuleViolation[] = [];
  const { tls } = config;
  const set = (['ca', 'cert', 'key'] as const).filter((k) => tls[k] !== '');
  if (set.length > 0 && set.length < 3) {
    for (const k of (['ca', 'cert', 'key'] as const).filter((k) => tls[k] === '')) {
      out.push({
        path: ['tls', k],
        message: `is required when tls.${set.join(' and tls.')} ${set.length === 1 ? 'is' : 'are'} set (TLS needs ca, cert and key together)`,
      });
    }
  }
  const etcd = config.registry.etcd;
  if ((etcd.cert === '') !== (etcd.key === '')) {
    const missing = etcd.cert === '' ? 'cert' : 'key';
    out.push({
      path: ['registry', 'etcd', missing],
      message: `is required with registry.etcd.${missing === 'cert' ? 'key' : 'cert'} (a client certificate needs its key)`,
    });
  }
  if (etcd.cert !== '' && etcd.ca === '') {
    out.push({
      path: ['registry', 'etcd', 'ca'],
      message: 'is required with registry.etcd.cert (a client certificate is only sent over TLS)',
    });
  }
  if ((etcd.username === '') !== (etcd.password === '')) {
    const missing = etcd.username === '' ? 'username' : 'password';
    out.push({
      path: ['registry', 'etcd', missing],
      message: `is required with registry.etcd.${missing === 'username' ? 'password' : 'username'}`,
    });
  }
  return out;
}
