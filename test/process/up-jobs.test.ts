// `blockx up` runs the jobs of its config (docs/follow.md § Jobs in the config), against a generated chain
// in a SQLite file: the job follows the chain until its output equals the function over the canonical
// blocks, `blockx jobs list` shows it running; a reorg deeper than its finality makes the runner exit 1,
// and the supervisor starts it again with a delay that doubles per failure in a row; SIGTERM stops `up`
// (and the job) with exit 0.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenTransfersOf } from '../../src/services/storage/block-data/index.js';
import { startBlockxUp, type BlockxUp } from '../support/blockx-up.js';
import { rehashCanonicalBlock } from '../support/follow-jobs.js';
import { REPO, cleanEnv, runBlockx, type CliRun } from '../support/cli.js';
import { stopGroup, waitForExit } from '../support/processes.js';

const STEP = 90_000;
const dir = mkdtempSync(path.join(tmpdir(), 'blockx-up-jobs-'));
const DB = path.join(dir, 'chain.db');
const CONFIG = path.join(dir, 'blockx.config.yaml');

const env = (): NodeJS.ProcessEnv => cleanEnv({ BLOCKX_STORAGE_URL: `sqlite:${DB}` });

const blockx = (args: string[]): Promise<CliRun> =>
  runBlockx([...args, '--config', CONFIG], { env: env(), timeoutMs: STEP });

/** The output rows and the rows the function gives over the canonical blocks 1.., both sorted. */
function outputAndExpected(): { output: string[]; expected: string[] } {
  const db = new Database(DB, { readonly: true });
  try {
    const text = (r: Record<string, unknown>) =>
      `${String(r.block_number)}:${String(r.log_idx)} ${String(r.from_address)}→${String(r.to_address)} ${String(r.amount)}`;
    const canonical = db
      .prepare('SELECT number, hash FROM blocks WHERE chain_id = 1 AND canonical = 1 AND number >= 1')
      .all() as { number: number; hash: string }[];
    const events = db.prepare(
      'SELECT * FROM events WHERE chain_id = 1 AND block_number = ? AND block_hash = ?',
    );
    const expected = canonical.flatMap((b) =>
      tokenTransfersOf(
        (events.all(b.number, b.hash) as Record<string, unknown>[]).map((e) => ({
          ...e,
          topics: JSON.parse(String(e.topics)) as unknown,
        })),
      ).map((t) => text(t as unknown as Record<string, unknown>)),
    );
    const output = (
      db.prepare('SELECT * FROM token_transfers WHERE chain_id = 1').all() as Record<string, unknown>[]
    ).map(text);
    return { output: output.sort(), expected: expected.sort() };
  } finally {
    db.close();
  }
}

