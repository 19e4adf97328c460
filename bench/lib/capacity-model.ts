// The capacity model of one Coordinator (docs/performance.md § Capacity of one Coordinator), fitted from
// the windows bench/coordinator-capacity.ts measures. Pure: numbers in, numbers out.
//
//   CPU  = idle + calls/s × perCall + workerRpcs/s × perWorkerRpc + slots/s × perSlot   (fractions of a core)
//   idle = idle0 + watch events/s × perEvent      watch events/s = N × 1,000 / heartbeat interval (ms)
//   etcd = etcd0 + puts/s × perPut                 (at rest: one put per heartbeat, plus lease keepalives)
//
// A reservation call from a client (ReserveWorkerSlot, or ReserveWorkerSlots of B ids) costs a server
// call, then one Worker RPC per Worker its ids were placed on (RequestTaskSlot, or RequestTaskSlots with
// that Worker's share of the ids), then some work per id. A batch's claims spread it over the fleet by
// free capacity (docs/batched-protocol.md § Coordinator: ReserveWorkerSlots), so with equally free
// Workers one call of B ids makes min(B, N) Worker RPCs: `fanOut`.
//
// idle and etcd are least-squares lines over the idle windows; the three load costs one least-squares fit (no
// intercept) of every load window's CPU above the idle window of the same N. A coefficient the noise made
// negative is dropped and the rest refitted, so no term ever predicts that more work costs less.

/** What one measured window contributes to the fit. */
export interface Window {
  readonly workers: number;
  /** 'idle', or a reservation mode (e.g. 'unary', 'bulk 16'). */
  readonly mode: string;
  /** Client calls answered, Worker RPCs the Coordinator made, slots reserved: per second. */
  readonly callsPerS: number;
  readonly workerRpcsPerS: number;
  readonly slotsPerS: number;
  /** CPU of the Coordinator and of etcd, fractions of one core. */
  readonly coordinatorCpu: number;
  readonly etcdCpu: number;
  /** Heartbeat events the Coordinator's watch received per second, and puts etcd served (etcd's counts). */
  readonly watchEventsPerS: number;
  readonly putsPerS: number;
}

export interface Line {
  readonly intercept: number;
  readonly slope: number;
}

/** A steady reservation load, per second. */
export interface Load {
  readonly callsPerS: number;
  readonly workerRpcsPerS: number;
  readonly slotsPerS: number;
}

export interface CapacityModel {
  /** Coordinator CPU at rest, fraction of a core: intercept + slope × watch events/s. */
  readonly idle: Line;
  /** Core-seconds per client call, per Worker RPC, per slot. */
  readonly perCall: number;
  readonly perWorkerRpc: number;
  readonly perSlot: number;
  /** etcd CPU at rest (heartbeat puts, keepalives, the watch), fraction of a core, by puts/s. */
  readonly etcdIdle: Line;
  /** Heartbeat events per second per Worker in the fitting windows (~1,000 / interval ms). */
  readonly eventsPerWorkerPerS: number;
}

/** Least squares over (x, y); a negative slope is taken as 0 (the intercept then the mean). */
export function fitLine(points: readonly (readonly [number, number])[]): Line {
  if (points.length === 0) throw new Error('no points to fit');
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const slope = sxx === 0 ? 0 : sxy / sxx;
  if (slope <= 0) return { intercept: my, slope: 0 };
  return { intercept: my - slope * mx, slope };
}

export const at = (line: Line, n: number): number => line.intercept + line.slope * n;

/** Solves A x = b by Gaussian elimination with partial pivoting; undefined when A is singular. */
function solve(a: number[][], b: number[]): number[] | undefined {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i] as number]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r]![c]!) > Math.abs(m[p]![c]!)) p = r;
    if (Math.abs(m[p]![c]!) < 1e-300) return undefined;
    [m[c], m[p]] = [m[p]!, m[c]!];
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = m[r]![c]! / m[c]![c]!;
      for (let k = c; k <= n; k++) m[r]![k]! -= f * m[c]![k]!;
    }
  }
  return m.map((row, i) => row[n]! / row[i]!);
}

/**
 * Non-negative least squares without intercept, y ≈ Σ x_j β_j, by elimination: fit the active terms,
 * drop every negative one, refit, until none is negative. Few terms, so this is exact enough.
 */
