// bench/tls: what mutual TLS costs (docs/security.md § TLS and authentication). Two `blockx up --no-demo`
// clusters run side by side in one run, the same in every way except that one has `tls` on (certificates
// from the development CA, src/cli/certs/dev-ca.ts); every row is measured on both, interleaved, and
// the table gives TLS / plaintext ratios. Goal (issue 16): ≥ 0.9× for throughput, and reservation p50
// within 1/0.9 of plaintext.
//
//   npx tsx bench/tls.ts [--seconds 3] [--warmup 1] [--runs 3] [--workers 2] [--bulk 20000] [--clients 64]
//
// Rows:
//  - ReserveWorkerSlot through the Coordinator, 1 in flight: one call on each cluster per round, in a
//    random order, for `--seconds` per run (connections stay open: the handshake is paid once);
//  - runMany of `--bulk` empty tasks through the Coordinator (the batched path; bench/bullmq's headline),
//    and `--clients` producers of run() coalesced onto the batched path (closed loop);
//  - the first call on a new client (a TLS handshake and an HTTP/2 connection), 1 in flight.
// Runs alternate between the clusters (plain, TLS, TLS, plain, ...) so drift of this shared box falls on
// both alike; medians over `--runs` are shown.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { BlockxClient, type BlockxClientOptions, type ClientTaskInput } from '../src/client/index.js';
import { createCoordinatorClient, unaryCall } from '../src/grpc/clients.js';
import type { ReserveWorkerSlotResponseWireOut } from '../src/grpc/wire-types.js';
import type { TlsMaterial } from '../src/kernel/tls-files.js';
import {
  bulkRun,
  closedLoop,
  fmtInt,
  fmtMs,
  median,
  percentile,
  summarize,
  type LoopMeasurement,
  type RunSummary,
} from './lib/closed-loop.js';
import { loopbackTls } from '../test/support/certs.js';
import { stopChild, waitForLine } from './lib/child.js';
import { REPO } from './lib/on-demand.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '1' },
    runs: { type: 'string', default: '3' },
    workers: { type: 'string', default: '2' },
    bulk: { type: 'string', default: '20000' },
    clients: { type: 'string', default: '64' },
  },
});
const SECONDS = Number(values.seconds);
const WARMUP = Number(values.warmup);
const RUNS = Math.max(1, Number(values.runs));
const WORKERS = Number(values.workers);
const BULK = Number(values.bulk);
const CLIENTS = Number(values.clients);

const EMPTY_TASK: ClientTaskInput = {
  functionCallConfig: { type: 'CallListCallConfig', config: { function: 'hello_world', callList: [] } },
};

interface Cluster {
  readonly name: 'plaintext' | 'TLS';
  readonly coordinator: string;
  readonly tls: TlsMaterial | undefined;
  readonly child: ChildProcess;
}

async function startCluster(name: Cluster['name'], tlsEnv: Record<string, string>, tls?: TlsMaterial) {
  const child = spawn(
    process.execPath,
    [
      path.join(REPO, 'bin', 'blockx.js'),
      'up',
      '--no-demo',
      '--listen',
      '127.0.0.1:0',
      '--workers',
      String(WORKERS),
    ],
    {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'inherit'],
      env: {
        ...process.env,
        COORDINATOR_CPU_RED_LINE: '1',
        COORDINATOR_MEMORY_RED_LINE: '1',
        // Sequential reservations hold their slots for the slot TTL (5 s): room for them (the schema's
        // maximum), with the RunTasks credits of bench/bullmq's clusters (2 × clients).
        WORKER_TASK_SLOTS: '100000',
        WORKER_RUN_TASKS_MAX_IN_FLIGHT: String(Math.max(64, CLIENTS * 2)),
        BLOCKX_STORAGE_URL: 'sqlite::memory:',
        ...tlsEnv,
      },
    },
  );
  const [out] = await waitForLine(
    child,
    new RegExp(`[\\s\\S]*worker #${WORKERS - 1} listening on \\S+`),
    60_000,
  );
  const coordinator = /coordinator listening on (\S+)/.exec(out)?.[1];
  if (coordinator === undefined) throw new Error('no coordinator address printed');
  return { name, coordinator, tls, child } satisfies Cluster;
}