async function until(what: string, check: () => boolean | Promise<boolean>, up: BlockxUp): Promise<void> {
  const deadline = Date.now() + STEP;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen:\n${up.output.text().slice(-3000)}`);
    if (up.child.exitCode !== null) throw new Error(`blockx up exited:\n${up.output.text().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('blockx up runs the jobs of its config', () => {
  let up: BlockxUp;

  beforeAll(async () => {
    writeFileSync(
      CONFIG,
      `${readFileSync(path.join(REPO, 'blockx.config.yaml'), 'utf8').replace(/^ {2}dir: functions$/m, `  dir: ${REPO}/functions`)}\n` +
        `jobs:\n  transfers:\n    template: ${path.join(REPO, 'examples/tasks/block-table-transfers.json')}\n` +
        `    from: 1\n    finality: 5\n    pollIntervalMs: 200\n` +
        `    restartInitialBackoffMs: 300\n    restartMaxBackoffMs: 60000\n`,
    );
    const gen = await blockx(['data', 'generate', '--chain', '1', '--blocks', '30']);
    expect(gen.code, gen.stderr).toBe(0);
    up = await startBlockxUp({ ...env(), BLOCKX_PROMETHEUS_LISTEN_ADDR: '127.0.0.1:0' }, [
      '--config',
      CONFIG,
    ]);
  }, 240_000);

  afterAll(async () => {
    if (up) await stopGroup(up.child, 'SIGKILL', 1_000);
    rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it(
    'follows the chain, restarts a failed runner with backoff, and stops with up',
    async () => {
      expect(up.output.text()).toMatch(/job transfers: following .*block-table-transfers\.json from block 1/);
      await until(
        'the output equal to the canonical chain',
        () => {
          const { output, expected } = outputAndExpected();
          return expected.length > 0 && JSON.stringify(output) === JSON.stringify(expected);
        },
        up,
      );
      const listed = await blockx(['jobs', 'list', '--json']);
      expect(listed.code, listed.stderr).toBe(0);
      const job = JSON.parse(listed.stdout.trim()) as Record<string, unknown>;
      expect(job).toMatchObject({ state: 'running', head: 30, runner: expect.stringMatching(/pid \d+/) });

      // Visible: blockx status lists the job with its head, finalized height and lag; Prometheus the same.
      const status = await blockx(['status', '--json', '--coordinator', up.coordinator]);
      expect(status.code, status.stderr).toBe(0);
      expect((JSON.parse(status.stdout) as { jobs: unknown[] }).jobs).toEqual([
        expect.objectContaining({
          jobId: job.jobId,
          chainId: 1,
          state: 'running',
          head: 30,
          finalized: 25,
          lagBlocks: 0,
          lagSeconds: 0,
          reorgs: 0,
          lastError: null,
        }),
      ]);
      const metricsUrl = /metrics on (http:\/\/\S+)/.exec(up.output.text())?.[1] ?? '';
      const scraped = await (await fetch(metricsUrl)).text();
      const series = (name: string) =>
        new RegExp(`^${name}\\{[^}]*job_id="${String(job.jobId)}"[^}]*\\} (\\S+)$`, 'm').exec(scraped)?.[1];
      expect(series('blockx_follow_head_block')).toBe('30');
      expect(series('blockx_follow_finalized_block')).toBe('25');
      expect(series('blockx_follow_lag_blocks')).toBe('0');
      expect(series('blockx_follow_reorgs_total')).toBe('0');
      expect(series('blockx_follow_running')).toBe('1');

      // Block 25 (final: head 30, finality 5; the one below the cursor, read on every pass) changes hash:
      // the runner stops with REORG_BEYOND_FINALITY,
      // and the supervisor starts it again, 300 ms, then 600 ms later (each restart stops the same way).
      rehashCanonicalBlock(DB, 25, '0xdeep');
      await until(
        'two restarts',
        () => /restarting in 600 ms \(2 failure\(s\) in a row\)/.test(up.output.text()),
        up,
      );
      const text = up.output.text();
      expect(text).toMatch(
        /job transfers: .*block 25 was final with hash 0x[0-9a-f]+, the chain tables now say 0xdeep/,
      );
      expect(text).toMatch(
        /job transfers: the runner exited 1; restarting in 300 ms \(1 failure\(s\) in a row\)/,
      );
      const shown = JSON.parse((await blockx(['jobs', 'show', String(job.jobId)])).stdout) as Record<
        string,
        unknown
      >;
      expect(String(shown.lastError)).toContain('block 25 was final');
      // Between two restarts the job is failed with its error (a restarted run clears it until it fails
      // again): status and the metrics say so once they are read in such a moment.
      let statusText = '';
      let scrapedFailed = '';
      const failedRe = new RegExp(
        `^blockx_follow_failed\\{[^}]*job_id="${String(job.jobId)}"[^}]*\\} 1$`,
        'm',
      );
      await until(
        'status and metrics showing the failed job',
        async () => {
          statusText = (await blockx(['status', '--coordinator', up.coordinator])).stdout;
          scrapedFailed = await (await fetch(metricsUrl)).text();
          return /block 25 was final/.test(statusText) && failedRe.test(scrapedFailed);
        },
        up,
      );
      expect(statusText).toMatch(/^jobs:$/m);
      expect(statusText).toMatch(new RegExp(`${String(job.jobId)} +1 +failed +30 +25 `));
      up.child.kill('SIGTERM');
      await waitForExit(up.child);
      expect(up.child.exitCode, up.output.text().slice(-3000)).toBe(0);
    },
    3 * STEP,
  );
});
