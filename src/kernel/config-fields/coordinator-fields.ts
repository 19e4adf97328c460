// The rows of `deployments.<name>.coordinator` (docs/coordinator.md § Configuration). Row order is the
// order of the keys in the resolved config, the schema and docs/configuration.md.
import { defaultRegistryPrefixes } from '../../contracts/registry-prefix.js';
import type { ConfigField, ConfigGroup } from './field.js';

const POSITIVE = { t: 'int', min: 1 } as const;
const NON_NEGATIVE = { t: 'int', min: 0 } as const;
const FRACTION = { t: 'fraction' } as const;
const c = (row: Omit<ConfigField, 'section'>): ConfigField => ({ section: 'coordinator', ...row });

export const COORDINATOR_GROUPS: readonly ConfigGroup[] = [
  {
    section: 'coordinator',
    path: '',
    description: 'The Coordinator of the deployment.',
    typeName: 'CoordinatorConfig',
  },
];

export const COORDINATOR_FIELDS: readonly ConfigField[] = [
  c({
    path: 'listen',
    type: { t: 'listenAddr' },
    default: '127.0.0.1:8080',
    env: 'COORDINATOR_LISTEN',
    description:
      'host:port the Coordinator serves on. Loopback by default: another interface needs `tls` or `tls.allowPlaintext` (docs/security.md).',
  }),
  c({
    path: 'registryPrefixes',
    type: { t: 'list', item: 'registryPrefix', minItems: 1, uniqueItems: true },
    default: {
      byKind: { block: defaultRegistryPrefixes('block'), bundle: defaultRegistryPrefixes('bundle') },
    },
    env: 'COORDINATOR_REGISTRY_PREFIXES',
    description:
      'Registry prefixes the Coordinator watches for worker heartbeats (comma-separated in the variable, which replaces the list).',
  }),
  c({
    path: 'workerRpcTimeoutMs',
    type: POSITIVE,
    default: 3000,
    env: 'COORDINATOR_WORKER_RPC_TIMEOUT_MS',
    description: 'Deadline of one RequestTaskSlot call to a Worker.',
  }),
  c({
    path: 'etcdDialTimeoutMs',
    type: POSITIVE,
    default: 5000,
    env: 'COORDINATOR_ETCD_DIAL_TIMEOUT_MS',
    description: 'How long the Coordinator waits for etcd when it connects.',
  }),
  c({
    path: 'etcdWatchRetryDelayMs',
    type: POSITIVE,
    default: 1000,
    env: 'COORDINATOR_ETCD_WATCH_RETRY_DELAY_MS',
    description: 'Pause after a failed registry list+watch before the next try.',
  }),
  c({
    path: 'heartbeatTimeoutMs',
    type: POSITIVE,
    default: 10_000,
    env: 'COORDINATOR_HEARTBEAT_TIMEOUT_MS',
    description: 'A Worker whose heartbeat is older than this (by the Coordinator clock) is not routable.',
  }),
  c({
    path: 'maxClockSkewMs',
    type: NON_NEGATIVE,
    default: 5000,
    env: 'COORDINATOR_MAX_CLOCK_SKEW_MS',
    description:
      "A heartbeat more than this ahead of the Coordinator's clock is not routable (docs/security.md).",
  }),
  c({
    path: 'watchGracePeriodMs',
    type: NON_NEGATIVE,
    default: 10_000,
    env: 'COORDINATOR_WATCH_GRACE_PERIOD_MS',
    description:
      'How long a registry watch outage is tolerated before reservations fail Unavailable; must be <= heartbeatTimeoutMs.',
  }),
  c({
    path: 'slotTtlMs',
    type: POSITIVE,
    default: 5000,
    env: 'COORDINATOR_SLOT_TTL_MS',
    description:
      "The reservation window passed to the Worker as ttl_ms; must be <= the worker's maxSlotTtlMs.",
  }),
  c({
    path: 'maxCandidates',
    type: POSITIVE,
    default: 3,
    env: 'COORDINATOR_MAX_CANDIDATES',
    description: 'Workers tried per reservation request.',
  }),
  c({
    path: 'maxTimeoutRetries',
    type: NON_NEGATIVE,
    default: 1,
    env: 'COORDINATOR_MAX_TIMEOUT_RETRIES',
    description:
      'Times the same task id goes back to the same Worker after a timed-out (uncertain) reservation; 0 allowed.',
  }),
  c({
    path: 'circuitBreakerThreshold',
    type: POSITIVE,
    default: 3,
    env: 'COORDINATOR_CIRCUIT_BREAKER_THRESHOLD',
    description: "Consecutive rejections or timeouts that open a Worker's circuit breaker.",
  }),
  c({
    path: 'circuitBreakerCooldownMs',
    type: POSITIVE,
    default: 10_000,
    env: 'COORDINATOR_CIRCUIT_BREAKER_COOLDOWN_MS',
    description: 'How long an open breaker keeps the Worker out of selection.',
  }),
  c({
    path: 'cpuRedLine',
    type: FRACTION,
    default: 0.9,
    env: 'COORDINATOR_CPU_RED_LINE',
    description: 'In (0, 1]: a Worker whose heartbeat cpu is above it is not routable (docs/health.md).',
  }),
  c({
    path: 'memoryRedLine',
    type: FRACTION,
    default: 0.9,
    env: 'COORDINATOR_MEMORY_RED_LINE',
    description: 'In (0, 1]: a Worker whose heartbeat memory is above it is not routable (docs/health.md).',
  }),
  c({
    path: 'errorRateRedLine',
    type: FRACTION,
    default: 0.5,
    env: 'COORDINATOR_ERROR_RATE_RED_LINE',
    description:
      'In (0, 1]: a Worker whose heartbeat error rate is above it is not routable (docs/health.md).',
  }),
  c({
    path: 'placement',
    type: { t: 'enum', values: ['capacity', 'affinity'] },
    default: 'capacity',
    env: 'COORDINATOR_PLACEMENT',
    description:
      "capacity: most free slots first, counting the Coordinator's own reservations since the last heartbeat; affinity: the same task id goes to the same worker while the routable set is stable (docs/placement.md).",
  }),
  c({
    path: 'placementMemoryMs',
    type: NON_NEGATIVE,
    default: 300_000,
    env: 'COORDINATOR_PLACEMENT_MEMORY_MS',
    description:
      "How long the Coordinator remembers the Worker it placed a task id on, so the same id goes back there (docs/placement.md § One execution per task id); the workers' resultRetentionMs by default. 0 = off.",
  }),
  c({
    path: 'placementMemoryMaxEntries',
    type: NON_NEGATIVE,
    default: 200_000,
    env: 'COORDINATOR_PLACEMENT_MEMORY_MAX_ENTRIES',
    description:
      'Most task ids remembered at once (about 150 bytes each); past it the oldest are forgotten early. 0 = off.',
  }),
];
