// A real multi-process BlockX cluster for e2e tests and benches: an etcd (test/support/etcd.ts, or one the
// caller already runs), `blockx coordinator --deployment block` and N `blockx worker --deployment block`
// from the built CLI (`node bin/blockx.js`, which runs dist/), all on free loopback ports, sharing one
// storage (a temp SQLite file by default, or any BLOCKX_STORAGE_URL such as a test PostgreSQL database).
//
// Isolation: each cluster writes a temp copy of blockx.config.yaml whose block deployment uses a v2
// registry prefix of its own (`/blockx/test-<random>/lanes/default/workers/`), so clusters sharing one etcd
// never see each other's workers. Speed: the copy has the minimum lease TTL (2 s), 100 ms heartbeats and a
// 3 s heartbeat timeout, so a SIGKILLed worker leaves the coordinator's view within about 3 s; host-wide
// CPU and memory red lines are 1 (a shared box's real load must not filter the workers out).
//
// Every process is spawned with spawnTracked (its own process group: a worker's executor child dies with
// it) and `stop()` kills all of them and removes the temp dir. The caller's BLOCKX_* / WORKER_* /
// COORDINATOR_* / ETCD_* variables never leak into the services.
import { execFileSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { BlockxClient } from '../../src/client/client.js';
import type { ClusterStatusView } from '../../src/client/types.js';
import type { TlsPem } from '../../src/kernel/tls-files.js';
import { startEtcd } from './etcd.js';
import type { EtcdServer } from './etcd.js';
import type { NetHost } from './netns.js';
import { freePort, restartablePort } from './ports.js';
import { captureOutput, isRunning, signalGroup, spawnTracked, stopGroup, waitForLine } from './processes.js';
import type { OutputTail } from './processes.js';

export const REPO = path.resolve(import.meta.dirname, '../..');
export const CLI = path.join(REPO, 'bin/blockx.js');

/** Lease TTL of the workers' etcd keys: the schema's minimum. */
export const CLUSTER_LEASE_TTL_MS = 2_000;
/** Heartbeats older than this are not routed to. */
export const CLUSTER_HEARTBEAT_TIMEOUT_MS = 3_000;

const START_TIMEOUT_MS = 30_000;
const PORT_ATTEMPTS = 3;

export interface ClusterOptions {
  /** Worker processes to start. */
  readonly workers: number;
  /** Default: a temp SQLite file shared by all workers (`sqlite:PATH`). */
  readonly storageUrl?: string;
  /** Reuse a running etcd (left running by stop()); default: start one and stop it in stop(). */
  readonly etcd?: EtcdServer;
  /** Extra env for every service (e.g. COORDINATOR_SLOT_TTL_MS), over the harness's settings. */
  readonly env?: Record<string, string>;
  /** Extra env for worker `index` (0-based), over `env` and `taskSlots`. */
  readonly workerEnv?: (index: number) => Record<string, string>;
  /** WORKER_TASK_SLOTS of every worker; default the config's. */
  readonly taskSlots?: number;
  /** Edits the parsed temp blockx.config.yaml after the harness's own changes. */
  readonly configPatch?: (doc: Record<string, unknown>) => void;
  /** BLOCKX_FUNCTIONS_DIR (default: the repository's functions/). */
  readonly functionsDir?: string;
  /** Wait until the coordinator sees every worker routable before resolving (default true). */
  readonly waitRoutable?: boolean;
  /** The TLS material the harness's own status client dials the coordinator with (when TLS is on). */
  readonly clientTls?: TlsPem;
  /**
   * Run each service on a test host of its own (test/support/netns.ts), listening on its address; the
   * caller's etcd and storage must be reachable from them. Default: every process here, on loopback.
   */
  readonly hosts?: ClusterHosts;
}

/** Where each process of a cluster runs (partition tests). */
export interface ClusterHosts {
  readonly coordinator: NetHost;
  worker(index: number): NetHost;
  /** Where `cli()` and `spawnCli()` commands run. */
  readonly cli: NetHost;
}

export interface ClusterWorker {
  readonly index: number;
  /** Advertised address; a restart keeps it. */
  readonly addr: string;
  /** The current process (a restart replaces it). */
  readonly child: ChildProcess;
  /** Signal the worker's process group (default SIGKILL: a crash) and wait for it to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** SIGSTOP the worker and its executor (it stops heartbeating and answering). */
  pause(): void;
  /** SIGCONT after pause(). */
  resume(): void;
  /** Kill it if it still runs, then start it again on the same address; resolves once it listens. */
  restart(): Promise<void>;
  /** The last lines of this worker's log (all its incarnations). */
  output(): string;
}

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface TestCluster {
  readonly coordinatorAddr: string;
  readonly coordinator: ChildProcess;
  readonly workers: readonly ClusterWorker[];
  readonly etcd: EtcdServer;
  readonly configPath: string;
  readonly storageUrl: string;
  /** The block deployment's registry prefix (workers' keys are `<prefix><addr>`). */
  readonly registryPrefix: string;
  /** The env a CLI command against this cluster needs (config, etcd, storage, COORDINATOR_LISTEN). */
  readonly env: NodeJS.ProcessEnv;
  /** `node bin/blockx.js ARGS` with `env`; killed after `timeoutMs` (default 60 s; then code is null). */
  cli(args: readonly string[], opts?: { timeoutMs?: number; input?: string }): Promise<CliResult>;
  /** The same, left running: tracked, own process group, killed by stop(). */
  spawnCli(args: readonly string[]): ChildProcess;
  /** The coordinator's view (CoordinatorAdminService.GetClusterStatus). */
  status(): Promise<ClusterStatusView>;
  /** Resolves once the coordinator sees exactly `n` routable workers (default timeout 15 s). */
  waitForRoutable(n: number, timeoutMs?: number): Promise<void>;
  /** `blockx data generate --chain CHAIN --blocks N` into the cluster's storage; resolves with its stdout. */
  generateChain(blocks: number, opts?: { chain?: number; from?: number; seed?: number }): Promise<string>;
  /** pids of every process group the harness started that may still be alive (for leak checks). */
  pids(): number[];
  /** The last lines of every service's log, for failure messages. */
  output(): string;
  /** Kills every process it started, stops the etcd it started, removes temp dirs. Idempotent. */
  stop(): Promise<void>;
}

/**
 * The state of each of `taskIds` on each of `workers` that knows it. Two that hold an id RUNNING or
 * finished ran it twice (docs/placement.md § One execution per task id); one that only holds a
 * reservation for it ran nothing. One WatchTasks stream per worker (and per MAX_WATCH_IDS ids), whose
 * first update of each id is the id's state then (`not_found` for an id the worker does not know): a
 * backfill's thousand ids were thousands of GetTaskResult round trips. A worker that cannot be asked, or
 * a stream that ends before it told every id, throws: an id is never taken as unknown for want of an answer.
 */
export async function taskStatesOn(
  client: BlockxClient,
  workers: readonly { readonly addr: string }[],
  taskIds: readonly string[],
): Promise<Map<string, { readonly addr: string; readonly state: string }[]>> {
  const ids = [...new Set(taskIds)];
  const states = new Map(ids.map((id) => [id, [] as { addr: string; state: string }[]]));
  const ask = async (addr: string, chunk: readonly string[]): Promise<void> => {
    const untold = new Set(chunk);
    for await (const update of client.watch(chunk, { workerAddr: addr })) {
      if (!untold.delete(update.taskId)) continue;
      if (update.error === '') states.get(update.taskId)!.push({ addr, state: String(update.state) });
      if (untold.size === 0) return;
    }
    throw new Error(`${addr}: WatchTasks ended before it told ${untold.size} of ${chunk.length} ids`);
  };
  const asks = workers.flatMap((w) =>
    Array.from({ length: Math.ceil(ids.length / MAX_WATCH_IDS) }, (_, i) =>
      ask(w.addr, ids.slice(i * MAX_WATCH_IDS, (i + 1) * MAX_WATCH_IDS)),
    ),
  );
  await Promise.all(asks);
  return states;
}

/** Ids per WatchTasks request of taskStatesOn: the Worker takes up to 10,000 (MAX_WATCH_TASK_IDS). */
const MAX_WATCH_IDS = 5_000;

/** The environment without any BlockX / etcd variable of the caller's shell. */
export function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) =>
        !/^(BLOCKX_|WORKER_|COORDINATOR_|ETCD_|TASK_DEADLINE_MS|MAX_TASK_TIMEOUT_MS|MAX_SLOT_TTL_MS|MAX_RESERVED_SLOTS_PER_CLIENT|RESULT_RETENTION_MS|WATCH_DISCONNECT_GRACE_MS|CALL_DEADLINE_MS)/.test(
          k,
        ),
    ),
  );
}

