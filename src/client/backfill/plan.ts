// A backfill job as data (docs/backfill.md): which units (blocks, or aligned bundles) a range covers, the
// task of each unit (the template with its block selectors filled), the job's identity and the task id of
// every attempt. Pure: no clock, no IO.
//
// Job identity. The job id hashes what decides the rows a unit writes — the template with its selectors
// taken out, the mode, the bundle size and the database the rows go to — but not the range, so extending
// a finished job (0..999, then 0..1999) skips the units it already did, and the same template against
// another database is another job (what was written to one says nothing about the other). The task id of attempt k of unit u is
// `bf-<job id>-<run>-<b|u><u>-<k>`: deterministic for one journal, so a rerun after a crash reuses the ids of the first run and
// a Worker still retaining an attempt's result answers with it instead of running it again. `run` is the
// journal's run tag (./journal.ts): a fresh journal (`--fresh`, a new state dir) gets a new tag, so a job
// run again from scratch is never answered by results a Worker retains from the previous run — those
// say the rows were written, which is no longer true once someone cleared the table.
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../kernel/canonical-json.js';
import type { PluginConfig } from '../../grpc/domain-types.js';
import type { ClientTaskInput } from '../types.js';

export type BackfillPer = 'block' | 'bundle';

/** A task without its id: the template as read from its file. */
export interface BackfillTemplate {
  readonly functionCallConfig: PluginConfig;
  readonly resultHandler?: PluginConfig | null;
  readonly taskTimeoutMs?: number;
}

export interface BackfillJob {
  readonly template: BackfillTemplate;
  /** First block of the range (inclusive). */
  readonly from: number;
  /** Last block of the range (inclusive). */
  readonly to: number;
  readonly per: BackfillPer;
  /**
   * The database the writers write to, as storageIdentity names it (the CLI passes the configured
   * storage). Part of the job id: leave it out only when the job's rows go nowhere that persists.
   */
  readonly storage?: string;
}

/** One task of the job: a block, or a bundle of blocks. */
export interface BackfillUnit {
  /** The block number (per block) or the bundle id (per bundle). */
  readonly key: number;
  readonly firstBlock: number;
  readonly lastBlock: number;
  /**
   * In a plan of blocks and bundles (./split-plan.ts, where `key` is the first block): the unit's kind and
   * its key in its own part. Absent in a plan of one kind.
   */
  readonly part?: { readonly per: BackfillPer; readonly key: number };
}

export interface BackfillPlan {
  readonly jobId: string;
  readonly per: BackfillPer;
  readonly bundleSize: number;
  readonly units: readonly BackfillUnit[];
  /** Blocks the range covers. */
  readonly blocks: number;
  /** The task of a unit (no task id). */
  taskOf(unit: BackfillUnit): ClientTaskInput;
  /** The task id of attempt `attempt` (1-based) of `unit` in the run tagged `run`. */
  taskIdOf(unit: BackfillUnit, attempt: number, run: string): string;
}

/** A job that cannot be planned; `flag` names the command-line flag or template path at fault. */
export class BackfillPlanError extends Error {
  constructor(
    message: string,
    readonly where: string,
  ) {
    super(message);
    this.name = 'BackfillPlanError';
  }
}

/** Blocks per bundle unless the template's builder says otherwise (docs/architecture.md § Block data). */
export const DEFAULT_BUNDLE_SIZE = 1000;
/** Units one job may cover (a bigger range is several jobs: the plan is held in memory). */
export const MAX_UNITS = 10_000_000;

/** Bundle id of block `n`: bundle 0 holds genesis only, bundle b ≥ 1 blocks (b − 1)·S + 1 … b·S. */
export function bundleOf(n: number, size: number): number {
  return n === 0 ? 0 : Math.floor((n - 1) / size) + 1;
}

/** First and last block of bundle `b`. */
export function bundleRange(b: number, size: number): { first: number; last: number } {
  return b === 0 ? { first: 0, last: 0 } : { first: (b - 1) * size + 1, last: b * size };
}

