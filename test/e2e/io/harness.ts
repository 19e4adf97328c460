// Shared by test/e2e/io/*.test.ts (not a test file itself): the IO stack of one Worker process on real
// storage, and the backends every test runs against.
//
//   const dbs = testDatabases('bw');       // the file's databases on the run's PostgreSQL (beforeAll / afterAll)
//   describe.each([['sqlite', dbs.makeSqlite], ['postgres', dbs.makePg]])('%s', (_, makeUrl) => ...)
//   const stack = await startIoStack({ url: await makeUrl() });
//   const update = await stack.submit(task);   // SubmitTask, then WatchTasks until the terminal update
//
// startIoStack is the worker assembly of `blockx worker` on the repo's blockx.config.yaml (storage URL and
// functions dir overridden through the environment): startStorageRuntime (open + migrate), a task IO
// scope factory, the real Executor child (startExecutorRuntime, its ctx.io served by the factory), the
// plugins of bootKernelWithConfig, and runWorker on 127.0.0.1:0. `callRunner` swaps the executor for an
// in-process Calls phase (the memory test).
import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { createWorkerClient, unaryCall } from '../../../src/grpc/clients.js';
import { taskInputToWire, taskUpdateFromWire } from '../../../src/grpc/convert.js';
import type { TaskInput, TaskUpdate } from '../../../src/grpc/domain-types.js';
import type { SubmitTaskResponseWireOut, TaskUpdateWireOut } from '../../../src/grpc/wire-types.js';
import { loadConfig } from '../../../src/kernel/config.js';
import type { BlockxConfig, ExecutorConfig, WorkerConfig } from '../../../src/kernel/config-types.js';
import { bootKernelWithConfig } from '../../../src/kernel/kernel.js';
import { canonicalJson } from '../../../src/kernel/canonical-json.js';
import {
  hasSibling,
  syntheticChain,
  tokenTransfersOf,
} from '../../../src/services/storage/block-data/index.js';
import type { Row, StorageBackend, StorageScanQuery } from '../../../src/services/storage/types.js';
import type { CallIoHandler } from '../../../src/services/call-host/adapters/executor-call-io.js';
import type { StorageIoScopeFactory } from '../../../src/services/worker/adapters/io/index.js';
import type { CallPhaseRunner } from '../../../src/services/call-host/index.js';
import type { ServiceLogger } from '../../../src/kernel/observability/service-logger.js';
import { startExecutorRuntime } from '../../../src/services/worker/app/executor-runtime.js';
import { runWorker, type RunningWorker } from '../../../src/services/worker/app/run-worker.js';
import { startStorageRuntime } from '../../../src/services/worker/app/storage-runtime.js';
import { sharedPostgres, type TestPostgres } from '../../support/shared-postgres.js';

export const REPO = path.resolve(import.meta.dirname, '../../..');
/**
 * The functions the tests run: the repository's (erc20_transfers, ...) plus this folder's test-only ones,
 * copied into one temp folder per test process (removed on exit), so no function exists twice in the tree.
 */
export const FUNCTIONS_DIR = ((): string => {
  const dir = mkdtempSync(path.join(tmpdir(), 'blockx-io-functions-'));
  for (const from of [path.join(REPO, 'functions'), path.join(import.meta.dirname, 'functions')])
    cpSync(from, dir, { recursive: true });
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
})();
export const CHAIN_ID = 1;

/** The repo's config on `url`, with this folder's functions and a faster executor heartbeat. */
export function loadIoConfig(
  url: string,
  worker: Partial<WorkerConfig> = {},
  storage: Partial<BlockxConfig['storage']> = {},
  executor: Partial<ExecutorConfig> = {},
): BlockxConfig {
  const base = loadConfig({
    configPath: path.join(REPO, 'blockx.config.yaml'),
    cwd: REPO,
    env: { BLOCKX_STORAGE_URL: url, BLOCKX_FUNCTIONS_DIR: FUNCTIONS_DIR, BLOCKX_LOG_LEVEL: 'warn' },
    deployments: ['block'],
  });
  const dep = base.deployments.block!;
  return {
    ...base,
    storage: { ...base.storage, ...storage },
    deployments: {
      ...base.deployments,
      block: {
        ...dep,
        worker: { ...dep.worker, ...worker },
        executor: { ...dep.executor, heartbeatIntervalMs: 100, ...executor },
      },
    },
  };
}

