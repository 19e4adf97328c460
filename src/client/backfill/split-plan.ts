// A job whose range runs as whole aligned bundles in the middle and single blocks at its edges (docs/ingest.md
// § Bundles by default): `blockx ingest` over a long range. Pure: no clock, no IO.
//
// It is two ordinary jobs of ./plan.ts run as one: a per-block job over the edges and a per-bundle job over
// the bundles the range holds whole. Each keeps its own id and its own journal, exactly as if it ran alone,
// so a rerun skips what either part finished, and `--bundle-size 1` (per block) or an explicit bundle size
// over an aligned range finds the same journal. The engine (./run-backfill.ts) sees one plan and one journal:
// its units are keyed by their first block (unique, in order, whatever their kind), and the journal below
// sends each record to its part's journal under the part's own key.
//
// The `started` watermark (./journal.ts) is kept per part: each part records the highest of its own keys the
// engine has started, and a rerun takes as possibly started every unit up to the highest first block either
// part says. That errs on the side of asking the Workers about a unit that never ran, never the other way.
import type { BackfillJournal, JournalEntry } from './journal.js';
import {
  bundleRange,
  planBackfill,
  type BackfillJob,
  type BackfillPer,
  type BackfillPlan,
  type BackfillTemplate,
  type BackfillUnit,
} from './plan.js';

export interface SplitJob extends Omit<BackfillJob, 'template' | 'per'> {
  /** The template with a `block` selector (the edges). */
  readonly blockTemplate: BackfillTemplate;
  /** The template with a `bundle` selector and its bundleSize (the middle). */
  readonly bundleTemplate: BackfillTemplate;
  readonly bundleSize: number;
}

/** A unit of a split plan: keyed by its first block, with its kind and its key in its own part. */
export interface SplitUnit extends BackfillUnit {
  readonly part: NonNullable<BackfillUnit['part']>;
}

export interface SplitPlan extends BackfillPlan {
  readonly units: readonly SplitUnit[];
  /** The two jobs it is made of (their ids and tasks; the units are the split plan's). */
  readonly parts: Readonly<Record<BackfillPer, BackfillPlan>>;
  /** The same plan, its task ids carrying each part's run tag (its journal's) whatever run it is given. */
  withRuns(runs: Readonly<Record<BackfillPer, string>>): SplitPlan;
}

/** Whole bundles of `size` inside [from, to] (bundle 0, genesis alone, is left to the edges); none: undefined. */
export function wholeBundles(
  from: number,
  to: number,
  size: number,
): { first: number; last: number } | undefined {
  const first = from <= 1 ? 1 : Math.ceil((from - 1) / size) + 1;
  const last = Math.floor(to / size);
  return first <= last ? { first, last } : undefined;
}

/**
 * The split plan of [from, to], or undefined when the range holds no whole bundle (then it is a per-block job).
 * Throws BackfillPlanError as planBackfill does (a template without the selector, a bad range).
 */
export function planSplit(job: SplitJob): SplitPlan | undefined {
  const { from, to, bundleSize } = job;
  const whole = wholeBundles(from, to, bundleSize);
  if (whole === undefined) return undefined;
  const middle = {
    from: bundleRange(whole.first, bundleSize).first,
    to: bundleRange(whole.last, bundleSize).last,
  };
  const common = job.storage === undefined ? {} : { storage: job.storage };
  const bundle = planBackfill({ ...common, template: job.bundleTemplate, per: 'bundle', ...middle });
  if (bundle.bundleSize !== bundleSize) {
    throw new Error(`the bundle template's bundleSize is ${bundle.bundleSize}, not ${bundleSize}`);
  }
  // The block part's plan is made over one block: it gives the part's job id and tasks (neither depends on the
  // range); its units are the edges, fewer than 2 · bundleSize blocks, whatever the range's length.
  const block = planBackfill({ ...common, template: job.blockTemplate, per: 'block', from, to: from });
  const edge = (n: number): SplitUnit => ({
    key: n,
    firstBlock: n,
    lastBlock: n,
    part: { per: 'block', key: n },
  });
  const units: SplitUnit[] = [];
  for (let n = from; n < middle.from; n++) units.push(edge(n));
  for (const u of bundle.units) units.push({ ...u, key: u.firstBlock, part: { per: 'bundle', key: u.key } });
  for (let n = middle.to + 1; n <= to; n++) units.push(edge(n));
  return splitPlanOf({ block, bundle }, units, to - from + 1, undefined);
}

