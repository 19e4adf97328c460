// bench/lean-bind: what Node 20's AsyncResource#bind costs a gRPC client call, and what the lean bind of
// src/grpc/lean-bind.ts (installed by every BlockX gRPC client) saves. Prints a markdown table.
//
//   npx tsx bench/lean-bind.ts [--seconds 5] [--warmup 1] [--runs 3]
//
// One process: a raw grpc-js unary echo server, a raw relay (its handler calls the echo server: two
// client requests per op, as a reservation makes) and their clients, on loopback. Rows are measured call
// by call, interleaved: each round makes one call of every row in a fresh random order, so every row sees
// the same moments of this shared box. A row runs with Node's own bind or with the lean one, switched
// around each call; every other line of code is the same. Ratios are lean p50 / Node's p50, per run and
// pooled.
import * as grpc from '@grpc/grpc-js';
import { AsyncResource } from 'node:async_hooks';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import type * as ChannelOptionsModule from '../src/grpc/channel-options.js';
import type * as LeanBindModule from '../src/grpc/lean-bind.js';
import { builtLabel, loadBuilt } from './lib/built.js';
import { fmtInt, fmtMs, median, percentile } from './lib/closed-loop.js';
import { EchoClient, startEcho, startEchoRelay } from './lib/grpc-echo.js';

const { CLIENT_CHANNEL_OPTIONS } = await loadBuilt<typeof ChannelOptionsModule>('grpc/channel-options');
const { installLeanAsyncResourceBind, leanAsyncResourceBindInstalled } =
  await loadBuilt<typeof LeanBindModule>('grpc/lean-bind');

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '1' },
    runs: { type: 'string', default: '3' },
  },
});
const SECONDS = Number(values.seconds);
const WARMUP = Number(values.warmup);
const RUNS = Number(values.runs);

type Bind = (this: AsyncResource, fn: () => unknown, thisArg?: unknown) => unknown;
const nodeBind = AsyncResource.prototype.bind as unknown as Bind;
if (!installLeanAsyncResourceBind()) {
  console.log(
    `\n## bench/lean-bind\n\nNode ${process.version}'s own bind adds no deprecated property: nothing to compare.`,
  );
  process.exit(0);
}
const leanBind = AsyncResource.prototype.bind as unknown as Bind;
// The switch stays marked as installed, so that nothing re-installs over it during the run.
let useLean = false;
const switchBind = function (this: AsyncResource, fn: () => unknown, thisArg?: unknown) {
  return (useLean ? leanBind : nodeBind).call(this, fn, thisArg);
};
for (const key of Object.getOwnPropertySymbols(leanBind)) {
  Object.defineProperty(switchBind, key, { value: (leanBind as unknown as Record<symbol, unknown>)[key] });
}
Object.defineProperty(AsyncResource.prototype, 'bind', {
  value: switchBind,
  writable: true,
  configurable: true,
});
if (!leanAsyncResourceBindInstalled()) throw new Error('the switch must count as installed');

const loadBefore = loadavg()[0]?.toFixed(2) ?? '?';
const echo = await startEcho();
const relay = await startEchoRelay(echo.addr);
const echoClient = new EchoClient(echo.addr, grpc.credentials.createInsecure(), CLIENT_CHANNEL_OPTIONS);
const relayClient = new EchoClient(relay.addr, grpc.credentials.createInsecure(), CLIENT_CHANNEL_OPTIONS);
const payload = Buffer.from('{"taskId":"bench-0000000000"}');
const call = (client: EchoClient): Promise<void> =>
  new Promise((resolve, reject) => client.Echo(payload, (e) => (e ? reject(e) : resolve())));

interface Row {
  readonly name: string;
  readonly lean: boolean;
  readonly client: EchoClient;
}
const rows: Row[] = [
  { name: "raw unary echo, Node's bind", lean: false, client: echoClient },
  { name: 'raw unary echo, lean bind', lean: true, client: echoClient },
  { name: "raw relay (two requests), Node's bind", lean: false, client: relayClient },
  { name: 'raw relay (two requests), lean bind', lean: true, client: relayClient },
];

async function once(row: Row): Promise<number> {
  useLean = row.lean;
  const t0 = performance.now();
  try {
    await call(row.client);
  } finally {
    useLean = false;
  }
  return performance.now() - t0;
}

/** `seconds` of rounds, one call per row each, in a fresh random order; latencies per row. */
async function interleaved(seconds: number): Promise<number[][]> {
  const lat = rows.map(() => [] as number[]);
  const order = rows.map((_, i) => i);
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [order[i], order[j]] = [order[j] as number, order[i] as number];
    }
    for (const i of order) (lat[i] as number[]).push(await once(rows[i] as Row));
  }
  return lat.map((l) => l.sort((a, b) => a - b));
}

await interleaved(WARMUP);
const runs: number[][][] = [];
for (let r = 0; r < RUNS; r++) runs.push(await interleaved(SECONDS));
relay.stop();
echo.stop();
echoClient.close();
relayClient.close();

const pooled = rows.map((_, i) => runs.flatMap((run) => run[i] as number[]).sort((a, b) => a - b));
const p50 = (sorted: readonly number[]): number => percentile(sorted, 50);
const cpu = cpus()[0]?.model ?? 'unknown cpu';
console.log(`\n## bench/lean-bind (${cpus().length} × ${cpu}, node ${process.version})\n`);
console.log(
  `${RUNS} runs × ${SECONDS} s of rounds of one call per row in random order (after ${WARMUP} s warm-up); latencies pooled over the runs; ${builtLabel()}; load average at the start: ${loadBefore}.\n`,
);
console.log('| row | calls | p50 ms | p99 ms |');
console.log('|---|---:|---:|---:|');
rows.forEach((row, i) => {
  const s = pooled[i] as number[];
  console.log(`| ${row.name} | ${fmtInt(s.length)} | ${fmtMs(p50(s))} | ${fmtMs(percentile(s, 99))} |`);
});
const ratio = (lean: number, stock: number): string => {
  const perRun = runs.map((run) => p50(run[lean] as number[]) / p50(run[stock] as number[]));
  const all = p50(pooled[lean] as number[]) / p50(pooled[stock] as number[]);
  return `${all.toFixed(3)} pooled (median of runs ${median(perRun).toFixed(3)}; runs ${perRun.map((x) => x.toFixed(3)).join(', ')})`;
};
console.log(`\nlean bind p50 / Node's bind p50: echo ${ratio(1, 0)}; relay ${ratio(3, 2)}`);
