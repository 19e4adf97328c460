// Partitions, not only crashes (issue 31, item 5; docs/placement.md § Partitions). Every process runs on a
// test host of its own (test/support/netns.ts: a Linux network namespace per host, linked through a router
// namespace): etcd, PostgreSQL, `blockx coordinator`, three `blockx worker` and the `blockx backfill` client.
// While a backfill of a generated chain runs, one link is cut by dropping its packets silently (6 s, or 10 s
// for the storage), then healed:
//   - a worker cut from the coordinator, not from etcd nor its clients;
//   - a worker cut from etcd, not from the coordinator nor its clients;
//   - a worker cut from PostgreSQL while it holds a transaction open (the server must abort it within
//     storage.lostClientTimeoutMs, docs/storage.md § A lost connection), and the same with a task
//     deadline (5 s) shorter than the cut, so that the client retries those units on other workers;
//   - a worker cut from every host;
//   - the client cut from every host mid-backfill, then run again.
// After each: the job ends with 0 failed units, `token_transfers` equals the rows recomputed from the chain
// (nothing lost, nothing extra), no block was written by two transactions (a trigger records the
// transaction of every row written), no task id ran (RUNNING or finished) on two workers, and every worker is back in the
// coordinator's view with no running task and no reserved slot (nothing stuck). Needs root with
// CAP_NET_ADMIN and iproute2; without them the file is skipped and says why.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BlockxClient } from '../../src/client/client.js';
import { isTerminalState, TaskState } from '../../src/contracts/task.js';
import { syntheticChain, tokenTransfersOf } from '../../src/services/storage/block-data/index.js';
import { REPO, startCluster, taskStatesOn, type TestCluster } from '../support/cluster.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { eventually } from '../support/eventually.js';
import { netnsSupport, startTestNetwork, type NetHost, type TestNetwork } from '../support/netns.js';
import { startPostgres, type PgServer } from '../support/postgres.js';
import { waitForExit } from '../support/processes.js';
import { transferRowText } from '../support/transfer-rows.js';

const BLOCKS = 1_000;
const CHAIN = { chainId: 1, fromBlock: 1, blocks: BLOCKS, seed: 1 };
const TEMPLATE = path.join(REPO, 'examples/tasks/block-table-transfers.json');
const CONCURRENCY = 8;
// How long a link stays cut: longer than every bound the cut must trip (the coordinator's workerRpcTimeoutMs
// of 2 s, the cluster's 2 s lease and 3 s heartbeat timeout, test/support/cluster.ts), and short enough that
// a connection held across it resends soon after the heal: the kernel's retransmission backoff doubles
// from 200 ms (0.2, 0.6, 1.4, 3.0, 6.2, 12.6 s after the cut), so a 15 s cut left the job idle for up to
// 12 s after the heal.
const PARTITION_MS = 6_000;
/**
 * storage.lostClientTimeoutMs of this file's cluster (the default is 10 s): how long PostgreSQL keeps the
 * transaction of a worker that went silent. The slowest of the server's checks is the TCP keepalive (half
 * of it idle in whole seconds, then 5 probes 1 s apart: 2 + 5 s, src/services/storage/pg-lost-client.ts).
 */
const LOST_CLIENT_TIMEOUT_MS = 3_000;
/** The storage cuts: past that keepalive's 7 s, checked 1 s before the heal. */
const STORAGE_PARTITION_MS = 10_000;
/** The task deadline of the case that cuts a worker's storage for longer. */
const SHORT_DEADLINE_MS = 5_000;
/** Units the job has finished before the link is cut. */
const CUT_AFTER_UNITS = 60;
const JOB_TIMEOUT_MS = 150_000;

const support = netnsSupport();
if (!support.ok) console.warn(`partitions.test.ts skipped: ${support.reason}`);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A unit line of `blockx backfill --json`, with when this process read it. */
interface Unit {
  readonly at: number;
  readonly state?: string;
  readonly taskId?: string;
  readonly workerAddr?: string;
}

interface JobRun {
  readonly code: number | null;
  readonly stderr: string;
  readonly units: readonly Unit[];
  readonly summary: Record<string, unknown> | undefined;
}

function expectedRows(): string[] {
  const out: string[] = [];
  for (const b of syntheticChain(CHAIN)) {
    if (!b.block.canonical) continue;
    for (const r of tokenTransfersOf(b.events))
      out.push(transferRowText(r as unknown as Record<string, unknown>));
  }
  return out.sort();
}