function splitPlanOf(
  parts: Readonly<Record<BackfillPer, BackfillPlan>>,
  units: readonly SplitUnit[],
  blocks: number,
  runs: Readonly<Record<BackfillPer, string>> | undefined,
): SplitPlan {
  const native = (u: BackfillUnit): BackfillUnit => {
    const { part } = u as SplitUnit;
    return { key: part.key, firstBlock: u.firstBlock, lastBlock: u.lastBlock };
  };
  return {
    // The dashboard and the summary name the bundle job: the part that holds most of the blocks.
    jobId: parts.bundle.jobId,
    per: 'bundle',
    bundleSize: parts.bundle.bundleSize,
    units,
    parts,
    blocks,
    taskOf: (u) => parts[(u as SplitUnit).part.per].taskOf(native(u)),
    // Once the parts' journals are open, each part's task ids carry that part's run tag (`withRuns`).
    taskIdOf: (u, attempt, run) => {
      const per = (u as SplitUnit).part.per;
      return parts[per].taskIdOf(native(u), attempt, runs?.[per] ?? run);
    },
    withRuns: (r) => splitPlanOf(parts, units, blocks, r),
  };
}

/**
 * The journal the engine keeps for a split plan, made of each part's own (opened under the part's job id). Its
 * run tag is the bundle part's, what progress reports name; give the engine `plan.withRuns` of both tags.
 */
export function splitJournal(
  plan: SplitPlan,
  journals: Readonly<Record<BackfillPer, BackfillJournal>>,
): BackfillJournal {
  const { units } = plan;
  const byKey = new Map(units.map((u) => [u.key, u]));
  const done = new Set<number>();
  let startedThrough: number | undefined;
  // highest[i]: each part's highest key among units[0..i] (units and each part's keys ascend together).
  const highest: Partial<Record<BackfillPer, number>>[] = [];
  let running: Partial<Record<BackfillPer, number>> = {};
  for (const u of units) {
    const part = journals[u.part.per];
    if (part.done.has(u.part.key)) done.add(u.key);
    if (part.startedThrough !== undefined && u.part.key <= part.startedThrough) startedThrough = u.key;
    running = { ...running, [u.part.per]: u.part.key };
    highest.push(running);
  }
  const written: Partial<Record<BackfillPer, number>> = {};
  return {
    done,
    runId: journals.bundle.runId,
    startedThrough,
    record(entry: JournalEntry): void {
      const u = byKey.get(entry.key);
      if (u === undefined) throw new Error(`no unit keyed ${entry.key} in the split plan`);
      journals[u.part.per].record({ ...entry, key: u.part.key });
      done.add(entry.key);
    },
    recordStarted(key: number): void {
      const at = lastAtOrBelow(units, key);
      if (at < 0) return;
      for (const per of ['block', 'bundle'] as const) {
        const h = highest[at]?.[per];
        if (h === undefined || h <= (written[per] ?? -Infinity)) continue;
        written[per] = h;
        journals[per].recordStarted?.(h);
      }
    },
  };
}

/** The index of the last unit keyed at or below `key` (units ascend by key); -1 when none. */
function lastAtOrBelow(units: readonly BackfillUnit[], key: number): number {
  let lo = 0;
  let hi = units.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if ((units[mid] as BackfillUnit).key <= key) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}
