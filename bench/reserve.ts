// bench/reserve: ReserveWorkerSlot through a real Coordinator with 3 real Workers, beside a raw grpc-js
// unary echo measured in the same run, plus the cost of CoordinatorCore.selectCandidate at 10, 1,000 and
// 10,000 Workers. Prints markdown tables.
//
//   npx tsx bench/reserve.ts [--seconds 5] [--warmup 1] [--runs 3] [--inflight 16] [--select-ms 500]
//
// Setup (one process, one event loop, loopback gRPC; BlockX from dist/ when built, lib/built.ts): a real etcd (test/support/etcd.ts), 3 Workers
// (runWorker, heartbeats through EtcdRegistryWriter every 200 ms) and a Coordinator (runCoordinator
// watching etcd) in this process, and the clients too. The echo server and its client live in the same
// process as well, so both sides pay the same scheduling. Every reservation uses a unique task id and a
// 10 s deadline, as the TypeScript client sends it; the slots come back through their TTL
// (WORKER_TASK_SLOTS 1,000,000, COORDINATOR_SLOT_TTL_MS 1000). It installs the lean AsyncResource#bind
// (src/grpc/lean-bind.ts) process-wide as the entry points do, so the raw rows' grpc-js clients use it too:
// the header line says which bind the run used.
// A reservation is two unary round trips (client → Coordinator → Worker RequestTaskSlot → back), so
// the floor is ~2× raw unary. Goal (issue 6): reservation p50 ≤ 2.5 × raw unary p50.
//
// Sequential rows (1 in flight, unloaded latency) are measured call by call, interleaved: each round
// makes one call of every row, in a fresh random order, so every row sees the same moments of this shared
// box (whose speed drifts by 2× within minutes), and the work a call leaves behind (stream cleanup after
// the answer) lands after a random row rather than always the same one. `--runs` windows of `--seconds`
// each give the per-run ratios; the table pools them. Loaded rows (`--inflight` closed loops, throughput)
// run one row at a time, `--runs` rounds in a fresh random order each.
//
// Rows: RequestTaskSlot straight to one worker shows what one protobuf leg with a real handler costs; a
// raw relay (an echo server whose handler calls a second echo server) is grpc-js's own two-hop floor.
// selectCandidate: a view of N fresh Workers with varied capacity, called repeatedly with no exclusions
// and with 2 excluded; ns per call. One O(n) scan, so the cost should grow linearly with N.
import * as grpc from '@grpc/grpc-js';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type * as ChannelOptionsModule from '../src/grpc/channel-options.js';
import type * as ClientsModule from '../src/grpc/clients.js';
import type {
  RequestTaskSlotResponseWireOut,
  ReserveWorkerSlotResponseWireOut,
} from '../src/grpc/wire-types.js';
import type * as KernelModule from '../src/kernel/kernel.js';
import type * as LeanBindModule from '../src/grpc/lean-bind.js';
import type * as RunCoordinatorModule from '../src/services/coordinator/app/run-coordinator.js';
import type * as CoordinatorCoreModule from '../src/services/coordinator/core/index.js';
import type * as EtcdWriterModule from '../src/services/registry/etcd-registry-writer.js';
import type { WorkerHeartbeat } from '../src/contracts/heartbeat.js';
import type * as RunWorkerModule from '../src/services/worker/app/run-worker.js';
import type { RunningWorker } from '../src/services/worker/app/run-worker.js';
import { startEtcd } from '../test/support/etcd.js';
import { builtLabel, loadBuilt } from './lib/built.js';
import { EchoClient, startEcho, startEchoRelay } from './lib/grpc-echo.js';

// BlockX as deployed (dist/ when built), every module from the same side: see lib/built.ts.
const { CLIENT_CHANNEL_OPTIONS } = await loadBuilt<typeof ChannelOptionsModule>('grpc/channel-options');
const { createCoordinatorClient, createWorkerClient, unaryCall } =
  await loadBuilt<typeof ClientsModule>('grpc/clients');