export function fitNonNegative(rows: readonly (readonly number[])[], y: readonly number[]): number[] {
  const terms = rows[0]?.length ?? 0;
  let active = Array.from({ length: terms }, (_, j) => j);
  for (;;) {
    const ata = active.map((j) => active.map((k) => rows.reduce((s, r) => s + r[j]! * r[k]!, 0)));
    const aty = active.map((j) => rows.reduce((s, r, i) => s + r[j]! * y[i]!, 0));
    const beta = active.length === 0 ? [] : (solve(ata, aty) ?? active.map(() => 0));
    const negative = active.filter((_, i) => beta[i]! < 0);
    if (negative.length === 0) {
      const out = Array.from({ length: terms }, () => 0);
      active.forEach((j, i) => (out[j] = beta[i]!));
      return out;
    }
    active = active.filter((j) => !negative.includes(j));
  }
}

/** Fits the model; every load window needs an idle window of the same N. */
export function fitModel(windows: readonly Window[]): CapacityModel {
  const idle = windows.filter((w) => w.mode === 'idle');
  const idleAt = new Map(idle.map((w) => [w.workers, w]));
  const loaded = windows.filter((w) => w.mode !== 'idle' && idleAt.has(w.workers) && w.slotsPerS > 0);
  const [perCall, perWorkerRpc, perSlot] = fitNonNegative(
    loaded.map((w) => [w.callsPerS, w.workerRpcsPerS, w.slotsPerS]),
    loaded.map((w) => w.coordinatorCpu - (idleAt.get(w.workers) as Window).coordinatorCpu),
  ) as [number, number, number];
  const events = idle.reduce((s, w) => s + w.watchEventsPerS, 0);
  const workers = idle.reduce((s, w) => s + w.workers, 0);
  return {
    idle: fitLine(idle.map((w) => [w.watchEventsPerS, w.coordinatorCpu])),
    perCall,
    perWorkerRpc,
    perSlot,
    etcdIdle: fitLine(idle.map((w) => [w.putsPerS, w.etcdCpu])),
    eventsPerWorkerPerS: workers === 0 ? 0 : events / workers,
  };
}

/** Core-seconds of Coordinator CPU that `load` adds. */
export function loadCost(model: CapacityModel, load: Load): number {
  return (
    load.callsPerS * model.perCall + load.workerRpcsPerS * model.perWorkerRpc + load.slotsPerS * model.perSlot
  );
}

/** Coordinator CPU at rest with N Workers heartbeating `intervalScale` times as often as when fitted. */
export function idleCpu(model: CapacityModel, workers: number, intervalScale = 1): number {
  return at(model.idle, workers * model.eventsPerWorkerPerS * intervalScale);
}

/** Predicted Coordinator CPU (fraction of a core) at `eventsPerS` heartbeat events under `load`. */
export function predictCpu(model: CapacityModel, eventsPerS: number, load: Load): number {
  return at(model.idle, eventsPerS) + loadCost(model, load);
}

/** Worker RPCs one call of `batch` ids makes over N equally free Workers (0 = unary: 1). */
export function fanOut(batch: number, workers: number): number {
  return Math.max(1, Math.min(batch, workers));
}

/** The load of `slotsPerS` reservations in calls of `batch` ids (0 = unary) over N Workers. */
export function loadOf(slotsPerS: number, batch: number, workers: number): Load {
  const callsPerS = slotsPerS / Math.max(1, batch);
  return { callsPerS, workerRpcsPerS: callsPerS * fanOut(batch, workers), slotsPerS };
}

/**
 * The largest N whose predicted CPU stays within `budget` (a fraction of a core) when every Worker adds
 * `slotsPerWorkerPerS` reservations per second in calls of `batch` ids, with heartbeats `intervalScale`
 * times as frequent as in the fitting windows (0.1 for 2,000 ms fitted at 200 ms): the Coordinator's idle
 * share per Worker is its watch events, so it scales with the heartbeat rate. 0 when one Worker is over.
 */
export function maxWorkers(
  model: CapacityModel,
  budget: number,
  batch: number,
  slotsPerWorkerPerS: number,
  intervalScale = 1,
): number {
  const cpu = (n: number): number =>
    idleCpu(model, n, intervalScale) + loadCost(model, loadOf(n * slotsPerWorkerPerS, batch, n));
  if (cpu(1) > budget) return 0;
  let lo = 1;
  let hi = 2;
  while (cpu(hi) <= budget && hi < 2 ** 40) hi *= 2;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (cpu(mid) <= budget) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** The largest reservation rate (slots/s) in calls of `batch` ids that N Workers leave within `budget`. */
export function maxSlotRate(model: CapacityModel, budget: number, batch: number, workers: number): number {
  const perSlot = loadCost(model, loadOf(1, batch, workers));
  return Math.max(0, (budget - idleCpu(model, workers)) / perSlot);
}
