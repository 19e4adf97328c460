// Closed-loop measurement shared by the peer benchmarks: `clients` loops of one async op, a warm-up that
// is discarded, then a timed window whose latencies are recorded; and the medians of several such runs.

export interface LoopMeasurement {
  readonly ops: number;
  readonly seconds: number;
  /** Latencies of the recorded ops, ms, sorted ascending. */
  readonly sorted: number[];
}

export interface RunSummary {
  /** Median over the runs of ops/s. */
  readonly rate: number;
  /** Median over the runs of each run's p50 / p99, ms. */
  readonly p50: number;
  readonly p99: number;
  /** Slowest and fastest run, ops/s. */
  readonly minRate: number;
  readonly maxRate: number;
  readonly runs: number;
  readonly ops: number;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** `clients` closed loops of `op`; `warmupS` s discarded, then `seconds` s recorded. */
export async function closedLoop(
  clients: number,
  warmupS: number,
  seconds: number,
  op: (client: number) => Promise<void>,
): Promise<LoopMeasurement> {
  const latencies: number[] = [];
  let recording = false;
  let stop = false;
  let ops = 0;
  let failure: unknown;
  const loop = async (client: number): Promise<void> => {
    while (!stop) {
      const t0 = performance.now();
      try {
        await op(client);
      } catch (e) {
        failure ??= e;
        stop = true;
        return;
      }
      if (recording) {
        latencies.push(performance.now() - t0);
        ops++;
      }
    }
  };
  const loops = Array.from({ length: clients }, (_, i) => loop(i));
  await sleep(warmupS * 1000);
  recording = true;
  const start = performance.now();
  await sleep(seconds * 1000);
  recording = false;
  const elapsed = (performance.now() - start) / 1000;
  stop = true;
  await Promise.all(loops);
  if (failure !== undefined) throw failure;
  return { ops, seconds: elapsed, sorted: latencies.sort((a, b) => a - b) };
}

export function summarize(runs: readonly LoopMeasurement[]): RunSummary {
  const rates = runs.map((m) => m.ops / m.seconds);
  return {
    rate: median(rates),
    p50: median(runs.map((m) => percentile(m.sorted, 50))),
    p99: median(runs.map((m) => percentile(m.sorted, 99))),
    minRate: Math.min(...rates),
    maxRate: Math.max(...rates),
    runs: runs.length,
    ops: runs.reduce((a, m) => a + m.ops, 0),
  };
}

export const fmtInt = (n: number): string => Math.round(n).toLocaleString('en-US');
export const fmtMs = (ms: number): string => (ms < 1 ? ms.toFixed(3) : ms.toFixed(2));
