// bench/coordinator-capacity: how many Workers one Coordinator serves under 50 % of a core. A capacity model
// (docs/performance.md § Capacity of one Coordinator) fitted on a simulated cluster of 10, 50 and 100 fake
// Workers and checked against a measured run at 200. Prints markdown tables.
//
//   npx tsx bench/coordinator-capacity.ts [--quick] [--seconds 6] [--workers 10,50,100,200]
//                                         [--interval-ms 200] [--load-scale 1] [--profile FILE]
//
// Setup: a real etcd (test/support/etcd.ts), the real Coordinator as `blockx coordinator` from dist/ in its
// own process (its CPU is read from /proc, lib/capacity-probe.ts), and every fake Worker in one more
// process (lib/capacity-fleet.ts): real heartbeats (the Worker's HeartbeatPublisher and EtcdRegistryWriter,
// one etcd session each, every --interval-ms, the default 200 ms) and a minimal slot table behind the two
// RPCs the Coordinator calls when reserving (RequestTaskSlot, RequestTaskSlots). This process is the
// client: it drives reservations open-loop at a fixed rate (unary ReserveWorkerSlot, and ReserveWorkerSlots
// of 1, 16, 64 and 256 ids) and reads etcd's /metrics for bytes, puts and watch events.
//
// The fleet grows 10 → 50 → 100 → 200 (the last is the validation size). At each size: one idle window
// (heartbeats only), then one window per reservation mode; at the largest, also a mixed window (unary and
// bulk 64 at once). Every window is --seconds long (idle ones twice that) after 1 s of warm-up; its CPU is
// the Coordinator's (and etcd's) over the window, as a fraction of one core. The model
// (lib/capacity-model.ts: idle + per watch event, per client call, per Worker RPC, per slot) is fitted on
// every size but the largest, and its predictions for the largest are set against what was measured there
// (at the heartbeat rate etcd counted in that window: on a busy box the fakes' one process may fall short
// of N puts per interval). Slots are never submitted: a fake frees a slot when its TTL passes
// (COORDINATOR_SLOT_TTL_MS, 2,000 ms here), as a Worker does with a reservation nobody used.
// --quick: sizes 10, 50, 200, 2 s windows, modes unary, bulk 16, bulk 256 (about a minute).
// --profile FILE: the Coordinator writes a CPU profile of its whole run to FILE (COORDINATOR_CPU_PROFILE,
// docs/performance.md § Profiling).
import type { ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type * as ChannelOptionsModule from '../src/grpc/channel-options.js';
import type * as ClientsModule from '../src/grpc/clients.js';
import type * as LeanBindModule from '../src/grpc/lean-bind.js';
import type * as ProtoModule from '../src/grpc/proto.js';
import type {
  ReserveWorkerSlotResponseWireOut,
  ReserveWorkerSlotsResponseWireOut,
} from '../src/grpc/wire-types.js';
import type { GetClusterStatusResponse__Output } from '../src/generated/proto/blockx/coordinator/v1/GetClusterStatusResponse.js';
import { startEtcd, type EtcdServer } from '../test/support/etcd.js';
import { freePort } from '../test/support/ports.js';
import { cleanEnv } from '../test/support/cli.js';
import { spawnTracked, stopGroup } from '../test/support/processes.js';
import * as grpc from '@grpc/grpc-js';
import { builtLabel, loadBuilt } from './lib/built.js';
import { percentile } from './lib/closed-loop.js';
import type { FleetReply, FleetRequest, FleetSettings, FleetStats } from './lib/capacity-fleet.js';
import {
  at,
  fitModel,
  loadCost,
  loadOf,
  maxSlotRate,
  maxWorkers,
  predictCpu,
  type CapacityModel,
  type Load,
  type Window,
} from './lib/capacity-model.js';
import {
  cpuSource,
  etcdDelta,
  processCpuMs,
  readEtcdCounters,
  type EtcdCounters,
} from './lib/capacity-probe.js';

const { CLIENT_CHANNEL_OPTIONS } = await loadBuilt<typeof ChannelOptionsModule>('grpc/channel-options');
const { createCoordinatorClient, unaryCall } = await loadBuilt<typeof ClientsModule>('grpc/clients');
const { CoordinatorAdminServiceClient } = await loadBuilt<typeof ProtoModule>('grpc/proto');
const { installLeanAsyncResourceBind } = await loadBuilt<typeof LeanBindModule>('grpc/lean-bind');
installLeanAsyncResourceBind();

const REPO = path.resolve(import.meta.dirname, '..');
const BIN = path.join(REPO, 'bin', 'blockx.js');

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    seconds: { type: 'string' },
    workers: { type: 'string' },
    'interval-ms': { type: 'string', default: '200' },
    'load-scale': { type: 'string', default: '1' },
    profile: { type: 'string' },
  },
});
const QUICK = args.quick ?? false;
const SECONDS = Number(args.seconds ?? (QUICK ? 2 : 6));
const SIZES = (args.workers ?? (QUICK ? '10,50,200' : '10,50,100,200')).split(',').map(Number);
const INTERVAL_MS = Number(args['interval-ms']);
const LOAD_SCALE = Number(args['load-scale']);
const WARMUP_MS = 1_000;
/** The budget the model answers for: half of one core. */
const BUDGET = 0.5;
const PREFIX = '/blockx/workers/';
const SLOT_TTL_MS = 2_000;
/** Per fake; above the most slots one fake holds at the highest rate and the smallest fleet. */
const TASK_SLOTS = 5_000;
/** Calls in flight at most; beyond it a due call is dropped and counted (the rate was too high). */
const MAX_INFLIGHT = 512;