export function planBackfill(job: BackfillJob): BackfillPlan {
  const { from, to, per, template } = job;
  for (const [flag, v] of [
    ['--from', from],
    ['--to', to],
  ] as const) {
    if (!Number.isSafeInteger(v) || v < 0) {
      throw new BackfillPlanError(`${flag} must be a block number (an integer ≥ 0), got ${v}`, flag);
    }
  }
  if (to < from) throw new BackfillPlanError(`--to ${to} is below --from ${from}`, '--to');
  const builder = configOf(template.functionCallConfig, 'functionCallConfig');
  const writer =
    template.resultHandler == null ? undefined : configOf(template.resultHandler, 'resultHandler');
  const selector = per === 'block' ? 'block' : 'bundle';
  if (!(selector in builder)) {
    throw new BackfillPlanError(
      `the template's builder (${template.functionCallConfig.type}) has no "${selector}" selector to fill` +
        (per === 'block'
          ? ' (use a per-block builder such as BlockTableCallConfig)'
          : ' (--per bundle needs a bundle builder such as BlockBundleCallConfig)'),
      `/functionCallConfig/config/${selector}`,
    );
  }
  const bundleSize = per === 'bundle' ? bundleSizeOf(builder, writer) : DEFAULT_BUNDLE_SIZE;
  const units = per === 'block' ? blockUnits(from, to) : bundleUnits(from, to, bundleSize);

  const jobId = jobIdOf(template, per, bundleSize, job.storage);
  const fill = (config: Record<string, unknown>, unit: BackfillUnit): Record<string, unknown> => {
    if (!(selector in config)) return config;
    return { ...config, [selector]: per === 'block' ? { number: unit.key } : unit.key };
  };
  return {
    jobId,
    per,
    bundleSize,
    units,
    blocks: to - from + 1,
    taskOf: (unit) => ({
      functionCallConfig: { type: template.functionCallConfig.type, config: fill(builder, unit) },
      ...(template.resultHandler == null || writer === undefined
        ? {}
        : { resultHandler: { type: template.resultHandler.type, config: fill(writer, unit) } }),
      ...(template.taskTimeoutMs ? { taskTimeoutMs: template.taskTimeoutMs } : {}),
    }),
    taskIdOf: (unit, attempt, run) =>
      `bf-${jobId}-${run}-${per === 'block' ? 'b' : 'u'}${unit.key}-${attempt}`,
  };
}

/** The job id: 12 hex digits of a SHA-256 over what decides the rows a unit writes. */
export function jobIdOf(
  template: BackfillTemplate,
  per: BackfillPer,
  bundleSize: number,
  storage?: string,
): string {
  const strip = (pc: PluginConfig | null | undefined): unknown => {
    if (pc == null) return null;
    const { block: _block, bundle: _bundle, ...rest } = configOf(pc, 'config');
    return { type: pc.type, config: rest };
  };
  const identity = canonicalJson({
    v: 1,
    per,
    bundleSize: per === 'bundle' ? bundleSize : null,
    builder: strip(template.functionCallConfig),
    writer: strip(template.resultHandler),
    taskTimeoutMs: template.taskTimeoutMs ?? 0,
    // Absent for a job without one, so such a job keeps the id it had before storage was part of it.
    ...(storage === undefined ? {} : { storage }),
  });
  return createHash('sha256').update(identity).digest('hex').slice(0, 12);
}

function blockUnits(from: number, to: number): BackfillUnit[] {
  const count = to - from + 1;
  if (count > MAX_UNITS) {
    throw new BackfillPlanError(
      `the range holds ${count} blocks; one job covers at most ${MAX_UNITS} (split it, or use --per bundle)`,
      '--to',
    );
  }
  const units: BackfillUnit[] = new Array(count);
  for (let i = 0; i < count; i++) units[i] = { key: from + i, firstBlock: from + i, lastBlock: from + i };
  return units;
}

function bundleUnits(from: number, to: number, size: number): BackfillUnit[] {
  const first = bundleOf(from, size);
  const last = bundleOf(to, size);
  const start = bundleRange(first, size).first;
  const end = bundleRange(last, size).last;
  if (start !== from || end !== to) {
    throw new BackfillPlanError(
      `--per bundle needs a range aligned to bundles of ${size} blocks: --from ${from} --to ${to} cuts ` +
        `bundle${first === last ? ` ${first}` : `s ${first}..${last}`}; use --from ${start} --to ${end}, ` +
        `or --per block for part of a bundle`,
      start !== from ? '--from' : '--to',
    );
  }
  const units: BackfillUnit[] = [];
  for (let b = first; b <= last; b++) {
    const r = bundleRange(b, size);
    units.push({ key: b, firstBlock: r.first, lastBlock: r.last });
  }
  return units;
}

function bundleSizeOf(builder: Record<string, unknown>, writer: Record<string, unknown> | undefined): number {
  const size = builder.bundleSize ?? DEFAULT_BUNDLE_SIZE;
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 1) {
    throw new BackfillPlanError(
      `bundleSize must be a positive integer, got ${JSON.stringify(size)}`,
      '/functionCallConfig/config/bundleSize',
    );
  }
  const writerSize = writer?.bundleSize ?? (writer && 'bundle' in writer ? DEFAULT_BUNDLE_SIZE : size);
  if (writerSize !== size) {
    throw new BackfillPlanError(
      `the writer's bundleSize (${JSON.stringify(writerSize)}) differs from the builder's (${size})`,
      '/resultHandler/config/bundleSize',
    );
  }
  return size;
}

function configOf(pc: PluginConfig, where: string): Record<string, unknown> {
  const c = pc.config;
  if (typeof c !== 'object' || c === null || Array.isArray(c)) {
    throw new BackfillPlanError(`the template's ${where}.config must be an object`, `/${where}/config`);
  }
  return c as Record<string, unknown>;
}
