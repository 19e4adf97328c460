// The rows of `deployments.<name>.worker` (docs/task-lifecycle.md § Defaults). Row order is the order of
// the keys in the resolved config, the schema and docs/configuration.md.
import {
  LEGACY_BLOCK_WORKER_REGISTRY_PREFIX,
  LEGACY_BUNDLE_WORKER_REGISTRY_PREFIX,
} from '../../contracts/registry-prefix.js';
import { MAX_HEARTBEAT_SLOTS } from '../../contracts/heartbeat.js';
import type { ConfigField, ConfigGroup } from './field.js';
import { CALL_FAILURE_KINDS } from './function-retry-fields.js';

const POSITIVE = { t: 'int', min: 1 } as const;
const NON_NEGATIVE = { t: 'int', min: 0 } as const;
const w = (row: Omit<ConfigField, 'section'>): ConfigField => ({ section: 'worker', ...row });

export const WORKER_GROUPS: readonly ConfigGroup[] = [
  { section: 'worker', path: '', description: 'A Worker of the deployment.', typeName: 'WorkerConfig' },
  {
    section: 'worker',
    path: 'admission',
    description: 'Phase-level admission semaphores.',
    typeName: 'AdmissionConfig',
  },
  {
    section: 'worker',
    path: 'callRetry',
    description: 'CallRetryPolicy: bounded per-call attempt retries.',
    typeName: 'CallRetryConfig',
  },
  {
    section: 'worker',
    path: 'runTasks',
    description: 'The batched RunTasks stream (docs/batched-protocol.md).',
    typeName: 'RunTasksConfig',
  },
];