const { installLeanAsyncResourceBind, leanAsyncResourceBindInstalled } =
  await loadBuilt<typeof LeanBindModule>('grpc/lean-bind');
// As the entry points (`blockx`, `blockx/client`, the CLI) do: this bench loads single modules.
installLeanAsyncResourceBind();
const { bootKernel } = await loadBuilt<typeof KernelModule>('kernel/kernel');
const { runCoordinator } = await loadBuilt<typeof RunCoordinatorModule>(
  'services/coordinator/app/run-coordinator',
);
const { CoordinatorCore, DEFAULT_COORDINATOR_CORE_CONFIG } = await loadBuilt<typeof CoordinatorCoreModule>(
  'services/coordinator/core/index',
);
const { EtcdRegistryWriter } = await loadBuilt<typeof EtcdWriterModule>(
  'services/registry/etcd-registry-writer',
);
const { runWorker } = await loadBuilt<typeof RunWorkerModule>('services/worker/app/run-worker');

const REPO = path.resolve(import.meta.dirname, '..');

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '1' },
    inflight: { type: 'string', default: '16' },
    'select-ms': { type: 'string', default: '500' },
    runs: { type: 'string', default: '3' },
  },
});
const SECONDS = Number(args.seconds);
const WARMUP = Number(args.warmup);
const INFLIGHT = Number(args.inflight);
const SELECT_MS = Number(args['select-ms']);
const RUNS = Number(args.runs);