/** Builds dist/ if it is missing (the services run the built CLI). */
export function ensureBuilt(): void {
  if (!existsSync(path.join(REPO, 'dist/cli/main.js'))) {
    execFileSync('npm', ['run', 'build'], { cwd: REPO, stdio: 'ignore' });
  }
}

type Doc = Record<string, unknown>;

/** `doc[k0][k1]...`, creating objects on the way. */
function section(doc: Doc, ...keys: string[]): Doc {
  let at = doc;
  for (const k of keys) {
    const next = at[k];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) at[k] = {};
    at = at[k] as Doc;
  }
  return at;
}

/** The repository's config, patched for a test cluster (see the header). */
function clusterConfig(opts: {
  prefix: string;
  coordinatorListen: string;
  storageUrl: string;
  etcdEndpoint: string;
  functionsDir: string;
  patch: ((doc: Doc) => void) | undefined;
}): string {
  const doc = parse(readFileSync(path.join(REPO, 'blockx.config.yaml'), 'utf8')) as Doc;
  const etcd = section(doc, 'registry', 'etcd');
  etcd.endpoints = [opts.etcdEndpoint];
  etcd.leaseTtlMs = CLUSTER_LEASE_TTL_MS;
  section(doc, 'storage').url = opts.storageUrl;
  section(doc, 'functions').dir = opts.functionsDir;
  section(doc, 'plugins').dirs = [path.join(REPO, 'plugins/builders'), path.join(REPO, 'plugins/writers')];
  // `blockx submit` / `status` without flags dial up.coordinatorListen.
  section(doc, 'up').coordinatorListen = opts.coordinatorListen;
  Object.assign(section(doc, 'deployments', 'block', 'coordinator'), {
    listen: opts.coordinatorListen,
    registryPrefixes: [opts.prefix],
    heartbeatTimeoutMs: CLUSTER_HEARTBEAT_TIMEOUT_MS,
    watchGracePeriodMs: 1_000,
    etcdWatchRetryDelayMs: 100,
    workerRpcTimeoutMs: 2_000,
    cpuRedLine: 1,
    memoryRedLine: 1,
  });
  Object.assign(section(doc, 'deployments', 'block', 'worker'), {
    listen: '127.0.0.1:0',
    registryPrefix: opts.prefix,
    heartbeatIntervalMs: 100,
  });
  opts.patch?.(doc);
  return stringify(doc);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function startCluster(opts: ClusterOptions): Promise<TestCluster> {
  ensureBuilt();
  const tmp = mkdtempSync(path.join(tmpdir(), 'blockx-cluster-'));
  const children = new Set<ChildProcess>();
  const logs: { name: string; tail: OutputTail }[] = [];
  let etcd: EtcdServer | undefined = opts.etcd;
  let ownEtcd = false;
  let client: BlockxClient | undefined;
  let stopped: Promise<void> | undefined;

  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      client?.close();
      await Promise.all([...children].map((c) => stopGroup(c, 'SIGTERM', 3_000)));
      if (ownEtcd) await etcd?.stop();
      rmSync(tmp, { recursive: true, force: true });
    })());

  try {
    if (etcd === undefined) {
      etcd = await startEtcd();
      ownEtcd = true;
    }
    const prefix = `/blockx/test-${randomBytes(6).toString('hex')}/lanes/default/workers/`;
    const storageUrl = opts.storageUrl ?? `sqlite:${path.join(tmp, 'blockx.db')}`;
    const configPath = path.join(tmp, 'blockx.config.yaml');
    const functionsDir = opts.functionsDir ?? path.join(REPO, 'functions');
    const baseEnv: NodeJS.ProcessEnv = {
      ...cleanEnv(),
      BLOCKX_CONFIG: configPath,
      ETCD_ENDPOINTS: etcd.endpoint,
      BLOCKX_STORAGE_URL: storageUrl,
      BLOCKX_FUNCTIONS_DIR: functionsDir,
    };
    const runningEtcd = etcd;

    /**
     * A tracked child stop() kills. A named one (a service) puts its log into output() and stays on the
     * list after it exits, so stop() still reaps its process group (an orphaned executor); a CLI run
     * leaves the list when it exits.
     */
    const spawnBlockx: SpawnBlockx = (args, env, name, stdin = 'ignore', host = opts.hosts?.cli) => {
      const run = host?.command(process.execPath, [CLI, ...args]) ?? {
        cmd: process.execPath,
        args: [CLI, ...args],
      };
      const child = spawnTracked(run.cmd, run.args, {
        cwd: REPO,
        env,
        stdio: [stdin, 'pipe', 'pipe'],
      });
      children.add(child);
      if (name === undefined) child.once('exit', () => children.delete(child));
      else logs.push({ name, tail: captureOutput(child) });
      return child;
    };

    const writeConfig = (coordinatorListen: string): void =>
      writeFileSync(
        configPath,
        clusterConfig({
          prefix,
          coordinatorListen,
          storageUrl,
          etcdEndpoint: runningEtcd.endpoint,
          functionsDir,
          patch: opts.configPatch,
        }),
      );
    // The coordinator, on a port picked first (the config names it, for CLI commands); a port taken
    // between probe and bind is retried with a fresh one. Workers start meanwhile (they only need the
    // prefix, which a retry keeps).
    const startCoordinator = async (firstAddr: string): Promise<{ child: ChildProcess; addr: string }> => {
      for (let attempt = 1, addr = firstAddr; ; attempt++, addr = `${coordinatorIp}:${await freePort()}`) {
        writeConfig(addr);
        const child = spawnBlockx(
          ['coordinator', '--deployment', 'block'],
          {
            ...baseEnv,
            BLOCKX_LOG_LEVEL: 'info', // the `coordinator listening` line
            ...opts.env,
            COORDINATOR_LISTEN: addr,
          },
          'coordinator',
          'ignore',
          opts.hosts?.coordinator,
        );
        try {
          await waitForLine(child, /"msg":"coordinator listening"/, START_TIMEOUT_MS);
          return { child, addr };
        } catch (err) {
          await stopGroup(child, 'SIGKILL', 1_000);
          if (attempt >= PORT_ATTEMPTS || !/EADDRINUSE|address already in use/i.test(String(err))) throw err;
        }
      }
    };
    const coordinatorIp = opts.hosts?.coordinator.ip ?? '127.0.0.1';
    const coordinatorStarted = startCoordinator(`${coordinatorIp}:${await freePort()}`);

    const workerEnv = (index: number, listen: string): NodeJS.ProcessEnv => ({
      ...baseEnv,
      BLOCKX_LOG_LEVEL: 'warn',
      ...opts.env,
      ...(opts.taskSlots === undefined ? {} : { WORKER_TASK_SLOTS: String(opts.taskSlots) }),
      WORKER_LISTEN: listen,
      ...opts.workerEnv?.(index),
    });
    const launchWorker = async (
      index: number,
      listen: string,
    ): Promise<{ child: ChildProcess; addr: string }> => {
      const child = spawnBlockx(
        ['worker', '--deployment', 'block'],
        workerEnv(index, listen),
        `worker ${index}`,
        'ignore',
        opts.hosts?.worker(index),
      );
      const line = await waitForLine(child, /^worker listening on \S+/, START_TIMEOUT_MS);
      return { child, addr: /^worker listening on (\S+)/.exec(line)?.[1] ?? '' };
    };
    // A worker starts on a restartablePort (ports.ts), which no outgoing connection can take while
    // restart() has it down; a port taken between probe and bind is retried with a fresh one.
    const firstLaunch = async (index: number): Promise<{ child: ChildProcess; addr: string }> => {
      const ip = opts.hosts?.worker(index).ip ?? '127.0.0.1';
      for (let attempt = 1; ; attempt++) {
        try {
          return await launchWorker(index, `${ip}:${await restartablePort()}`);
        } catch (err) {
          if (attempt >= PORT_ATTEMPTS || !/EADDRINUSE|address already in use/i.test(String(err))) throw err;
        }
      }
    };
    const makeWorker = async (index: number): Promise<ClusterWorker> => {
      let { child, addr } = await firstLaunch(index);
      const name = `worker ${index}`;
      const kill = (signal: NodeJS.Signals = 'SIGKILL'): Promise<void> =>
        stopGroup(child, signal, signal === 'SIGKILL' ? 1_000 : 10_000);
      return {
        index,
        get addr() {
          return addr;
        },
        get child() {
          return child;
        },
        kill,
        pause: () => signalGroup(child, 'SIGSTOP'),
        resume: () => signalGroup(child, 'SIGCONT'),
        restart: async () => {
          signalGroup(child, 'SIGCONT'); // a paused worker would not see SIGTERM
          await kill();
          ({ child, addr } = await launchWorker(index, addr));
        },
        output: () =>
          logs
            .filter((l) => l.name === name)
            .map((l) => l.tail.text())
            .join(''),
      };
    };
    const [{ child: coordinator, addr: coordinatorAddr }, workers] = await Promise.all([
      coordinatorStarted,
      Promise.all(Array.from({ length: opts.workers }, (_, i) => makeWorker(i))),
    ]);
    const env: NodeJS.ProcessEnv = { ...baseEnv, COORDINATOR_LISTEN: coordinatorAddr };

    const statusClient = new BlockxClient({
      coordinator: coordinatorAddr,
      rpcTimeoutMs: 2_000,
      ...(opts.clientTls === undefined ? {} : { tls: opts.clientTls }),
    });
    client = statusClient;
    const cluster: TestCluster = {
      coordinatorAddr,
      coordinator,
      workers,
      etcd: runningEtcd,
      configPath,
      storageUrl,
      registryPrefix: prefix,
      env,
      cli: (args, cliOpts = {}) => runCli(spawnBlockx, env, args, cliOpts),
      spawnCli: (args) => spawnBlockx(args, env, `blockx ${args.join(' ')}`),
      status: () => statusClient.clusterStatus(),
      waitForRoutable: async (n, timeoutMs = 15_000) => {
        const deadline = Date.now() + timeoutMs;
        let last: string;
        for (;;) {
          try {
            const view = await statusClient.clusterStatus();
            const routable = view.workers.filter((w) => w.routable);
            if (view.ready && routable.length === n) return;
            last = `ready=${view.ready}, routable: [${routable.map((w) => w.workerAddr).join(', ')}], all: ${view.workers
              .map((w) => `${w.workerAddr}${w.routable ? '' : ` (${w.notRoutableReason})`}`)
              .join(', ')}`;
          } catch (err) {
            last = err instanceof Error ? err.message : String(err);
          }
          if (Date.now() > deadline)
            throw new Error(`timed out after ${timeoutMs} ms waiting for ${n} routable worker(s); ${last}`);
          await sleep(100);
        }
      },
      generateChain: async (blocks, g = {}) => {
        const r = await cluster.cli(
          [
            'data',
            'generate',
            '--chain',
            String(g.chain ?? 1),
            '--blocks',
            String(blocks),
            ...(g.from === undefined ? [] : ['--from', String(g.from)]),
            ...(g.seed === undefined ? [] : ['--seed', String(g.seed)]),
          ],
          { timeoutMs: 600_000 },
        );
        if (r.code !== 0) throw new Error(`blockx data generate exited ${r.code}:\n${r.stdout}${r.stderr}`);
        return r.stdout;
      },
      pids: () => [...children].flatMap((c) => (c.pid === undefined || !isRunning(c) ? [] : [c.pid])),
      output: () => logs.map((l) => `--- ${l.name} ---\n${l.tail.text()}`).join('\n'),
      stop,
    };
    if (opts.waitRoutable ?? true) await cluster.waitForRoutable(opts.workers, START_TIMEOUT_MS);
    return cluster;
  } catch (err) {
    const output = logs.map((l) => `--- ${l.name} ---\n${l.tail.text()}`).join('\n');
    await stop();
    throw new Error(`startCluster failed: ${err instanceof Error ? err.message : String(err)}\n${output}`, {
      cause: err,
    });
  }
}

type SpawnBlockx = (
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  name?: string,
  stdin?: 'ignore' | 'pipe',
  host?: NetHost,
) => ChildProcess;

function runCli(
  spawnBlockx: SpawnBlockx,
  env: NodeJS.ProcessEnv,
  args: readonly string[],
  opts: { timeoutMs?: number; input?: string },
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawnBlockx(args, env, undefined, opts.input === undefined ? 'ignore' : 'pipe');
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    if (opts.input !== undefined) child.stdin?.end(opts.input);
    const timer = setTimeout(() => {
      timedOut = true;
      void stopGroup(child, 'SIGKILL', 1_000);
    }, opts.timeoutMs ?? 60_000);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({
        code: timedOut ? null : code,
        stdout,
        stderr: timedOut ? `${stderr}\n[killed after ${opts.timeoutMs ?? 60_000} ms]\n` : stderr,
      });
    });
  });
}