/** A reservation mode: `batch` ids per call; 0 = the unary ReserveWorkerSlot. */
interface Mode {
  readonly name: string;
  readonly batch: number;
  /** Slots per second it is driven at (× --load-scale). */
  readonly slotsPerS: number;
}
const ALL_MODES: readonly Mode[] = [
  // Rates that keep the Coordinator near 10-20 % of a core even at 200 Workers, where a bulk call fans
  // out to min(batch, 200) Worker RPCs, and on a shared box: a Coordinator that cannot get the CPU it
  // needs queues calls (latency in seconds, heartbeats late), and its CPU per slot then means little.
  { name: 'unary', batch: 0, slotsPerS: 100 },
  { name: 'bulk 1', batch: 1, slotsPerS: 100 },
  { name: 'bulk 16', batch: 16, slotsPerS: 192 },
  { name: 'bulk 64', batch: 64, slotsPerS: 256 },
  { name: 'bulk 256', batch: 256, slotsPerS: 512 },
].map((m) => ({ ...m, slotsPerS: m.slotsPerS * LOAD_SCALE }));
const MODES = QUICK ? ALL_MODES.filter((m) => ['unary', 'bulk 16', 'bulk 256'].includes(m.name)) : ALL_MODES;
/** The mixed validation window: two modes at once, at half their rates. */
const MIXED: readonly Mode[] = [MODES[0] as Mode, MODES[MODES.length - 2] as Mode].map((m) => ({
  ...m,
  slotsPerS: m.slotsPerS / 2,
}));

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ---- the fleet process ----------------------------------------------------------------------------------

class Fleet {
  private readonly waiting: ((r: FleetReply) => void)[] = [];
  constructor(readonly child: ChildProcess) {
    child.on('message', (r: FleetReply) => this.waiting.shift()?.(r));
  }
  private ask(req: FleetRequest): Promise<FleetReply> {
    return new Promise((resolve, reject) => {
      this.waiting.push((r) => (r.kind === 'error' ? reject(new Error(`fleet: ${r.message}`)) : resolve(r)));
      this.child.send(req);
    });
  }
  async grow(to: number, settings: FleetSettings): Promise<void> {
    await this.ask({ kind: 'grow', to, settings });
  }
  async stats(): Promise<FleetStats> {
    const r = await this.ask({ kind: 'stats' });
    if (r.kind !== 'stats') throw new Error(`fleet answered ${r.kind} to stats`);
    return r.stats;
  }
  async stop(): Promise<void> {
    if (this.child.connected) await this.ask({ kind: 'stop' }).catch(() => undefined);
    await stopGroup(this.child, 'SIGTERM', 5_000);
  }
}