interface Measurement {
  readonly ops: number;
  readonly seconds: number;
  readonly sorted: number[];
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

/** `clients` closed loops of `op`; WARMUP s discarded, then SECONDS s recorded. */
async function measure(clients: number, op: () => Promise<void>): Promise<Measurement> {
  const latencies: number[] = [];
  let recording = false;
  let stop = false;
  let ops = 0;
  const loop = async (): Promise<void> => {
    while (!stop) {
      const t0 = performance.now();
      await op();
      if (recording) {
        latencies.push(performance.now() - t0);
        ops++;
      }
    }
  };
  const loops = Array.from({ length: clients }, () => loop());
  await sleep(WARMUP * 1000);
  recording = true;
  const start = performance.now();
  await sleep(SECONDS * 1000);
  recording = false;
  const seconds = (performance.now() - start) / 1000;
  stop = true;
  await Promise.all(loops);
  return { ops, seconds, sorted: latencies.sort((a, b) => a - b) };
}

/** Fisher-Yates, in place. */
function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

/**
 * One call of every op per round, in a fresh random order, for `seconds` (after `warmup` s of the same,
 * discarded). A row's `seconds` is the time its own calls took, so its ops/s is its sequential rate.
 */
async function measureInterleaved(
  ops: readonly (readonly [string, () => Promise<void>])[],
  warmup: number,
  seconds: number,
): Promise<Map<string, Measurement>> {
  const latencies = new Map<string, number[]>(ops.map(([name]) => [name, []]));
  const order = [...ops];
  for (const [phase, budget] of [
    ['warmup', warmup],
    ['record', seconds],
  ] as const) {
    const start = performance.now();
    while (performance.now() - start < budget * 1000) {
      for (const [name, op] of shuffle(order)) {
        const t0 = performance.now();
        await op();
        if (phase === 'record') latencies.get(name)?.push(performance.now() - t0);
      }
    }
  }
  return new Map(
    [...latencies].map(([name, l]) => [
      name,
      { ops: l.length, seconds: l.reduce((a, b) => a + b, 0) / 1000, sorted: l.sort((a, b) => a - b) },
    ]),
  );
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

// ---- raw unary echo ---------------------------------------------------------------------------------

// ---- selectCandidate --------------------------------------------------------------------------------

function heartbeats(n: number, now: number): WorkerHeartbeat[] {
  let seed = 42;
  const rnd = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  return Array.from({ length: n }, (_, i) => {
    const taskSlots = 8 + Math.floor(rnd() * 57);
    return {
      workerAddr: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:9090`,
      taskSlots,
      reservedSlots: Math.floor(rnd() * taskSlots),
      runningTasks: 0,
      cpuPercent: rnd() * 0.8,
      memoryPercent: rnd() * 0.8,
      memoryAvailableBytes: 1 << 30,
      memoryTotalBytes: 2 << 30,
      processRssBytes: 1 << 28,
      errorRate: 0,
      lastHeartbeatMs: now - Math.floor(rnd() * 1000),
    };
  });
}

function selectCost(n: number, excluded: number): { nsPerCall: number; calls: number } {
  const now = 1_700_000_000_000;
  const core = new CoordinatorCore(DEFAULT_COORDINATOR_CORE_CONFIG);
  const list = heartbeats(n, now);
  core.applyFullWorkerList(list, now);
  const exclude = list.slice(0, excluded).map((h) => h.workerAddr);
  const first = core.selectCandidate('t', exclude, now);
  if (!first.ok) throw new Error(`selectCandidate failed at n=${n}: ${first.error.message}`);
  // Warm up, then run batches until SELECT_MS have passed.
  for (let i = 0; i < 200; i++) core.selectCandidate('t', exclude, now);
  let calls = 0;
  const batch = Math.max(1, Math.floor(200_000 / n));
  const t0 = process.hrtime.bigint();
  const budget = BigInt(SELECT_MS) * 1_000_000n;
  while (process.hrtime.bigint() - t0 < budget) {
    for (let i = 0; i < batch; i++) core.selectCandidate('t', exclude, now);
    calls += batch;
  }
  const ns = Number(process.hrtime.bigint() - t0);
  return { nsPerCall: ns / calls, calls };
}

// ---- main -------------------------------------------------------------------------------------------

const fmt = (ms: number): string => (ms < 1 ? ms.toFixed(3) : ms.toFixed(2));
const row = (name: string, m: Measurement): string =>
  `| ${name} | ${Math.round(m.ops / m.seconds).toLocaleString('en-US')} | ${fmt(percentile(m.sorted, 50))} | ${fmt(percentile(m.sorted, 99))} |`;

async function main(): Promise<void> {
  const etcd = await startEtcd();
  const workers: RunningWorker[] = [];
  let coordinator: Awaited<ReturnType<typeof runCoordinator>> | undefined;
  const echo = await startEcho();
  const relay = await startEchoRelay(echo.addr);
  try {
    const env = {
      ETCD_ENDPOINTS: etcd.endpoint,
      WORKER_TASK_SLOTS: '100000', // the schema's maximum (docs/security.md § The registry)
      COORDINATOR_LISTEN: '127.0.0.1:0',
      COORDINATOR_SLOT_TTL_MS: '1000',
      // Real host figures are published; a busy bench box must not filter its own workers.
      COORDINATOR_CPU_RED_LINE: '1',
      COORDINATOR_MEMORY_RED_LINE: '1',
      BLOCKX_LOG_LEVEL: 'warn',
    };
    const kernel = await bootKernel({
      configPath: path.join(REPO, 'blockx.config.yaml'),
      cwd: REPO,
      env,
      deployments: ['block'],
    });
    const { config } = kernel;
    for (let i = 0; i < 3; i++) {
      workers.push(
        await runWorker({
          config,
          deployment: 'block',
          plugins: kernel.plugins,
          listen: '127.0.0.1:0',
          registryWriter: new EtcdRegistryWriter({
            endpoints: [etcd.endpoint],
            leaseTtlMs: config.registry.etcd.leaseTtlMs,
          }),
        }),
      );
    }
    coordinator = await runCoordinator({ config, deployment: 'block' });
    const started = Date.now();
    while (coordinator.watcherStats().workers < 3 || !coordinator.isReady()) {
      if (Date.now() - started > 15_000) throw new Error('the coordinator did not see 3 workers');
      await sleep(20);
    }

    const coordClient = createCoordinatorClient(coordinator.address);
    const echoClient = new EchoClient(echo.addr, grpc.credentials.createInsecure(), CLIENT_CHANNEL_OPTIONS);
    const payload = Buffer.from('{"taskId":"bench-0000000000"}');
    const relayClient = new EchoClient(relay.addr, grpc.credentials.createInsecure(), CLIENT_CHANNEL_OPTIONS);
    const relayOp = (): Promise<void> =>
      new Promise((resolve, reject) => relayClient.Echo(payload, (e) => (e ? reject(e) : resolve())));
    const echoOp = (): Promise<void> =>
      new Promise((resolve, reject) => echoClient.Echo(payload, (e) => (e ? reject(e) : resolve())));
    let seq = 0;
    const perWorker = new Map<string, number>();
    const reserveOp = async (): Promise<void> => {
      const taskId = `bench-${++seq}`;
      const r = await unaryCall<ReserveWorkerSlotResponseWireOut>(
        (md, o, cb) => coordClient.reserveWorkerSlot({ taskId }, md, o, cb),
        { timeoutMs: 10_000 },
      );
      perWorker.set(r.workerAddr, (perWorker.get(r.workerAddr) ?? 0) + 1);
    };

    // One leg of a reservation on its own: RequestTaskSlot straight to a worker (protobuf, real handler).
    const workerClient = createWorkerClient(workers[0]?.address ?? '');
    const slotOp = async (): Promise<void> => {
      const taskId = `direct-${++seq}`;
      await unaryCall<RequestTaskSlotResponseWireOut>(
        (md, o, cb) => workerClient.requestTaskSlot({ taskId, ttlMs: 1000 }, md, o, cb),
        { timeoutMs: 10_000 },
      );
    };

    const loadBefore = loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
    const sequential: [string, () => Promise<void>][] = [
      ['echo1', echoOp],
      ['relay1', relayOp],
      ['slot1', slotOp],
      ['res1', reserveOp],
    ];
    const loaded: [string, () => Promise<void>][] = [
      ['echoN', echoOp],
      ['relayN', relayOp],
      ['resN', reserveOp],
    ];
    const runs = new Map<string, Measurement[]>();
    const record = (name: string, m: Measurement): void => {
      runs.set(name, [...(runs.get(name) ?? []), m]);
    };
    for (let run = 0; run < RUNS; run++) {
      for (const [name, m] of await measureInterleaved(sequential, WARMUP, SECONDS)) record(name, m);
    }
    for (let run = 0; run < RUNS; run++) {
      for (const [name, op] of shuffle([...loaded])) record(name, await measure(INFLIGHT, op));
    }
    const pooled = (name: string): Measurement => {
      const ms = runs.get(name) ?? [];
      return {
        ops: ms.reduce((a, m) => a + m.ops, 0),
        seconds: ms.reduce((a, m) => a + m.seconds, 0),
        sorted: ms.flatMap((m) => m.sorted).sort((a, b) => a - b),
      };
    };
    const [echo1, relay1, slot1, res1, echoN, relayN, resN] = [
      'echo1',
      'relay1',
      'slot1',
      'res1',
      'echoN',
      'relayN',
      'resN',
    ].map(pooled) as [
      Measurement,
      Measurement,
      Measurement,
      Measurement,
      Measurement,
      Measurement,
      Measurement,
    ];

    const selects = [10, 1_000, 10_000].map((n) => ({
      n,
      none: selectCost(n, 0),
      two: selectCost(n, 2),
    }));

    const ratio1 = percentile(res1.sorted, 50) / percentile(echo1.sorted, 50);
    const ratioN = percentile(resN.sorted, 50) / percentile(echoN.sorted, 50);
    const cpu = cpus()[0]?.model ?? 'unknown cpu';
    console.log(`\n## bench/reserve (${cpus().length} × ${cpu}, node ${process.version})\n`);
    console.log(
      `1 in flight: ${RUNS} runs × ${SECONDS} s of rounds of one call per row in random order (after ${WARMUP} s warm-up each); ${INFLIGHT} in flight: ${RUNS} rounds × ${SECONDS} s per row in random order (after ${WARMUP} s warm-up each); latencies pooled over the runs; ${builtLabel()}; AsyncResource#bind: ${leanAsyncResourceBindInstalled() ? 'lean (src/grpc/lean-bind.ts)' : "Node's own"}; load average at the start: ${loadBefore}.\n`,
    );
    console.log('| row | ops/s | p50 ms | p99 ms |');
    console.log('|---|---:|---:|---:|');
    console.log(row('raw unary echo, 1 in flight', echo1));
    console.log(row('raw relay (echo → echo, two hops), 1 in flight', relay1));
    console.log(row('RequestTaskSlot direct to a worker, 1 in flight', slot1));
    console.log(row('ReserveWorkerSlot, 1 in flight', res1));
    console.log(row(`raw unary echo, ${INFLIGHT} in flight`, echoN));
    console.log(row(`raw relay (echo → echo, two hops), ${INFLIGHT} in flight`, relayN));
    console.log(row(`ReserveWorkerSlot, ${INFLIGHT} in flight`, resN));
    console.log(
      `\nreservation p50 / raw unary p50: ${ratio1.toFixed(2)}× sequential, ${ratioN.toFixed(2)}× at ${INFLIGHT} in flight (goal ≤ 2.5×: ${ratio1 <= 2.5 ? 'met' : 'NOT met'} sequential, ${ratioN <= 2.5 ? 'met' : 'NOT met'} loaded)`,
    );
    // A reservation is two hops (client → Coordinator → Worker). The raw relay is the same shape with no
    // protobuf and no logic: grpc-js's own floor for it, beside which the Coordinator's cost shows.
    const relayRatio1 = percentile(relay1.sorted, 50) / percentile(echo1.sorted, 50);
    const relayRatioN = percentile(relayN.sorted, 50) / percentile(echoN.sorted, 50);
    console.log(
      `raw relay p50 / raw unary p50 (the two-hop floor): ${relayRatio1.toFixed(2)}× sequential, ${relayRatioN.toFixed(2)}× at ${INFLIGHT} in flight; ` +
        `reservation p50 / raw relay p50: ${(ratio1 / relayRatio1).toFixed(2)}× sequential, ${(ratioN / relayRatioN).toFixed(2)}× at ${INFLIGHT} in flight`,
    );
    // The box is shared and its speed drifts between rows; each run's rows are adjacent in time, so the
    // ratio within a run is steadier than across the pooled figures. Their spread shows the noise.
    const perRun = (res: string, base: string): string => {
      const ratios = (runs.get(res) ?? [])
        .map((m, i) => percentile(m.sorted, 50) / percentile(runs.get(base)![i]!.sorted, 50))
        .sort((x, y) => x - y);
      return `median ${ratios[ratios.length >> 1]!.toFixed(2)}× (runs: ${ratios.map((r) => r.toFixed(2)).join(', ')})`;
    };
    console.log(
      `per run, reservation p50 / raw unary p50: sequential ${perRun('res1', 'echo1')}; ${INFLIGHT} in flight ${perRun('resN', 'echoN')}`,
    );
    console.log(
      `reservations per worker: ${[...perWorker.values()].map((v) => v.toLocaleString('en-US')).join(' / ')}`,
    );

    console.log('\n| workers | selectCandidate ns/call | with 2 excluded ns/call | ns per worker |');
    console.log('|---:|---:|---:|---:|');
    for (const s of selects) {
      console.log(
        `| ${s.n.toLocaleString('en-US')} | ${Math.round(s.none.nsPerCall).toLocaleString('en-US')} | ${Math.round(s.two.nsPerCall).toLocaleString('en-US')} | ${(s.none.nsPerCall / s.n).toFixed(1)} |`,
      );
    }
    const [a, , c] = selects;
    if (a !== undefined && c !== undefined) {
      console.log(
        `\n10 → 10,000 workers (×1,000): cost ×${(c.none.nsPerCall / a.none.nsPerCall).toFixed(0)} (linear scan: O(n)).`,
      );
    }
    coordClient.close();
    workerClient.close();
    echoClient.close();
  } finally {
    await coordinator?.close();
    for (const w of workers) await w.close();
    relay.stop();
    echo.stop();
    await etcd.stop();
  }
}

await main();
process.exit(0);