export interface TestDatabases {
  /** A storage URL on a fresh SQLite file in a temp dir. */
  makeSqlite(): Promise<string>;
  /** A storage URL on a fresh database of the file's own on the run's PostgreSQL server. */
  makePg(): Promise<string>;
}

/**
 * Registers the file's PostgreSQL databases (on the run's shared server, test/support/shared-postgres.ts;
 * dropped in afterAll) and temp SQLite dirs.
 */
export function testDatabases(prefix: string): TestDatabases {
  let server: TestPostgres | undefined;
  let count = 0;
  const dirs: string[] = [];
  beforeAll(async () => {
    server = await sharedPostgres();
  });
  afterAll(async () => {
    await server?.stop();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return {
    makeSqlite: () => {
      const dir = mkdtempSync(path.join(tmpdir(), `bx-io-${prefix}-`));
      dirs.push(dir);
      return Promise.resolve(`sqlite:${path.join(dir, 'blockx.db')}`);
    },
    makePg: () => {
      if (server === undefined) return Promise.reject(new Error('PostgreSQL is not started'));
      return server.createDatabase(`${prefix}_${++count}`);
    },
  };
}

export interface IoStackOptions {
  readonly url: string;
  readonly worker?: Partial<WorkerConfig>;
  readonly storage?: Partial<BlockxConfig['storage']>;
  readonly executor?: Partial<ExecutorConfig>;
  /** An in-process Calls phase instead of the Executor child. */
  readonly callRunner?: (io: CallIoHandler, config: BlockxConfig) => CallPhaseRunner;
  /** Absolute folders of plugin packages the Worker loads beside the built-in ones (plugins.dirs). */
  readonly pluginDirs?: readonly string[];
}

export interface IoStack {
  readonly config: BlockxConfig;
  readonly backend: StorageBackend;
  readonly factory: StorageIoScopeFactory;
  readonly worker: RunningWorker;
  /** Warn and error lines of the worker and executor, for failure messages. */
  readonly logs: string[];
  /** SubmitTask (no slot), then WatchTasks until the terminal update. */
  submit(task: TaskInput, timeoutMs?: number): Promise<TaskUpdate>;
  close(): Promise<void>;
}

export async function startIoStack(opts: IoStackOptions): Promise<IoStack> {
  const loaded = loadIoConfig(opts.url, opts.worker, opts.storage, opts.executor);
  const config: BlockxConfig =
    opts.pluginDirs === undefined
      ? loaded
      : { ...loaded, plugins: { ...loaded.plugins, dirs: [...loaded.plugins.dirs, ...opts.pluginDirs] } };
  const logs: string[] = [];
  const logger = collectingLogger(logs);
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async (): Promise<void> => {
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => undefined);
    killStrayExecutors();
  };
  try {
    const storage = await startStorageRuntime({ config, logger });
    stops.push(() => storage.close());
    const factory = storage.scopesForWorker();
    const kernel = await bootKernelWithConfig(config);
    // The Calls phase: the given in-process runner, or the real Executor child with its ctx.io reads
    // served by this worker's task IO scopes.
    const executor =
      opts.callRunner === undefined
        ? await startExecutorRuntime({ config, deployment: 'block', logger, io: factory.callIoHandler })
        : undefined;
    if (executor !== undefined) stops.push(() => executor.close());
    const worker = await runWorker({
      config,
      deployment: 'block',
      plugins: kernel.plugins,
      ioScopes: factory,
      listen: '127.0.0.1:0',
      logger,
      shutdownGraceMs: 200,
      ...(executor === undefined
        ? { callRunner: opts.callRunner!(factory.callIoHandler, config) }
        : {
            callRunner: executor.callRunner,
            codeEpochs: executor.codeEpochs,
            executorReadiness: executor.executorReadiness,
          }),
    });
    stops.push(() => worker.close());
    if (executor !== undefined && !(await executor.whenReady(30_000)))
      throw new Error(`executor not ready after 30 s:\n${logs.join('\n')}`);
    const client = createWorkerClient(worker.address);
    stops.push(() => Promise.resolve(client.close()));
    return {
      config,
      backend: storage.backend,
      factory,
      worker,
      logs,
      async submit(task, timeoutMs = 60_000) {
        const wire = taskInputToWire(task);
        await unaryCall<SubmitTaskResponseWireOut>(
          (md, o, cb) => client.submitTask({ task: wire, slotId: '' }, md, o, cb),
          { timeoutMs: 10_000 },
        );
        return terminalUpdate(client, task.taskId, timeoutMs, logs);
      },
      close: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

function terminalUpdate(
  client: ReturnType<typeof createWorkerClient>,
  taskId: string,
  timeoutMs: number,
  logs: string[],
): Promise<TaskUpdate> {
  return new Promise((resolve, reject) => {
    const updates: TaskUpdate[] = [];
    const stream = client.watchTasks({ taskIds: [taskId] });
    const timer = setTimeout(() => {
      stream.cancel();
      reject(new Error(`no terminal update of ${taskId} in ${timeoutMs} ms:\n${logs.join('\n')}`));
    }, timeoutMs);
    stream.on('data', (u: TaskUpdateWireOut) => updates.push(taskUpdateFromWire(u)));
    stream.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    stream.on('end', () => {
      clearTimeout(timer);
      const last = updates.at(-1);
      if (last?.isTerminal === true) resolve(last);
      else reject(new Error(`the watch of ${taskId} ended without a terminal update`));
    });
  });
}

function collectingLogger(lines: string[]): ServiceLogger {
  const at =
    (level: string) =>
    (obj: Record<string, unknown>, msg: string): void => {
      lines.push(`${level} ${msg} ${JSON.stringify(obj)}`);
    };
  return { debug: () => undefined, info: () => undefined, warn: at('warn'), error: at('error') };
}

/**
 * Last resort: SIGKILL executor children of this process (by pid) that outlived their runtime's close().
 * Only processes whose parent is this process and whose command line is `... executor ... --socket`.
 */
export function killStrayExecutors(): void {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return;
  }
  for (const pid of entries) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) continue;
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (cmd.some((a) => a.includes('executor')) && cmd.includes('--socket'))
        process.kill(Number(pid), 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}

// ---- data --------------------------------------------------------------------------------------------

export const newTaskId = (): string => randomUUID();

/** Every row a scan returns, sorted by canonical JSON (a stable, order-free table state). */
export async function rowsWhere(
  backend: StorageBackend,
  table: string,
  query: StorageScanQuery = {},
): Promise<Row[]> {
  const rows: Row[] = [];
  for await (const page of backend.scan(table, query)) rows.push(...page);
  return sortRows(rows);
}

export function sortRows<R extends object>(rows: readonly R[]): R[] {
  return rows
    .map((r) => [canonicalJson(r), r] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, r]) => r);
}

export interface ForkedChain {
  readonly chainId: number;
  readonly seed: number;
  /** A height with a non-canonical sibling; both it and its sibling hold ERC-20 transfers, and differ. */
  readonly forkHeight: number;
}

/**
 * The first seed whose chain has, within heights `from..to`, a forked height where the canonical block
 * and its sibling both hold at least 5 ERC-20 transfers (so mixing them up shows in the rows).
 */
export function forkedChain(from: number, to: number): ForkedChain {
  for (let seed = 1; seed < 10_000; seed++) {
    for (let h = from; h <= to; h++) {
      if (!hasSibling({ chainId: CHAIN_ID, seed }, h)) continue;
      const [canonical, sibling] = [...syntheticChain({ chainId: CHAIN_ID, fromBlock: h, blocks: 1, seed })];
      const a = tokenTransfersOf(canonical?.events ?? []);
      const b = tokenTransfersOf(sibling?.events ?? []);
      if (a.length >= 5 && b.length >= 5 && canonicalJson(a) !== canonicalJson(b))
        return { chainId: CHAIN_ID, seed, forkHeight: h };
    }
  }
  throw new Error(`no seed gives a forked height in ${from}..${to}`);
}

/** The generated blocks of one height: the canonical one and its sibling (if any). */
export function blocksAt(chain: ForkedChain, height: number) {
  const [canonical, sibling] = [
    ...syntheticChain({ chainId: chain.chainId, fromBlock: height, blocks: 1, seed: chain.seed }),
  ];
  if (canonical === undefined) throw new Error(`no block ${height}`);
  return { canonical, sibling };
}