function clientOptions(c: Cluster, extra: Partial<BlockxClientOptions> = {}): BlockxClientOptions {
  return { coordinator: c.coordinator, ...(c.tls === undefined ? {} : { tls: c.tls }), ...extra };
}

async function withClient<T>(opts: BlockxClientOptions, fn: (c: BlockxClient) => Promise<T>): Promise<T> {
  const c = new BlockxClient(opts);
  try {
    return await fn(c);
  } finally {
    c.close();
  }
}

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`a task failed (${what})`);
}

/** Sequential reservations, one per cluster per round in a random order; p50 per cluster per run. */
async function reservationP50s(clusters: readonly Cluster[]): Promise<Map<string, number[]>> {
  const stubs = clusters.map((c) => ({ c, stub: createCoordinatorClient(c.coordinator, {}, c.tls) }));
  let seq = 0;
  const p50s = new Map<string, number[]>(clusters.map((c) => [c.name, []]));
  try {
    for (let run = 0; run < RUNS; run++) {
      const lat = new Map<string, number[]>(clusters.map((c) => [c.name, []]));
      for (const [phase, budget] of [
        ['warmup', WARMUP],
        ['record', SECONDS],
      ] as const) {
        const start = performance.now();
        while (performance.now() - start < budget * 1000) {
          for (const { c, stub } of Math.random() < 0.5 ? stubs : [...stubs].reverse()) {
            const t0 = performance.now();
            const taskId = `tls-bench-${++seq}`;
            await unaryCall<ReserveWorkerSlotResponseWireOut>(
              (md, o, cb) => stub.reserveWorkerSlot({ taskId }, md, o, cb),
              { timeoutMs: 10_000 },
            );
            if (phase === 'record') lat.get(c.name)!.push(performance.now() - t0);
          }
        }
      }
      for (const [name, l] of lat)
        p50s.get(name)!.push(
          percentile(
            l.sort((a, b) => a - b),
            50,
          ),
        );
    }
  } finally {
    for (const { stub } of stubs) stub.close();
  }
  return p50s;
}

