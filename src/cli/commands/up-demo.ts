// The demo of `blockx up` (`npm start`): the main job BlockX is for, on data it makes itself.
//
//   1. The demo chain (DEMO_BLOCKS heights of chain DEMO_CHAIN, seed 1) is generated into the configured
//      storage when it is not there yet, so a fresh clone or a fresh `blockx init` project has data.
//   2. A backfill of every block of it through the Coordinator, exactly as `blockx backfill` runs one
//      (runBlockJob: a line per block, the progress line on a terminal, the summary): erc20_transfers
//      over each block's Transfer events (BlockTableCallConfig) → BlockWriteResultHandler into
//      `token_transfers`. Fresh each time (the writes are idempotent, so a second run rewrites the same
//      rows), so the demo always shows the job running rather than "20 skipped".
//   3. The rows checked against a direct decode of the same events, a few of them printed, then where to
//      look next: the rows in the database, the dashboard, and the command that runs the same job.
//
// Its needs come from the config and the functions folder: the chain tables, `token_transfers`, and
// functions/erc20_transfers. A project without them (a config of its own) gets a line saying what the
// demo needs and `blockx up` carries on.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Kernel } from '../../kernel/kernel.js';
import type { BlockxConfig } from '../../kernel/config-types.js';
import type { StorageBackend } from '../../services/storage/types.js';
import type { CliIo } from '../io.js';
import { EXIT } from '../io.js';
import { DEFAULT_STATE_DIR, runBlockJob, templateOf } from './backfill.js';

export const DEMO_CHAIN = 1;
export const DEMO_BLOCKS = 20;
const DEMO_FUNCTION = 'erc20_transfers';
const DEMO_TABLES = ['blocks', 'transactions', 'events', 'traces', 'token_transfers'] as const;
/** Blocks in flight: enough to keep two Workers busy on the demo's small blocks. */
const DEMO_CONCURRENCY = 8;
/**
 * Task-level retries of a block (`blockx backfill --retries 5`): on a busy machine the Coordinator may
 * answer "no capacity" (a Worker over its CPU red line) for a while, and the demo should ride that out.
 */
const DEMO_RETRIES = 5;
const DEMO_CONNECT_TIMEOUT_MS = 10_000;
/** Rows of token_transfers printed after the backfill. */
const SHOWN_ROWS = 3;

/** Generates the demo chain unless every one of its heights is present already. */
export async function ensureDemoChain(
  backend: StorageBackend,
  config: BlockxConfig,
  io: CliIo,
): Promise<void> {
  let present = 0;
  for await (const page of backend.scan('blocks', {
    where: { chain_id: DEMO_CHAIN, canonical: true },
    blockRange: { from: 1, to: DEMO_BLOCKS },
    columns: ['number'],
  }))
    present += page.length;
  if (present >= DEMO_BLOCKS) return;
  const { writeSyntheticChain } = await import('../../services/storage/block-data/index.js');
  const t = await writeSyntheticChain(backend, config.tables, {
    chainId: DEMO_CHAIN,
    fromBlock: 1,
    blocks: DEMO_BLOCKS,
    seed: 1,
    chunk: DEMO_BLOCKS,
  });
  io.stdout(
    `demo chain: generated ${t.blocks} blocks, ${t.transactions} transactions, ${t.events} events of chain ${DEMO_CHAIN} into ${backend.displayUrl}\n`,
  );
}

/** The backfill template of the demo: the block selectors are filled per block by the backfill. */
function demoTemplate(selector: string): Record<string, unknown> {
  return {
    functionCallConfig: {
      type: 'BlockTableCallConfig',
      config: {
        function: DEMO_FUNCTION,
        table: 'events',
        chainId: DEMO_CHAIN,
        block: { number: 1 },
        where: { selector },
      },
    },
    resultHandler: {
      type: 'BlockWriteResultHandler',
      config: { table: 'token_transfers', chainId: DEMO_CHAIN, block: { number: 1 } },
    },
    taskTimeoutMs: 30_000,
  };
}

/** What the demo lacks in this config and functions folder, or undefined when it can run. */
export function demoMissing(config: BlockxConfig): string | undefined {
  const tables = DEMO_TABLES.filter((t) => config.tables[t] === undefined);
  if (tables.length > 0) return `the config declares no ${tables.join(', ')} table(s)`;
  const sources = ['ts', 'js', 'mjs', 'py'].map((ext) =>
    path.join(config.functions.dir, `${DEMO_FUNCTION}.${ext}`),
  );
  if (!sources.some((file) => existsSync(file)))
    return `${config.functions.dir} has no ${DEMO_FUNCTION} function`;
  return undefined;
}

export interface DemoContext {
  readonly coordinator: string;
  readonly kernel: Kernel;
  readonly backend: StorageBackend;
  /** The dashboard's URL, '' when none is served. */
  readonly dashboardUrl: string;
  /** `--once`: the cluster stops after the demo. */
  readonly once: boolean;
  readonly io: CliIo;
}

