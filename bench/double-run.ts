// bench/double-run: how often a task sent twice runs on two Workers, under each placement policy
// (docs/placement.md), measured in the same run on real processes: one etcd, and for each policy a
// cluster of `blockx coordinator` + 3 `blockx worker` (test/support/cluster.ts) with
// COORDINATOR_PLACEMENT set. Every task id is run twice through BlockxClient.run (reserve → submit →
// watch), the second run starting 0-`--max-gap-ms` ms after the first, a few task ids in flight at a time.
// A task ran twice when two Workers know it: each Worker is asked GetTaskResult for every task id.
//
//   npx tsx bench/double-run.ts [--tasks 150] [--max-gap-ms 600] [--in-flight 8] [--workers 3]
//
// Prints a markdown table. Goal (issue 14): below 1 % with affinity. `measureDoubleRuns` and
// `reserveBurst` are also used by test/e2e/placement.test.ts.
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { BlockxClient } from '../src/client/client.js';
import { createCoordinatorClient, unaryCall } from '../src/grpc/clients.js';
import type { ReserveWorkerSlotResponseWireOut } from '../src/grpc/wire-types.js';
import { startEtcd } from '../test/support/etcd.js';
import type { EtcdServer } from '../test/support/etcd.js';
import { startCluster } from '../test/support/cluster.js';
import type { TestCluster } from '../test/support/cluster.js';

export type Placement = 'capacity' | 'affinity';

export interface DoubleRunReport {
  readonly tasks: number;
  /** Task ids known to two or more Workers. */
  readonly doubleRuns: number;
  /** Runs that failed to place or finish (they count neither way). */
  readonly failedRuns: number;
  readonly seconds: number;
}

const HELLO = {
  functionCallConfig: {
    type: 'CallListCallConfig',
    config: { function: 'hello_world', callList: [['ct2']] },
  },
  resultHandler: { type: 'ReturnValueResultHandler', config: {} },
  taskTimeoutMs: 30_000,
};

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Starts a cluster of `workers` whose coordinator uses `placement`. */
export function placementCluster(placement: Placement, etcd: EtcdServer, workers = 3): Promise<TestCluster> {
  return startCluster({ workers, etcd, env: { COORDINATOR_PLACEMENT: placement } });
}

/** Runs each of `tasks` task ids twice (the second 0-maxGapMs after the first) and counts double runs. */
export async function measureDoubleRuns(
  cluster: TestCluster,
  opts: { tasks: number; maxGapMs: number; inFlight: number; label: string; random?: () => number },
): Promise<DoubleRunReport> {
  const random = opts.random ?? Math.random;
  const client = new BlockxClient({ coordinator: cluster.coordinatorAddr, rpcTimeoutMs: 10_000 });
  const started = Date.now();
  let failedRuns = 0;
  const run = (taskId: string): Promise<void> =>
    client.run({ taskId, ...HELLO }).then(
      () => undefined,
      () => void (failedRuns += 1),
    );
  const ids = Array.from({ length: opts.tasks }, (_, i) => `${opts.label}-${started}-${i}`);
  try {
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < ids.length) {
        const taskId = ids[next++]!;
        const first = run(taskId);
        await sleep(Math.floor(random() * (opts.maxGapMs + 1)));
        await Promise.all([first, run(taskId)]);
      }
    };
    await Promise.all(Array.from({ length: opts.inFlight }, lane));
    let doubleRuns = 0;
    for (const taskId of ids) {
      const known = await Promise.all(
        cluster.workers.map((w) =>
          client.getResult(taskId, { workerAddr: w.addr }).then(
            () => 1,
            () => 0,
          ),
        ),
      );
      if (known.reduce((a: number, b) => a + b, 0) >= 2) doubleRuns += 1;
    }
    return { tasks: ids.length, doubleRuns, failedRuns, seconds: (Date.now() - started) / 1000 };
  } finally {
    client.close();
  }
}

/** `n` concurrent ReserveWorkerSlot calls; resolves with the Worker each one got (or the error). */
export async function reserveBurst(coordinatorAddr: string, n: number, label: string): Promise<string[]> {
  const coordinator = createCoordinatorClient(coordinatorAddr);
  try {
    return await Promise.all(
      Array.from({ length: n }, (_, i) =>
        unaryCall<ReserveWorkerSlotResponseWireOut>(
          (md, o, cb) => coordinator.reserveWorkerSlot({ taskId: `${label}-${i}` }, md, o, cb),
          { timeoutMs: 10_000 },
        ).then(
          (r) => r.workerAddr,
          (err: unknown) => `error: ${err instanceof Error ? err.message : String(err)}`,
        ),
      ),
    );
  } finally {
    coordinator.close();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      tasks: { type: 'string', default: '150' },
      'max-gap-ms': { type: 'string', default: '600' },
      'in-flight': { type: 'string', default: '8' },
      workers: { type: 'string', default: '3' },
    },
  });
  const opts = {
    tasks: Number(values.tasks),
    maxGapMs: Number(values['max-gap-ms']),
    inFlight: Number(values['in-flight']),
  };
  const etcd = await startEtcd();
  const rows: string[] = [];
  try {
    for (const placement of ['capacity', 'affinity'] as const) {
      const cluster = await placementCluster(placement, etcd, Number(values.workers));
      try {
        const r = await measureDoubleRuns(cluster, { ...opts, label: placement });
        const rate = ((100 * r.doubleRuns) / r.tasks).toFixed(1);
        rows.push(
          `| ${placement} | ${r.tasks} | ${r.doubleRuns} | ${rate} % | ${r.failedRuns} | ${r.seconds.toFixed(1)} |`,
        );
      } finally {
        await cluster.stop();
      }
    }
  } finally {
    await etcd.stop();
  }
  console.log(
    `\n${values.workers} workers, each task id sent twice 0-${opts.maxGapMs} ms apart, ${opts.inFlight} task ids in flight\n`,
  );
  console.log('| placement | tasks | ran on two workers | rate | failed runs | seconds |');
  console.log('|---|---|---|---|---|---|');
  for (const row of rows) console.log(row);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