/** The first call of a fresh client: connection (and handshake) included. */
async function firstCallMs(c: Cluster): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < 20; i++) {
    const stub = createCoordinatorClient(c.coordinator, { 'grpc.use_local_subchannel_pool': 1 }, c.tls);
    const t0 = performance.now();
    await unaryCall<ReserveWorkerSlotResponseWireOut>(
      (md, o, cb) => stub.reserveWorkerSlot({ taskId: `tls-first-${c.name}-${Date.now()}-${i}` }, md, o, cb),
      { timeoutMs: 10_000 },
    );
    samples.push(performance.now() - t0);
    stub.close();
  }
  return median(samples);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'blockx-bench-tls-'));
  const { ca, node, files } = loopbackTls(dir, 'bench CA');
  const material: TlsMaterial = {
    ca: Buffer.from(ca.cert),
    cert: Buffer.from(node.cert),
    key: Buffer.from(node.key),
  };
  const loadBefore = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  const clusters = [
    await startCluster('plaintext', {}),
    await startCluster(
      'TLS',
      { BLOCKX_TLS_CA: files.ca, BLOCKX_TLS_CERT: files.cert, BLOCKX_TLS_KEY: files.key },
      material,
    ),
  ];
  try {
    const bulk = new Map<string, LoopMeasurement[]>();
    const coalesced = new Map<string, LoopMeasurement[]>();
    for (let run = 0; run < RUNS; run++) {
      // plain, TLS in even runs; TLS, plain in odd ones.
      for (const c of run % 2 === 0 ? clusters : [...clusters].reverse()) {
        await withClient(clientOptions(c), async (client) => {
          const m = await bulkRun(BULK, async () => {
            const out = await client.runMany(
              Array.from({ length: BULK }, () => EMPTY_TASK),
              { concurrency: BULK },
            );
            return out.map((o) => {
              if (!o.ok) throw o.error;
              check(o.result.success, `${c.name} bulk: ${o.result.failureCode} ${o.result.failureMessage}`);
              return o.result.durationMs;
            });
          });
          bulk.set(c.name, [...(bulk.get(c.name) ?? []), m]);
          const loop = await closedLoop(CLIENTS, WARMUP, SECONDS, async () => {
            check((await client.run(EMPTY_TASK)).success, `${c.name} coalesced`);
          });
          coalesced.set(c.name, [...(coalesced.get(c.name) ?? []), loop]);
        });
        console.error(`  run ${run + 1}: ${c.name} done`);
      }
    }
    const p50s = await reservationP50s(clusters);
    const first = new Map<string, number>();
    for (const c of clusters) first.set(c.name, await firstCallMs(c));

    const s = (m: Map<string, LoopMeasurement[]>, name: string): RunSummary => summarize(m.get(name) ?? []);
    const cpu = cpus()[0]?.model ?? 'unknown cpu';
    console.log(`\n## bench/tls (${cpus().length} × ${cpu}, node ${process.version})\n`);
    console.log(
      `Two \`blockx up --no-demo --workers ${WORKERS}\` clusters at once, one with \`tls\` on (RSA 2048 certificates from \`blockx certs\`' CA); ${RUNS} runs alternating between them; medians over the runs; load average at the start: ${loadBefore}.\n`,
    );
    console.log('| row | plaintext | TLS | TLS / plaintext |');
    console.log('|---|---:|---:|---:|');
    const rate = (label: string, m: Map<string, LoopMeasurement[]>): void => {
      const plain = s(m, 'plaintext').rate;
      const tls = s(m, 'TLS').rate;
      console.log(
        `| ${label} (tasks/s) | ${fmtInt(plain)} | ${fmtInt(tls)} | ${(tls / plain).toFixed(2)}× |`,
      );
    };
    rate(`runMany of ${fmtInt(BULK)} empty tasks via the Coordinator`, bulk);
    rate(`${CLIENTS} producers of run(), coalesced onto the batched path`, coalesced);
    const plainP50 = median(p50s.get('plaintext') ?? []);
    const tlsP50 = median(p50s.get('TLS') ?? []);
    console.log(
      `| ReserveWorkerSlot p50, 1 in flight (ms) | ${fmtMs(plainP50)} | ${fmtMs(tlsP50)} | ${(tlsP50 / plainP50).toFixed(2)}× (speed ${(plainP50 / tlsP50).toFixed(2)}×) |`,
    );
    const f0 = first.get('plaintext') ?? NaN;
    const f1 = first.get('TLS') ?? NaN;
    console.log(
      `| first reservation of a new connection, median of 20 (ms) | ${fmtMs(f0)} | ${fmtMs(f1)} | ${(f1 / f0).toFixed(2)}× |`,
    );
    const perRun = (m: Map<string, LoopMeasurement[]>, name: string): string =>
      (m.get(name) ?? []).map((r) => fmtInt(r.ops / r.seconds)).join(', ');
    console.log(
      `\nPer run, tasks/s: bulk plaintext ${perRun(bulk, 'plaintext')}, TLS ${perRun(bulk, 'TLS')}; coalesced plaintext ${perRun(coalesced, 'plaintext')}, TLS ${perRun(coalesced, 'TLS')}.`,
    );
    console.log(
      `Per run, reservation p50 ms: plaintext ${(p50s.get('plaintext') ?? []).map(fmtMs).join(', ')}; TLS ${(p50s.get('TLS') ?? []).map(fmtMs).join(', ')}.`,
    );
  } finally {
    for (const c of clusters) await stopChild(c.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
process.exit(0);