function startFleet(): Fleet {
  const child = spawnTracked(
    process.execPath,
    ['--import', 'tsx', path.join(REPO, 'bench/lib/capacity-fleet.ts')],
    {
      cwd: REPO,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  return new Fleet(child);
}

// ---- the Coordinator ------------------------------------------------------------------------------------

async function startCoordinator(etcd: EtcdServer): Promise<{ child: ChildProcess; address: string }> {
  const address = `127.0.0.1:${await freePort()}`;
  const child = spawnTracked(process.execPath, [BIN, 'coordinator', '--deployment', 'block'], {
    cwd: REPO,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: cleanEnv({
      ETCD_ENDPOINTS: etcd.endpoint,
      COORDINATOR_LISTEN: address,
      COORDINATOR_REGISTRY_PREFIXES: PREFIX,
      COORDINATOR_SLOT_TTL_MS: String(SLOT_TTL_MS),
      // The fakes report constant host figures below these anyway; the bench box must not matter.
      COORDINATOR_CPU_RED_LINE: '1',
      COORDINATOR_MEMORY_RED_LINE: '1',
      BLOCKX_LOG_LEVEL: 'warn',
      // One bulk call fanned out to more than 10 Workers adds one 'cancelled' listener per Worker RPC to
      // the client's call, and Node warns at 11 (a warning only: each is removed when its RPC ends).
      NODE_OPTIONS: '--disable-warning=MaxListenersExceededWarning',
      ...(args.profile === undefined ? {} : { COORDINATOR_CPU_PROFILE: args.profile }),
    }),
  });
  return { child, address };
}

/** Waits until the Coordinator is ready and sees `n` routable Workers. */
async function waitForWorkers(
  admin: InstanceType<typeof CoordinatorAdminServiceClient>,
  n: number,
): Promise<void> {
  const deadline = Date.now() + 60_000;
  let last = 'no answer';
  while (Date.now() < deadline) {
    try {
      const s = await unaryCall<GetClusterStatusResponse__Output>(
        (md, o, cb) => admin.getClusterStatus({}, md, o, cb),
        { timeoutMs: 5_000 },
      );
      const routable = s.workers.filter((w) => w.routable).length;
      if (s.ready && routable >= n) return;
      last = `ready ${s.ready}, ${routable} of ${s.workers.length} workers routable`;
    } catch (err) {
      last = String(err);
    }
    await sleep(200);
  }
  throw new Error(`the coordinator did not see ${n} routable workers within 60 s (${last})`);
}

// ---- the load ---------------------------------------------------------------------------------------------

interface LoadCounters {
  granted: number;
  refused: number;
  failedCalls: number;
  dropped: number;
  inflight: number;
  /** Latency of every call answered, ms. */
  latencies: number[];
}

/** Drives `modes` open-loop until the returned stop() is called. */
function startLoad(
  client: ReturnType<typeof createCoordinatorClient>,
  modes: readonly Mode[],
): {
  counters: LoadCounters;
  stop: () => Promise<void>;
} {
  const counters: LoadCounters = {
    granted: 0,
    refused: 0,
    failedCalls: 0,
    dropped: 0,
    inflight: 0,
    latencies: [],
  };
  const t0 = performance.now();
  const issued = modes.map(() => 0);
  let seq = 0;
  const send = (mode: Mode): void => {
    counters.inflight++;
    const started = performance.now();
    const done = (): void => {
      counters.inflight--;
      counters.latencies.push(performance.now() - started);
    };
    if (mode.batch === 0) {
      const taskId = `u${++seq}`;
      unaryCall<ReserveWorkerSlotResponseWireOut>(
        (md, o, cb) => client.reserveWorkerSlot({ taskId }, md, o, cb),
        {
          timeoutMs: 10_000,
        },
      )
        .then(
          () => void counters.granted++,
          () => void counters.refused++,
        )
        .finally(done);
      return;
    }
    const taskIds = Array.from({ length: mode.batch }, () => `b${++seq}`);
    unaryCall<ReserveWorkerSlotsResponseWireOut>(
      (md, o, cb) => client.reserveWorkerSlots({ taskIds }, md, o, cb),
      {
        timeoutMs: 10_000,
      },
    )
      .then(
        (r) => {
          for (const res of r.reservations) {
            if (res.error) counters.refused++;
            else counters.granted++;
          }
        },
        () => void counters.failedCalls++,
      )
      .finally(done);
  };
  const timer = setInterval(() => {
    const elapsedS = (performance.now() - t0) / 1000;
    modes.forEach((mode, i) => {
      const due = Math.floor((elapsedS * mode.slotsPerS) / Math.max(1, mode.batch));
      for (; (issued[i] as number) < due; issued[i] = (issued[i] as number) + 1) {
        if (counters.inflight >= MAX_INFLIGHT) counters.dropped++;
        else send(mode);
      }
    });
  }, 5);
  return {
    counters,
    stop: async () => {
      clearInterval(timer);
      const deadline = Date.now() + 15_000;
      while (counters.inflight > 0 && Date.now() < deadline) await sleep(20);
    },
  };
}

// ---- one window -------------------------------------------------------------------------------------------

interface Sample {
  readonly t: number;
  readonly coordinatorMs: number;
  readonly etcdMs: number;
  readonly etcd: EtcdCounters;
  readonly fleet: FleetStats;
  readonly granted: number;
  readonly answered: number;
}

interface Measured extends Window {
  readonly seconds: number;
  readonly etcd: EtcdCounters;
  readonly fleet: FleetStats;
  readonly fleetCpu: number;
  readonly refused: number;
  readonly dropped: number;
  /** Call latency of the window's answers, ms (NaN when idle). */
  readonly p50Ms: number;
  readonly p99Ms: number;
}

async function window(
  workers: number,
  label: string,
  modes: readonly Mode[],
  ctx: {
    coordinatorPid: number;
    etcd: EtcdServer;
    fleet: Fleet;
    client: ReturnType<typeof createCoordinatorClient>;
  },
): Promise<Measured> {
  const load = modes.length > 0 ? startLoad(ctx.client, modes) : undefined;
  await sleep(WARMUP_MS);
  const sample = async (): Promise<Sample> => {
    const [etcd, fleet] = await Promise.all([readEtcdCounters(ctx.etcd.endpoint), ctx.fleet.stats()]);
    return {
      t: performance.now(),
      coordinatorMs: processCpuMs(ctx.coordinatorPid),
      etcdMs: processCpuMs(ctx.etcd.pid ?? 0),
      etcd,
      fleet,
      granted: load?.counters.granted ?? 0,
      answered: load?.counters.latencies.length ?? 0,
    };
  };
  const refusedBefore = load?.counters.refused ?? 0;
  const a = await sample();
  // At rest the Coordinator's CPU is a few percent: twice as long a window for the same precision.
  await sleep(SECONDS * 1000 * (modes.length === 0 ? 2 : 1));
  const b = await sample();
  await load?.stop();
  const seconds = (b.t - a.t) / 1000;
  const etcd = etcdDelta(a.etcd, b.etcd);
  const latencies = (load?.counters.latencies ?? []).slice(a.answered, b.answered).sort((x, y) => x - y);
  return {
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    workers,
    mode: label,
    seconds,
    callsPerS: (b.answered - a.answered) / seconds,
    workerRpcsPerS:
      (b.fleet.unaryCalls + b.fleet.batchCalls - a.fleet.unaryCalls - a.fleet.batchCalls) / seconds,
    slotsPerS: (b.granted - a.granted) / seconds,
    coordinatorCpu: (b.coordinatorMs - a.coordinatorMs) / 1000 / seconds,
    etcdCpu: (b.etcdMs - a.etcdMs) / 1000 / seconds,
    watchEventsPerS: etcd.watchEvents / seconds,
    putsPerS: etcd.puts / seconds,
    etcd,
    fleet: b.fleet,
    fleetCpu: (b.fleet.cpuMs - a.fleet.cpuMs) / 1000 / seconds,
    refused: (load?.counters.refused ?? 0) - refusedBefore + (load?.counters.failedCalls ?? 0),
    dropped: load?.counters.dropped ?? 0,
  };
}

// ---- printing ---------------------------------------------------------------------------------------------

const pct = (f: number): string => `${(f * 100).toFixed(1)} %`;
const us = (coreSeconds: number): string => (coreSeconds * 1e6).toFixed(coreSeconds * 1e6 < 10 ? 2 : 1);
const int = (x: number): string => (x >= 2 ** 40 ? 'unbounded' : Math.round(x).toLocaleString('en-US'));
const signed = (f: number): string => `${f >= 0 ? '+' : ''}${(f * 100).toFixed(0)} %`;
const batchOf = (mode: string): number => ALL_MODES.find((m) => m.name === mode)?.batch ?? 0;

function printMeasured(rows: readonly Measured[]): void {
  console.log('### Measured windows\n');
  console.log(
    '| workers | load | slots/s | Worker RPCs per call | Coordinator CPU | µs per slot above idle | etcd CPU | watch events/s | etcd in, B/s | etcd out, B/s | fakes CPU | call p50 / p99, ms |',
  );
  console.log('|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  const idle = new Map(rows.filter((r) => r.mode === 'idle').map((r) => [r.workers, r]));
  for (const r of rows) {
    const base = idle.get(r.workers);
    const loaded = r.mode !== 'idle' && r.slotsPerS > 0;
    const perSlot =
      !loaded || base === undefined ? '—' : us((r.coordinatorCpu - base.coordinatorCpu) / r.slotsPerS);
    const flags = r.refused + r.dropped > 0 ? ` (${r.refused} refused, ${r.dropped} dropped)` : '';
    console.log(
      `| ${r.workers} | ${r.mode}${flags} | ${int(r.slotsPerS)} | ${loaded ? (r.workerRpcsPerS / r.callsPerS).toFixed(1) : '—'} | ${pct(r.coordinatorCpu)} | ${perSlot} | ${pct(r.etcdCpu)} | ${int(r.watchEventsPerS)} | ${int(r.etcd.receivedBytes / r.seconds)} | ${int(r.etcd.sentBytes / r.seconds)} | ${pct(r.fleetCpu)} | ${loaded ? `${r.p50Ms.toFixed(1)} / ${r.p99Ms.toFixed(1)}` : '—'} |`,
    );
  }
  console.log(
    "\nµs per slot above idle: the window's Coordinator CPU minus the idle window's at the same size, per slot " +
      'reserved. "etcd in" / "etcd out": every gRPC byte etcd received / sent. "fakes CPU": the one process ' +
      'holding every fake Worker.\n',
  );
}

function printHeartbeats(idle: readonly Measured[], model: CapacityModel): void {
  const last = idle[idle.length - 1] as Measured;
  const perWorker = (x: number, r: Measured): number => x / r.seconds / r.workers;
  console.log('### Per Worker, at rest\n');
  console.log(
    '| workers | puts/s | keepalives/s | etcd in, B/s | etcd out, B/s | Coordinator µs per watch event | etcd µs per put |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of idle) {
    console.log(
      `| ${r.workers} | ${perWorker(r.etcd.puts, r).toFixed(2)} | ${perWorker(r.etcd.keepalives, r).toFixed(2)} | ${int(perWorker(r.etcd.receivedBytes, r))} | ${int(perWorker(r.etcd.sentBytes, r))} | ${us(r.coordinatorCpu / Math.max(1, r.watchEventsPerS))} | ${us(r.etcdCpu / Math.max(1, r.etcd.puts / r.seconds))} |`,
    );
  }
  console.log(
    `\nOne heartbeat: a ${int(last.fleet.keyBytes)} B key and ${int(last.fleet.valueBytes)} B of JSON; ` +
      `${model.eventsPerWorkerPerS.toFixed(2)} watch events/s per Worker at a ${INTERVAL_MS} ms interval. The µs ` +
      "per event and per put divide all of the process's CPU at rest (fixed costs too) by the events.\n",
  );
}

function printModel(model: CapacityModel, fitSizes: readonly number[]): void {
  console.log(`### Model, fitted on ${fitSizes.join(', ')} workers\n`);
  console.log('| term | value |');
  console.log('|---|---:|');
  console.log(`| idle, fixed | ${pct(model.idle.intercept)} of a core |`);
  console.log(
    `| idle, per watch event | ${us(model.idle.slope)} µs (${pct(model.idle.slope * model.eventsPerWorkerPerS)} of a core per Worker at ${INTERVAL_MS} ms heartbeats) |`,
  );
  console.log(`| per client call | ${us(model.perCall)} µs |`);
  console.log(`| per Worker RPC | ${us(model.perWorkerRpc)} µs |`);
  console.log(`| per slot | ${us(model.perSlot)} µs |`);
  console.log(
    `| etcd at rest, fixed + per put | ${pct(model.etcdIdle.intercept)} + ${us(model.etcdIdle.slope)} µs |`,
  );
  console.log(
    '\nWhat a slot costs, by batch and fleet size (one call of B ids makes min(B, N) Worker RPCs):\n',
  );
  const sizes = [10, 100, 1_000];
  console.log(
    `| load | ${sizes.map((n) => `µs per slot at ${int(n)} workers`).join(' | ')} | × unary at 1,000 |`,
  );
  console.log(`|---|${sizes.map(() => '---:').join('|')}|---:|`);
  const unary = loadCost(model, loadOf(1, 0, 1_000));
  for (const m of ALL_MODES) {
    const cells = sizes.map((n) => us(loadCost(model, loadOf(1, m.batch, n))));
    console.log(
      `| ${m.name} | ${cells.join(' | ')} | ${(loadCost(model, loadOf(1, m.batch, 1_000)) / unary).toFixed(2)} |`,
    );
  }
  console.log('');
}

function printValidation(model: CapacityModel, rows: readonly Measured[], mixed: Measured): void {
  const n = (rows[0] as Measured).workers;
  console.log(`### Validation at ${n} workers (the model above against this run's windows at ${n})\n`);
  console.log(
    '| load | slots/s | Worker RPCs per call, rule / measured | predicted CPU | measured CPU | error |',
  );
  console.log('|---|---:|---:|---:|---:|---:|');
  const line = (label: string, load: Load, r: Measured): void => {
    const predicted = predictCpu(model, r.watchEventsPerS, load);
    const rule = load.callsPerS > 0 ? (load.workerRpcsPerS / load.callsPerS).toFixed(1) : '—';
    const measured = r.callsPerS > 0 ? (r.workerRpcsPerS / r.callsPerS).toFixed(1) : '—';
    console.log(
      `| ${label} | ${int(r.slotsPerS)} | ${rule} / ${measured} | ${pct(predicted)} | ${pct(r.coordinatorCpu)} | ${signed((predicted - r.coordinatorCpu) / r.coordinatorCpu)} |`,
    );
  };
  for (const r of rows) line(r.mode, loadOf(r.slotsPerS, batchOf(r.mode), n), r);
  // The mixed window: its slots split between its modes in the ratio they were driven at.
  const driven = MIXED.reduce((s, m) => s + m.slotsPerS, 0);
  const parts = MIXED.map((m) => loadOf((mixed.slotsPerS * m.slotsPerS) / driven, m.batch, n));
  const sum = (k: keyof Load): number => parts.reduce((s, p) => s + p[k], 0);
  line(
    `mixed: ${MIXED.map((m) => m.name).join(' + ')}`,
    { callsPerS: sum('callsPerS'), workerRpcsPerS: sum('workerRpcsPerS'), slotsPerS: sum('slotsPerS') },
    mixed,
  );
  const idle = rows.find((r) => r.mode === 'idle');
  if (idle !== undefined) {
    const etcdPred = at(model.etcdIdle, idle.putsPerS);
    console.log(
      `\netcd at rest: predicted ${pct(etcdPred)}, measured ${pct(idle.etcdCpu)} (${signed((etcdPred - idle.etcdCpu) / idle.etcdCpu)}).\n`,
    );
  }
}

function printCapacity(model: CapacityModel): void {
  console.log(`### Largest cluster under ${pct(BUDGET)} of a core (from the model)\n`);
  const rates = [0, 0.1, 1, 10, 100];
  console.log(
    `Workers, at ${INTERVAL_MS} ms / 2,000 ms heartbeats, when each Worker adds this many reservations per second:\n`,
  );
  console.log(`| reservations per Worker per s | ${ALL_MODES.map((m) => m.name).join(' | ')} |`);
  console.log(`|---:|${ALL_MODES.map(() => '---:').join('|')}|`);
  for (const r of rates) {
    const cells = ALL_MODES.map(
      (m) =>
        `${int(maxWorkers(model, BUDGET, m.batch, r))} / ${int(maxWorkers(model, BUDGET, m.batch, r, INTERVAL_MS / 2000))}`,
    );
    console.log(`| ${r} | ${cells.join(' | ')} |`);
  }
  const etcdMax =
    (BUDGET - model.etcdIdle.intercept) / Math.max(1e-12, model.etcdIdle.slope * model.eventsPerWorkerPerS);
  console.log(
    `\netcd at rest stays under ${pct(BUDGET)} of a core up to ${int(etcdMax)} Workers at ${INTERVAL_MS} ms heartbeats ` +
      `(${int(etcdMax * (2000 / INTERVAL_MS))} at 2,000 ms), as configured here (no fsync).\n`,
  );
  console.log(
    `The reservation rate one Coordinator sustains under the budget (slots/s; ${INTERVAL_MS} ms heartbeats):\n`,
  );
  console.log(`| workers | ${ALL_MODES.map((m) => m.name).join(' | ')} |`);
  console.log(`|---:|${ALL_MODES.map(() => '---:').join('|')}|`);
  for (const n of [10, 100, 1_000]) {
    console.log(
      `| ${int(n)} | ${ALL_MODES.map((m) => int(maxSlotRate(model, BUDGET, m.batch, n))).join(' | ')} |`,
    );
  }
  console.log('');
}

// ---- main -------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const loadBefore = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  const etcd = await startEtcd();
  const fleet = startFleet();
  const coordinator = await startCoordinator(etcd);
  const client = createCoordinatorClient(coordinator.address);
  const admin = new CoordinatorAdminServiceClient(
    coordinator.address,
    grpc.credentials.createInsecure(),
    CLIENT_CHANNEL_OPTIONS,
  );
  const settings: FleetSettings = {
    etcdEndpoint: etcd.endpoint,
    prefix: PREFIX,
    intervalMs: INTERVAL_MS,
    taskSlots: TASK_SLOTS,
    leaseTtlMs: 10_000,
  };
  try {
    const ctx = { coordinatorPid: coordinator.child.pid ?? 0, etcd, fleet, client };
    const rows: Measured[] = [];
    let mixed: Measured | undefined;
    for (const n of SIZES) {
      await fleet.grow(n, settings);
      await waitForWorkers(admin, n);
      await sleep(1_000); // every fake through its first heartbeats, the channels to them not yet open
      rows.push(await window(n, 'idle', [], ctx));
      for (const mode of MODES) rows.push(await window(n, mode.name, [mode], ctx));
      if (n === SIZES[SIZES.length - 1]) mixed = await window(n, `mixed`, MIXED, ctx);
    }
    const loadAfter = loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
    const validationSize = SIZES[SIZES.length - 1] as number;
    const fitSizes = SIZES.slice(0, -1);
    const model = fitModel(rows.filter((r) => r.workers !== validationSize));
    console.log(
      `Coordinator capacity, ${builtLabel()}; heartbeats every ${INTERVAL_MS} ms; ${SECONDS} s windows; ` +
        `CPU from ${cpuSource()}; load average ${loadBefore} before, ${loadAfter} after.\n`,
    );
    printMeasured(mixed === undefined ? rows : [...rows, mixed]);
    printHeartbeats(
      rows.filter((r) => r.mode === 'idle'),
      model,
    );
    printModel(model, fitSizes);
    if (mixed !== undefined)
      printValidation(
        model,
        rows.filter((r) => r.workers === validationSize),
        mixed,
      );
    printCapacity(model);
  } finally {
    client.close();
    admin.close();
    await stopGroup(coordinator.child, 'SIGTERM', 10_000);
    await fleet.stop();
    await etcd.stop();
  }
}

await main();
