// The rows of `deployments.<name>.executor` (docs/security.md, "Task isolation"). Row order is the order
// of the keys in the resolved config, the schema and docs/configuration.md.
import type { ConfigField, ConfigGroup } from './field.js';

const POSITIVE = { t: 'int', min: 1 } as const;
const NON_NEGATIVE = { t: 'int', min: 0 } as const;
const e = (row: Omit<ConfigField, 'section'>): ConfigField => ({ section: 'executor', ...row });

export const EXECUTOR_GROUPS: readonly ConfigGroup[] = [
  {
    section: 'executor',
    path: '',
    description: 'The Executor a Worker spawns and supervises.',
    typeName: 'ExecutorConfig',
  },
  {
    section: 'executor',
    path: 'python',
    description:
      'The Python Executor a Worker runs beside the JS one for `functions/<name>.py` (docs/executor.md, Python functions on a Worker).',
    typeName: 'PythonExecutorConfig',
  },
];

export const EXECUTOR_FIELDS: readonly ConfigField[] = [
  e({
    path: 'socketDir',
    type: { t: 'string' },
    default: '',
    defaultText: 'empty (the OS temp dir)',
    description: 'Folder for the Worker↔Executor Unix sockets.',
  }),
  e({
    path: 'threads',
    type: { t: 'int', min: 1, max: 256 },
    default: 2,
    description: 'Execution units (worker threads) inside the Executor.',
  }),
  e({
    path: 'heartbeatIntervalMs',
    type: POSITIVE,
    default: 500,
    description: 'Executor → Worker heartbeat period.',
  }),
  e({
    path: 'heartbeatTimeoutMs',
    type: POSITIVE,
    default: 3000,
    description:
      'Missed heartbeats for this long → Executor declared lost and restarted; must be > heartbeatIntervalMs.',
  }),
  e({
    path: 'restartBackoffInitialMs',
    type: POSITIVE,
    default: 100,
    description: 'First Executor restart backoff.',
  }),
  e({
    path: 'restartBackoffMaxMs',
    type: POSITIVE,
    default: 5000,
    description: 'Largest Executor restart backoff; must be >= restartBackoffInitialMs.',
  }),
  e({
    path: 'cancelHardLimitMs',
    type: POSITIVE,
    default: 1000,
    description: 'A call that ignores CancelCall past this is terminated with its execution unit.',
  }),
  e({
    path: 'maxCallsPerThread',
    type: POSITIVE,
    default: 256,
    description:
      'Calls running at once on one execution unit; further calls wait in the Executor (a call waiting on a subcall does not count).',
  }),
  e({
    path: 'readCopyMaxEntries',
    type: NON_NEGATIVE,
    default: 10_000,
    description:
      'Rows (one per key read) of ctx.io.get / getMany answers each execution thread keeps for the other calls of the same task (read copies; src/executor/PROTOCOL.md). 0 turns them off: every read goes to the Worker.',
  }),
  e({
    path: 'isolation',
    type: { t: 'enum', values: ['task', 'none'], typed: true },
    default: 'task',
    description:
      'task: execution threads lock down the JavaScript intrinsics (SES lockdown), freeze the global object and give each task its own instance of a function module; none: no isolation between tasks on a thread (docs/security.md, Task isolation).',
  }),
  e({
    path: 'threadHeapMb',
    type: POSITIVE,
    default: 1024,
    description:
      'V8 old-generation heap limit of each execution thread (worker_threads resourceLimits); a thread over it dies and its calls fail with EXECUTOR_MEMORY_LIMIT.',
  }),
  e({
    path: 'threadMemoryMb',
    type: NON_NEGATIVE,
    default: 1536,
    description:
      'Heap plus off-heap memory (Buffers, ArrayBuffers) one execution thread may hold; a thread over it is terminated and its calls fail with EXECUTOR_MEMORY_LIMIT. 0 turns the check off.',
  }),
  e({
    path: 'maxRssMb',
    type: NON_NEGATIVE,
    default: 4096,
    description:
      'Resident memory of the whole Executor process; above it the thread holding the most memory is terminated (its calls fail with EXECUTOR_MEMORY_LIMIT). 0 turns the check off.',
  }),
  e({
    path: 'passEnv',
    type: { t: 'list', item: 'string' },
    default: [],
    description:
      "Names of environment variables the Executors get besides the fixed list (PATH, HOME, locale, TZ, temp dirs, Python and Node search paths, BLOCKX_LOG_LEVEL, EXECUTOR_CPU_PROFILE/TRACE): nothing else of the Worker's environment (credentials, storage URL, TLS paths) reaches a function (docs/security.md, What a function can reach).",
  }),
  e({
    path: 'user',
    type: { t: 'string' },
    default: 'auto',
    defaultText: 'auto (as root: nobody, when it can read the package and the functions folder)',
    description:
      "The Unix user the Executors run as (a name, or UID:GID; needs a Worker running as root). auto: as root, the unprivileged user nobody when it can reach the package and the functions folder, else the Worker's user with one warning; as any other user, that user. Empty: always the Worker's user. A named user that does not exist or cannot read those files stops the Worker (docs/security.md, Executors as their own user).",
  }),
  e({
    path: 'maxProcesses',
    type: NON_NEGATIVE,
    default: 4096,
    description:
      'RLIMIT_NPROC of the Executors when they run as a user of their own (executor.user): the processes and threads that user may have, so a fork storm in a function fails its own forks, not the node. Counted per user across the host (an idle JS Executor has about 15 threads, plus about 2 per execution thread): every Worker of the host whose Executors share the user shares it. 0: no limit.',
  }),
  e({
    path: 'pidNamespace',
    type: { t: 'boolean' },
    default: true,
    defaultText: 'true (as root, each Executor is PID 1 of a PID namespace of its own)',
    description:
      'When the Worker runs as root, start each Executor as PID 1 of a PID namespace of its own (util-linux unshare, and setpriv to drop to executor.user inside it), so that the child processes a function starts cannot kill or stop it: the kernel keeps SIGKILL and SIGSTOP from inside a namespace off its init. Where unshare or setpriv is missing or a namespace cannot be made, the Worker warns once and runs the Executors without one. false: never (docs/security.md, An Executor as PID 1 of its own PID namespace).',
  }),
  e({
    path: 'memoryMaxMb',
    type: NON_NEGATIVE,
    default: 6144,
    description:
      "Hard memory ceiling of each Executor (the JS one and the Python one, each with what it forks): a cgroup of its own under the Worker's, with this memory limit and no swap, where the host lets the Worker make one (cgroup v2 with the memory controller delegated, or v1's memory tree; usually as root); the kernel ends a process that allocates past it, inside that Executor. Where none can be made the Worker says why once and runs the Executor without it. Above maxRssMb, which acts first when memory grows slowly. 0: no cgroup (docs/security.md, A memory ceiling per Executor).",
  }),
  e({
    path: 'python.enabled',
    type: { t: 'enum', values: ['auto', 'on', 'off'], typed: true },
    default: 'auto',
    description:
      'auto: the Worker starts the Python Executor once the functions folder holds a .py function (at start, or when the first one appears); on: always, at start; off: never (a call of a Python function fails with a load error).',
  }),
  e({
    path: 'python.interpreter',
    type: { t: 'string' },
    default: '',
    defaultText: 'empty ($BLOCKX_PYTHON, else python3)',
    description:
      'The Python interpreter that runs the Python Executor: a command on PATH or an absolute path.',
  }),
];
