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

/**
 * One bulk run: `start()` submits `n` operations at once and resolves with each one's latency (ms, from
 * the submission of the whole batch to that operation's result) once all are in.
 */
export async function bulkRun(n: number, start: () => Promise<number[]>): Promise<LoopMeasurement> {
  const t0 = performance.now();
  const latencies = await start();
  const seconds = (performance.now() - t0) / 1000;
  if (latencies.length !== n) throw new Error(`bulk run collected ${latencies.length} of ${n} results`);
  return { ops: n, seconds, sorted: latencies.sort((a, b) => a - b) };
}

/**
 * An open loop: `op` started at a fixed offered load of `ratePerS` for `seconds` s (every 10 ms a tick
 * starts the operations due), latencies recorded from each operation's own start. Resolves once every
 * started operation finished; `seconds` in the result is the offered window.
 */
export async function openLoop(
  ratePerS: number,
  seconds: number,
  op: () => Promise<void>,
): Promise<LoopMeasurement> {
  const latencies: number[] = [];
  const inFlight: Promise<void>[] = [];
  let failure: unknown;
  const t0 = performance.now();
  let started = 0;
  const total = Math.round(ratePerS * seconds);
  while (started < total) {
    const due = Math.min(total, Math.floor(((performance.now() - t0) / 1000) * ratePerS));
    for (; started < due; started++) {
      const s = performance.now();
      inFlight.push(
        op().then(
          () => void latencies.push(performance.now() - s),
          (e: unknown) => void (failure ??= e),
        ),
      );
    }
    await sleep(10);
  }
  await Promise.all(inFlight);
  if (failure !== undefined) throw failure;
  return { ops: total, seconds, sorted: latencies.sort((a, b) => a - b) };
}