/** Runs the demo backfill through the Coordinator; true when every block succeeded and the rows check out. */
export async function runDemo(ctx: DemoContext): Promise<boolean> {
  const { kernel, backend, io } = ctx;
  const config = kernel.config;
  const missing = demoMissing(config);
  if (missing !== undefined) {
    io.stdout(
      `demo: skipped: ${missing} (it needs the chain tables, token_transfers and functions/${DEMO_FUNCTION}; \`blockx init\` makes a project with them)\n`,
    );
    return true;
  }
  await ensureDemoChain(backend, config, io);
  const [{ ERC20_TRANSFER_SELECTOR, tokenTransfersOf }, checks] = await Promise.all([
    import('../../services/storage/block-data/index.js'),
    import('../../kernel/task-validation.js'),
  ]);
  const where = 'the demo template';
  const template = templateOf(demoTemplate(ERC20_TRANSFER_SELECTOR), kernel, where, io, checks);
  if (template === undefined) return false;
  io.stdout(
    `demo: backfill of blocks 1..${DEMO_BLOCKS} of chain ${DEMO_CHAIN} through the coordinator: ` +
      `${DEMO_FUNCTION} over each block's events (BlockTableCallConfig) → token_transfers (BlockWriteResultHandler)\n`,
  );
  const code = await runBlockJob({
    command: 'backfill',
    where,
    template,
    range: { from: 1, to: DEMO_BLOCKS },
    per: 'block',
    run: {
      coordinator: ctx.coordinator,
      concurrency: DEMO_CONCURRENCY,
      retries: DEMO_RETRIES,
      stateDir: DEFAULT_STATE_DIR,
      fresh: true,
      connectTimeoutMs: DEMO_CONNECT_TIMEOUT_MS,
    },
    kernel,
    io,
  });
  if (code !== EXIT.OK) {
    io.stdout('demo: the backfill did not complete (the lines above say which blocks failed and why)\n');
    return false;
  }

  // The rows against a direct decode of the canonical blocks' events.
  const written = await rows(backend, 'token_transfers', { where: { chain_id: DEMO_CHAIN } });
  const canonical = await rows(backend, 'blocks', { where: { chain_id: DEMO_CHAIN, canonical: true } });
  let expected = 0;
  for (const block of canonical) {
    const events = await rows(backend, 'events', {
      where: { chain_id: DEMO_CHAIN, block_number: block.number, block_hash: block.hash },
    });
    expected += tokenTransfersOf(events as never[]).length;
  }
  if (written.length !== expected) {
    io.stdout(
      `demo: token_transfers holds ${written.length} rows of chain ${DEMO_CHAIN}, expected ${expected}\n`,
    );
    return false;
  }
  io.stdout(
    `demo: SUCCEEDED: token_transfers holds ${written.length} rows for blocks 1..${DEMO_BLOCKS}, as decoding their events directly gives; the first ${Math.min(SHOWN_ROWS, written.length)}:\n`,
  );
  for (const row of written.slice(0, SHOWN_ROWS)) io.stdout(`  ${JSON.stringify(row)}\n`);
  io.stdout(nextSteps(backend.displayUrl, ctx, io.cwd()));
  return true;
}

/** Where to look next: the rows, the dashboard, and the command that runs the same job. */
function nextSteps(storageUrl: string, ctx: DemoContext, cwd: string): string {
  const query = `SELECT * FROM token_transfers ORDER BY block_number, log_idx LIMIT 10`;
  const sqlite = /^sqlite:(?!:memory:)(.+)$/.exec(storageUrl);
  const look = sqlite
    ? `sqlite3 ${sqlite[1]} "${query}"`
    : storageUrl.startsWith('postgres')
      ? `psql "${storageUrl}" -c "${query}"`
      : undefined;
  const template = ['tasks/transfers.json', 'examples/tasks/block-table-transfers.json'].find((t) =>
    existsSync(path.join(cwd, t)),
  );
  const again = template && `npx blockx backfill ${template} --from 1 --to ${DEMO_BLOCKS}`;
  const lines = ['next:'];
  if (look) lines.push(`  the rows:      ${look}`);
  if (ctx.once) {
    lines.push('  the dashboard: npx blockx up serves one (its address is printed) until Ctrl-C');
    if (again) lines.push(`  then try:      ${again}   (in another terminal, while it serves)`);
  } else {
    if (ctx.dashboardUrl !== '')
      lines.push(`  the dashboard: ${ctx.dashboardUrl} (workers, tasks and backfill jobs, live)`);
    if (again) lines.push(`  then try:      ${again}   (in another terminal)`);
  }
  return `${lines.join('\n')}\n`;
}

async function rows(
  backend: StorageBackend,
  table: string,
  query: { where: Record<string, unknown> },
): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for await (const page of backend.scan(table, query)) out.push(...page);
  return out;
}
