// One `blockx backfill TEMPLATE --from --to --per block|bundle --json` of bench/backfill against a
// cluster's coordinator, timed from outside, with its summary line parsed. Every run is a
// fresh job (`--fresh`, journal in a temp dir): nothing is skipped, and nothing is written to the repo.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface BackfillJob {
  readonly template: string;
  readonly per: 'block' | 'bundle';
  readonly from: number;
  /** Inclusive. */
  readonly to: number;
  readonly concurrency: number;
}

/** Where the job runs: a coordinator, and a way to run the CLI against it. */
export interface BackfillTarget {
  readonly coordinatorAddr: string;
  cli(
    args: readonly string[],
    opts: { timeoutMs: number },
  ): Promise<{ code: number | null; stdout: string; stderr: string }>;
}

export interface BackfillRun {
  /** Tasks the job ran (blocks or bundles). */
  readonly tasks: number;
  readonly failed: number;
  /** The command's wall time, node start included. */
  readonly wallSeconds: number;
  /** What the command's summary says. */
  readonly jobSeconds: number;
  /** Task attempts (retries included), from the summary. */
  readonly attempts: number;
  /** The last lines of its output, for failure messages. */
  readonly tail: string;
}

interface Template {
  readonly functionCallConfig: { readonly type: string; readonly config: Record<string, unknown> };
}

/** The per-block template's scan: its table and `where` (the selector filter). */
export function readTemplate(file: string): {
  readonly table: string;
  readonly where: Readonly<Record<string, unknown>>;
} {
  const t = JSON.parse(readFileSync(file, 'utf8')) as Template;
  const { table, where } = t.functionCallConfig.config as { table: string; where?: Record<string, unknown> };
  return { table, where: where ?? {} };
}

interface Summary {
  readonly blocks: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly skipped: number;
  readonly attempts: number;
  readonly seconds: number;
  readonly rows?: number;
}

const tailOf = (s: string): string => s.slice(-4_000);
const TIMEOUT_MS = 3 * 3_600_000;

export async function runBackfill(cluster: BackfillTarget, job: BackfillJob): Promise<BackfillRun> {
  const stateDir = mkdtempSync(path.join(tmpdir(), 'blockx-bench-backfill-state-'));
  const started = performance.now();
  const r = await cluster
    .cli(
      [
        'backfill',
        job.template,
        '--from',
        String(job.from),
        '--to',
        String(job.to),
        '--per',
        job.per,
        '--coordinator',
        cluster.coordinatorAddr,
        '--concurrency',
        String(job.concurrency),
        '--json',
        '--state-dir',
        stateDir,
        '--fresh',
      ],
      { timeoutMs: TIMEOUT_MS },
    )
    .finally(() => rmSync(stateDir, { recursive: true, force: true }));
  const wallSeconds = (performance.now() - started) / 1000;
  const lines = r.stdout.trim().split('\n');
  let summary: Summary | undefined;
  try {
    summary = (JSON.parse(lines.at(-1) ?? '') as { summary?: Summary }).summary;
  } catch {
    // reported below
  }
  if (summary === undefined)
    throw new Error(
      `blockx backfill exited ${r.code} without a summary line:\n${tailOf(r.stdout + r.stderr)}`,
    );
  return {
    tasks: lines.length - 1,
    failed: summary.failed,
    wallSeconds,
    jobSeconds: summary.seconds,
    attempts: summary.attempts,
    tail: tailOf(r.stdout + r.stderr),
  };
}