export const WORKER_FIELDS: readonly ConfigField[] = [
  w({
    path: 'listen',
    type: { t: 'listenAddr' },
    default: '127.0.0.1:9090',
    env: 'WORKER_LISTEN',
    description:
      'host:port the Worker serves on. Loopback by default: another interface needs `tls` or `tls.allowPlaintext`.',
  }),
  w({
    path: 'advertiseAddr',
    type: { t: 'string' },
    default: '',
    defaultText: 'empty (the listen address with the host resolved)',
    env: 'WORKER_ADVERTISE_ADDR',
    envParser: 'listenAddr',
    description: 'host:port clients and the Coordinator dial; published in the heartbeat.',
  }),
  w({
    path: 'registryPrefix',
    type: { t: 'registryPrefix' },
    default: {
      byKind: { block: LEGACY_BLOCK_WORKER_REGISTRY_PREFIX, bundle: LEGACY_BUNDLE_WORKER_REGISTRY_PREFIX },
    },
    env: 'WORKER_REGISTRY_PREFIX',
    envParser: 'text',
    description: 'Registry prefix the Worker publishes its heartbeat under.',
  }),
  // 64 covers executorTaskSlots (32) plus tasks in their Builder / Writer phases and reserved-but-not-yet-
  // submitted slots.
  w({
    path: 'taskSlots',
    type: { t: 'int', min: 1, max: MAX_HEARTBEAT_SLOTS },
    default: 64,
    env: 'WORKER_TASK_SLOTS',
    description: `The unified slot pool. At most ${MAX_HEARTBEAT_SLOTS}: a Coordinator refuses a heartbeat claiming more (docs/security.md § The registry).`,
  }),
  w({
    path: 'defaultTtlMs',
    type: POSITIVE,
    default: 5000,
    description: 'Slot TTL of an inline SubmitTask reservation; must be <= maxSlotTtlMs.',
  }),
  // 12× the default TTL: room for a slow client between reserve and submit, never "forever".
  w({
    path: 'maxSlotTtlMs',
    type: POSITIVE,
    default: 60_000,
    env: 'MAX_SLOT_TTL_MS',
    description:
      "Largest ttl_ms RequestTaskSlot accepts; above it INVALID_ARGUMENT (docs/security.md). Must be >= defaultTtlMs and >= the coordinator's slotTtlMs.",
  }),
  // No fixed cap by default: a single tenant may use every slot; the fair-share reclaim protects others.
  w({
    path: 'maxReservedSlotsPerClient',
    type: NON_NEGATIVE,
    default: 0,
    env: 'MAX_RESERVED_SLOTS_PER_CLIENT',
    description:
      'Most reserved-but-not-submitted slots one client (certificate identity) may hold on this worker; beyond it RESOURCE_EXHAUSTED NoSlot. 0 = no fixed limit; a fair-share reclaim applies either way (docs/security.md § Reservations per client).',
  }),
  w({
    path: 'taskDeadlineMs',
    type: POSITIVE,
    default: 300_000,
    env: 'TASK_DEADLINE_MS',
    description: 'Timeout of a task submitted with task_timeout_ms = 0; must be <= maxTaskTimeoutMs.',
  }),
  w({
    path: 'maxTaskTimeoutMs',
    type: POSITIVE,
    default: 8 * 60 * 60 * 1000,
    defaultText: '28800000 (8 h)',
    env: 'MAX_TASK_TIMEOUT_MS',
    description: 'Largest task_timeout_ms SubmitTask accepts.',
  }),
  w({
    path: 'resultRetentionMs',
    type: POSITIVE,
    default: 300_000,
    env: 'RESULT_RETENTION_MS',
    description: 'How long a terminal result stays queryable and idempotent.',
  }),
  w({
    path: 'heartbeatIntervalMs',
    type: POSITIVE,
    default: 200,
    defaultText: '200 (2000 recommended in production)',
    env: 'WORKER_HEARTBEAT_INTERVAL',
    description: 'Registry heartbeat period.',
  }),
  w({
    path: 'capacityHeartbeatMs',
    type: NON_NEGATIVE,
    default: 25,
    env: 'WORKER_CAPACITY_HEARTBEAT_MS',
    description:
      'The soonest an extra heartbeat follows the previous one when tasks ended on a worker whose last heartbeat showed it at least half full, so the Coordinator sees freed slots before the next regular heartbeat (docs/batched-protocol.md). 0 = off.',
  }),
  w({
    path: 'watchDisconnectGraceMs',
    type: NON_NEGATIVE,
    default: 0,
    defaultText: '0 (off; 120000 recommended in production)',
    env: 'WATCH_DISCONNECT_GRACE_MS',
    description: 'Grace from the last WatchTasks stream of a task detaching to WATCH_DISCONNECTED.',
  }),
  w({ path: 'timerScanMs', type: POSITIVE, default: 500, description: 'TickTimers period.' }),
  w({
    path: 'keepaliveTimeMs',
    type: POSITIVE,
    default: 30_000,
    description: 'gRPC keepalive PING interval.',
  }),
  w({
    path: 'keepaliveTimeoutMs',
    type: POSITIVE,
    default: 10_000,
    description: 'gRPC keepalive ACK timeout.',
  }),
  w({
    path: 'drainTimeoutMs',
    type: NON_NEGATIVE,
    default: 30_000,
    description: 'On SIGTERM: how long running tasks may finish before exit.',
  }),
  w({
    path: 'admission.builderSlots',
    type: POSITIVE,
    default: 16,
    description: 'builderSem: tasks in their Builder phase.',
  }),
  w({
    path: 'admission.executorTaskSlots',
    type: POSITIVE,
    default: 32,
    description: 'executorSem: tasks in their Calls phase.',
  }),
  w({
    path: 'admission.pluginSlots',
    type: POSITIVE,
    default: 16,
    description: 'pluginSem: tasks in their Writer phase.',
  }),
  w({
    path: 'admission.scanSlots',
    type: POSITIVE,
    default: 8,
    description: 'scanSem: table scans at once.',
  }),
  w({
    path: 'fusion.maxTasks',
    type: POSITIVE,
    default: 64,
    env: 'WORKER_FUSION_MAX_TASKS',
    description:
      'Task fusion (docs/task-fusion.md): up to this many tasks of one submitter that reach their Builder, Calls or Writer phase in the same event-loop turn, with plugins that say they may, run that phase together (one scan, one call phase, one write transaction), each keeping its own id, outcome and write; a fused phase that fails runs each task alone. 1 turns fusion off.',
  }),
  w({
    path: 'taskMaxInflightCalls',
    type: POSITIVE,
    default: 1024,
    description: 'Per-task in-flight call cap.',
  }),
  w({
    path: 'callPageRows',
    type: POSITIVE,
    default: 256,
    description:
      'Pages: up to this many consecutive calls of one function whose arguments are rows of a scan travel to the Executor as one attempt (docs/performance.md, Pages); a page that fails in any way is split and its calls run on their own, each with its own attempts and budget. 1 turns pages off.',
  }),
  w({
    path: 'taskMaxCallAttempts',
    type: POSITIVE,
    default: 1_000_000,
    description:
      'Call budget: call attempts one task may dispatch over its Calls phase (root calls, subcalls and retries); one more fails the task with CALL_BUDGET_EXCEEDED (docs/security.md, Task isolation).',
  }),
  w({
    path: 'taskMaxPendingSubcalls',
    type: POSITIVE,
    default: 10_000,
    description:
      'Call budget: ctx.call subcalls of one task that may be pending (asked for and not ended) at once; one more fails the task with CALL_BUDGET_EXCEEDED.',
  }),
  w({
    path: 'callDeadlineMs',
    type: POSITIVE,
    default: 5000,
    env: 'CALL_DEADLINE_MS',
    description: 'Per-call CPU + IO budget.',
  }),
  w({
    path: 'maxCollectedOutputBytes',
    type: POSITIVE,
    default: 64 * 1024 * 1024,
    defaultText: '67108864 (64 MiB)',
    description: "Cap on the summed JSON size of a task's outputs.",
  }),
  w({
    path: 'callRetry.maxAttempts',
    type: { t: 'int', min: 1, max: 100 },
    default: 3,
    description: 'Attempts of one call, including the first.',
  }),
  w({
    path: 'callRetry.retryOn',
    type: { t: 'list', item: 'string', values: CALL_FAILURE_KINDS, uniqueItems: true },
    default: ['executor_crash', 'io', 'user'],
    description:
      'The failure kinds after which a call runs again (docs/retries.md § Call level): `executor_crash` (the Executor died under it), `deadline` (it spent its callDeadlineMs), `io` and `user` (an IO error or a thrown error, only when the error says it is retryable). A call that spent its budget is not retried unless `deadline` is listed. `functions.retry.<name>` sets it per function.',
  }),
  w({
    path: 'callRetry.initialBackoffMs',
    type: NON_NEGATIVE,
    default: 50,
    description: 'Backoff before the first retry.',
  }),
  w({
    path: 'callRetry.maxBackoffMs',
    type: NON_NEGATIVE,
    default: 1000,
    description: 'Largest backoff between retries; must be >= initialBackoffMs.',
  }),
  w({
    path: 'runTasks.maxInFlight',
    type: POSITIVE,
    defaultText: "the worker's taskSlots",
    env: 'WORKER_RUN_TASKS_MAX_IN_FLIGHT',
    description: 'Credits each RunTasks stream grants (tasks in flight per stream).',
  }),
  w({
    path: 'runTasks.flushMs',
    type: NON_NEGATIVE,
    default: 2,
    env: 'WORKER_RUN_TASKS_FLUSH_MS',
    description: 'How long terminal updates wait to share one message; 0 = the next event-loop turn.',
  }),
];