/** The unit lines among `lines` of `blockx backfill --json`. */
function parseUnits(lines: readonly string[], at: number): Unit[] {
  return lines
    .filter((l) => l.startsWith('{'))
    .map((l) => ({ ...(JSON.parse(l) as Omit<Unit, 'at'>), at }))
    .filter((u) => typeof u.state === 'string');
}

/** The summary of the last line of `blockx backfill --json`, if it printed one. */
function summaryOf(stdout: string): Record<string, unknown> | undefined {
  const last = stdout.trim().split('\n').at(-1) ?? '';
  if (!last.startsWith('{')) return undefined;
  const parsed = JSON.parse(last) as Record<string, unknown>;
  return 'summary' in parsed ? (parsed.summary as Record<string, unknown>) : undefined;
}

/** Follows a running job's output; `reached(n)` resolves once it printed n unit lines. */
function followJob(child: ChildProcess): {
  reached: (n: number) => Promise<void>;
  done: () => Promise<JobRun>;
} {
  let stdout = '';
  let stderr = '';
  let partial = '';
  const units: Unit[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout?.on('data', (d: Buffer) => {
    stdout += d.toString();
    const lines = (partial + d.toString()).split('\n');
    partial = lines.pop() ?? '';
    units.push(...parseUnits(lines, Date.now()));
    for (const w of waiters.splice(0)) {
      if (units.length >= w.n) w.resolve();
      else waiters.push(w);
    }
  });
  return {
    reached: (n) =>
      new Promise((resolve, reject) => {
        waiters.push({ n, resolve });
        child.once('exit', () =>
          reject(new Error(`exited before ${n} units:\n${stdout.slice(-2000)}${stderr}`)),
        );
      }),
    done: async () => {
      await waitForExit(child);
      units.push(...parseUnits([partial], Date.now()));
      return { code: child.exitCode, stderr, units, summary: summaryOf(stdout) };
    },
  };
}

describe.skipIf(!support.ok)('partitions (network namespaces, real etcd, PostgreSQL and processes)', () => {
  let net: TestNetwork;
  let hosts: Record<'etcd' | 'pg' | 'coordinator' | 'client', NetHost>;
  let workerHosts: NetHost[];
  let etcd: EtcdServer;
  let db: PgServer;
  let cluster: TestCluster;
  let sql: pg.Client;
  let client: BlockxClient;
  let stateRoot: string;
  let expected: string[];

  beforeAll(async () => {
    net = startTestNetwork();
    hosts = {
      etcd: net.addHost('etcd'),
      pg: net.addHost('pg'),
      coordinator: net.addHost('coord'),
      client: net.addHost('client'),
    };
    workerHosts = [0, 1, 2].map((i) => net.addHost(`w${i}`));
    etcd = await startEtcd({ host: hosts.etcd });
    db = await startPostgres({ host: hosts.pg });
    const url = await db.createDatabase('partitions');
    cluster = await startCluster({
      workers: 3,
      etcd,
      storageUrl: url,
      // A network of test hosts only: plaintext is fine (docs/security.md § TLS and authentication).
      env: { BLOCKX_TLS_ALLOW_PLAINTEXT: '1' },
      configPatch: (doc) => {
        (doc.storage as Record<string, unknown>).lostClientTimeoutMs = LOST_CLIENT_TIMEOUT_MS;
      },
      hosts: { coordinator: hosts.coordinator, worker: (i) => workerHosts[i]!, cli: hosts.client },
    });
    await cluster.generateChain(BLOCKS);
    sql = new pg.Client({ connectionString: url });
    await sql.connect();
    // Every row written records its transaction: a block written by two transactions was written twice.
    await sql.query(`
      CREATE TABLE partition_writes (block_number bigint NOT NULL, xid bigint NOT NULL);
      CREATE FUNCTION note_partition_write() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN INSERT INTO partition_writes VALUES (NEW.block_number, txid_current()); RETURN NULL; END $$;
      CREATE TRIGGER note_partition_write AFTER INSERT ON token_transfers
        FOR EACH ROW EXECUTE FUNCTION note_partition_write();`);
    client = new BlockxClient({ coordinator: cluster.coordinatorAddr, rpcTimeoutMs: 5_000 });
    stateRoot = mkdtempSync(path.join(tmpdir(), 'blockx-partitions-'));
    expected = expectedRows();
  }, 180_000);

  afterAll(async () => {
    net?.healAll();
    client?.close();
    await sql?.end();
    await cluster?.stop();
    await db?.stop();
    await etcd?.stop();
    net?.destroy();
    if (stateRoot) rmSync(stateRoot, { recursive: true, force: true });
  });

  beforeEach(async () => {
    net.healAll();
    await cluster.waitForRoutable(3, 30_000);
    await sql.query('TRUNCATE token_transfers, partition_writes');
  });

  const backfillArgs = (stateDir: string, template = TEMPLATE): string[] => [
    'backfill',
    template,
    '--from',
    '1',
    '--to',
    String(BLOCKS),
    '--concurrency',
    String(CONCURRENCY),
    '--json',
    '--state-dir',
    path.join(stateRoot, stateDir),
  ];

  const workerAddrOf = (host: NetHost): string =>
    cluster.workers.find((w) => w.addr.startsWith(`${host.ip}:`))?.addr ?? host.ip;

  async function tableRows(): Promise<string[]> {
    const res = await sql.query<Record<string, unknown>>(
      'SELECT block_number, log_idx, token, from_address, to_address, amount FROM token_transfers',
    );
    return res.rows.map(transferRowText).sort();
  }

  /** Write transactions (they hold a transaction id) the storage server holds open for `host`. */
  async function openTransactionsOf(host: NetHost): Promise<number> {
    const res = await sql.query<{ n: string }>(
      `SELECT count(*) AS n FROM pg_stat_activity WHERE client_addr = $1 AND backend_xid IS NOT NULL`,
      [host.ip],
    );
    return Number(res.rows[0]?.n ?? 0);
  }

  /** Blocks whose rows more than one transaction wrote. */
  async function writtenTwice(): Promise<string[]> {
    const res = await sql.query<{ block_number: string; n: string }>(
      `SELECT block_number, count(DISTINCT xid) AS n FROM partition_writes
       GROUP BY block_number HAVING count(DISTINCT xid) > 1 ORDER BY block_number`,
    );
    return res.rows.map((r) => `block ${r.block_number} × ${r.n}`);
  }

  /**
   * Task ids of `units` (every attempt: the ids end in -<attempt>) that two workers ran (`twice`), and the
   * succeeded units whose worker does not say so (`unseen`: were there any, the asking would be blind).
   */
  async function onTwoWorkers(units: readonly Unit[]): Promise<{ twice: string[]; unseen: string[] }> {
    const ids = units.flatMap((u) => {
      const m = /^(.*-)(\d+)$/.exec(u.taskId ?? '');
      return m === null ? [] : Array.from({ length: Number(m[2]) }, (_, i) => `${m[1]}${i + 1}`);
    });
    const statesOf = await taskStatesOn(client, cluster.workers, ids);
    const twice: string[] = [];
    for (const [taskId, states] of statesOf) {
      const ran = states.filter(
        (x) => x.state === TaskState.RUNNING || isTerminalState(x.state as TaskState),
      );
      if (ran.length >= 2) twice.push(`${taskId}: ${JSON.stringify(states)}`);
      else if (states.length >= 2)
        console.log(`  ${taskId} known to two workers, run on one: ${JSON.stringify(states)}`);
    }
    const unseen = units
      .filter((u) => u.state === 'SUCCEEDED' && u.taskId !== undefined)
      .filter((u) => !statesOf.get(u.taskId!)?.some((x) => x.addr === u.workerAddr && x.state === u.state))
      .map((u) => `${u.taskId} on ${u.workerAddr}: ${JSON.stringify(statesOf.get(u.taskId!))}`);
    return { twice, unseen };
  }

  /** Every worker back in the coordinator's view, routable, with nothing running and no slot held. */
  async function nothingStuck(): Promise<void> {
    await eventually(
      async () => {
        const view = await cluster.status();
        expect(view.workers.map((w) => [w.workerAddr, w.routable, w.runningTasks, w.reservedSlots])).toEqual(
          cluster.workers.map((w) => [w.addr, true, 0, 0]).sort(),
        );
      },
      { timeoutMs: 30_000, intervalMs: 250, message: 'every worker routable and idle after the job' },
    );
  }

  /**
   * Runs the job; after CUT_AFTER_UNITS units (and `ready`, if given) applies `cut`, runs `during` half-way
   * through the partition, heals after `cutMs` (PARTITION_MS) and waits for the job to end.
   */
  async function partitionedJob(
    name: string,
    cutWorker: NetHost | undefined,
    cut: () => void,
    hooks: {
      ready?: () => Promise<void>;
      during?: () => Promise<void>;
      beforeHeal?: () => Promise<void>;
      template?: string;
      cutMs?: number;
    } = {},
  ): Promise<JobRun> {
    const cutMs = hooks.cutMs ?? PARTITION_MS;
    const child = cluster.spawnCli(backfillArgs(name, hooks.template));
    const job = followJob(child);
    await job.reached(CUT_AFTER_UNITS);
    await hooks.ready?.();
    const cutAt = Date.now();
    cut();
    await sleep(cutMs / 2);
    await hooks.during?.();
    await sleep(cutAt + cutMs - Date.now() - 1_000);
    await hooks.beforeHeal?.();
    await sleep(cutAt + cutMs - Date.now());
    net.healAll();
    const healedAt = Date.now();
    const timer = setTimeout(() => child.kill('SIGKILL'), JOB_TIMEOUT_MS);
    const run = await job.done();
    clearTimeout(timer);
    const addr = cutWorker === undefined ? undefined : workerAddrOf(cutWorker);
    const onCut = run.units.filter((u) => u.workerAddr === addr);
    console.log(
      `${name}: exit ${run.code}, job ${String(run.summary?.seconds)} s, ended ${Date.now() - healedAt} ms after ` +
        `the heal; units ${run.units.length} (during the cut ${run.units.filter((u) => u.at >= cutAt && u.at < healedAt).length}, ` +
        `after the heal ${run.units.filter((u) => u.at >= healedAt).length}); on the cut worker ${onCut.length} ` +
        `(during ${onCut.filter((u) => u.at >= cutAt && u.at < healedAt).length}, after the heal ` +
        `${onCut.filter((u) => u.at >= healedAt).length}); attempts ${String(run.summary?.attempts)}`,
    );
    return run;
  }

  async function expectCompleteAndExact(run: JobRun, allUnits: readonly Unit[] = run.units): Promise<void> {
    expect(run.code, `${run.stderr}\n${cluster.output()}`).toBe(0);
    expect(run.summary).toMatchObject({ blocks: BLOCKS, failed: 0, remaining: 0 });
    const rows = await tableRows();
    const twice = await writtenTwice();
    const askedAt = Date.now();
    const ran = await onTwoWorkers(allUnits);
    console.log(
      `  rows ${rows.length}/${expected.length}; blocks written twice ${twice.length}; ids on two workers ` +
        `${ran.twice.length} (asked in ${Date.now() - askedAt} ms)`,
    );
    expect(rows).toEqual(expected);
    expect(twice.slice(0, 5)).toEqual([]);
    expect(ran.twice.slice(0, 5)).toEqual([]);
    expect(ran.unseen.slice(0, 5)).toEqual([]);
    await nothingStuck();
  }

  it('a worker cut from the coordinator (not from etcd or its clients) for 6 s', async () => {
    const w = workerHosts[0]!;
    let during = '';
    const run = await partitionedJob('cut-coordinator', w, () => net.cut(w, hosts.coordinator), {
      during: async () => {
        const row = (await cluster.status()).workers.find((x) => x.workerAddr === workerAddrOf(w));
        during = `breaker ${row?.breakerState}, failures ${row?.consecutiveFailures}, routable ${row?.routable}`;
      },
    });
    console.log(`  the cut worker in the coordinator's view half-way: ${during}`);
    await expectCompleteAndExact(run);
  }, 240_000);

  it('a worker cut from etcd (not from the coordinator or its clients) for 6 s: out of the view, then back', async () => {
    const w = workerHosts[1]!;
    let during: { routable: boolean; reason: string; atMs: number } | undefined;
    let cutAt = 0;
    const run = await partitionedJob(
      'cut-etcd',
      w,
      () => {
        cutAt = Date.now();
        net.cut(w, hosts.etcd);
      },
      {
        // From half-way until 1 s before the heal, until the coordinator's view drops it.
        during: async () => {
          do {
            const row = (await cluster.status()).workers.find((x) => x.workerAddr === workerAddrOf(w));
            const reason = row?.notRoutableReason ?? 'not in the view';
            during = { routable: row?.routable ?? false, reason, atMs: Date.now() - cutAt };
            if (!during.routable) return;
            await sleep(100);
          } while (Date.now() < cutAt + PARTITION_MS - 1_000);
        },
      },
    );
    console.log(`  the cut worker in the coordinator's view during the cut: ${JSON.stringify(during)}`);
    // Its heartbeats stop reaching the registry: after the heartbeat timeout it is not placed on.
    expect(during?.routable).toBe(false);
    await expectCompleteAndExact(run);
  }, 240_000);

  it('a worker cut from PostgreSQL while it holds a write transaction open, for 10 s: the server aborts it', async () => {
    const w = workerHosts[2]!;
    let heldHalfWay = 0;
    let heldAtHeal = 0;
    const run = await partitionedJob('cut-storage', w, () => net.cut(w, hosts.pg), {
      // Cut the moment the server shows a write transaction of this worker's.
      ready: async () => {
        await eventually(async () => (await openTransactionsOf(w)) > 0, { timeoutMs: 30_000, intervalMs: 1 });
      },
      during: async () => void (heldHalfWay = await openTransactionsOf(w)),
      beforeHeal: async () => void (heldAtHeal = await openTransactionsOf(w)),
      cutMs: STORAGE_PARTITION_MS,
    });
    console.log(
      `  transactions of the cut worker open on the server: half-way ${heldHalfWay}, 1 s before the heal ${heldAtHeal}`,
    );
    // storage.lostClientTimeoutMs (LOST_CLIENT_TIMEOUT_MS) after the worker went silent, the server gave up
    // on it and freed its locks (docs/storage.md § A lost connection).
    expect(heldAtHeal).toBe(0);
    await expectCompleteAndExact(run);
  }, 240_000);

  it('a worker cut from PostgreSQL for longer than the task deadline', async () => {
    const w = workerHosts[2]!;
    const template = path.join(stateRoot, 'short-deadline.json');
    const doc = JSON.parse(readFileSync(TEMPLATE, 'utf8')) as Record<string, unknown>;
    writeFileSync(template, JSON.stringify({ ...doc, taskTimeoutMs: SHORT_DEADLINE_MS }));
    const run = await partitionedJob('cut-storage-past-deadline', w, () => net.cut(w, hosts.pg), {
      template,
      cutMs: STORAGE_PARTITION_MS,
      ready: async () => {
        await eventually(async () => (await openTransactionsOf(w)) > 0, { timeoutMs: 30_000, intervalMs: 1 });
      },
    });
    await expectCompleteAndExact(run);
  }, 240_000);

  it('a worker cut from every host for 6 s', async () => {
    const w = workerHosts[0]!;
    const run = await partitionedJob('isolated-worker', w, () => net.isolate(w));
    await expectCompleteAndExact(run);
  }, 240_000);

  it('a client cut from the coordinator: blockx submit ends by itself with an error naming it', async () => {
    net.cut(hosts.client, hosts.coordinator);
    const started = Date.now();
    const r = await cluster.cli(['submit', path.join(REPO, 'examples/tasks/hello-world.json')], {
      timeoutMs: 120_000,
    });
    console.log(`  submit: exit ${r.code} after ${Date.now() - started} ms: ${r.stderr.trim().slice(-800)}`);
    net.healAll();
    expect(r.code).not.toBeNull();
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`cannot reach the coordinator at ${cluster.coordinatorAddr}`);
  }, 180_000);

  it('the client cut from every host mid-backfill for 6 s, then run again: resumes, nothing twice', async () => {
    const run = await partitionedJob('isolated-client', undefined, () => net.isolate(hosts.client));
    console.log(`  client stderr: ${run.stderr.trim().slice(-600)}`);
    const rerun = await cluster.cli(backfillArgs('isolated-client'), { timeoutMs: JOB_TIMEOUT_MS });
    const again = summaryOf(rerun.stdout);
    console.log(`  rerun: exit ${rerun.code}, ${JSON.stringify(again)}`);
    expect(rerun.code, rerun.stderr).toBe(0);
    // The first run rode the partition out: the rerun has nothing left to do.
    expect(again).toMatchObject({ skipped: BLOCKS, attempts: 0 });
    await expectCompleteAndExact(run, [...run.units, ...parseUnits(rerun.stdout.split('\n'), Date.now())]);
  }, 300_000);
});
