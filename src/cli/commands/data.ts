// `blockx data generate` (a synthetic chain into the block tables) and `blockx data load` (JSON lines into
// any declared table). Both open the configured storage (BLOCKX_STORAGE_URL overrides the file), create
// missing tables first, and write in transactions, so an interrupted run leaves whole chunks or nothing.
import { open } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import type { BlockxConfig, TableConfig } from '../../kernel/config-types.js';
import type { StorageBackend } from '../../services/storage/types.js';
import { CONFIG_FLAG, EXIT, UsageError, type CliIo } from '../io.js';
import { loadCliConfig, migrateReporting, withStorage } from './db.js';

const MAX_PRINTED_PROBLEMS = 100;

function nonNegativeInt(flag: string, text: string, min = 0): number {
  const n = /^\d+$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < min)
    throw new UsageError(`${flag} must be an integer >= ${min}, got ${JSON.stringify(text)}`);
  return n;
}

export function registerDataCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  const data = program.command('data').description('generate or load block data');

  data
    .command('generate')
    .description('write a deterministic synthetic chain into the block tables (re-runs give the same tables)')
    .requiredOption('--chain <id>', 'chain id')
    .requiredOption('--blocks <n>', 'how many heights')
    .option('--from <n>', 'first height (0 = genesis)', '1')
    .option('--seed <s>', 'PRNG seed: the same seed gives the same chain', '1')
    .option('--chunk <n>', 'heights per transaction', '100')
    .option(...CONFIG_FLAG)
    .action(async (opts: GenerateFlags) => {
      const args = {
        chainId: nonNegativeInt('--chain', opts.chain),
        blocks: nonNegativeInt('--blocks', opts.blocks, 1),
        fromBlock: nonNegativeInt('--from', opts.from),
        seed: nonNegativeInt('--seed', opts.seed),
        chunk: nonNegativeInt('--chunk', opts.chunk, 1),
      };
      const config = await loadCliConfig(opts.config, io);
      setExit(await generate(config, args, io));
    });

  data
    .command('load')
    .description('load a JSON-lines file (one row object per line; "-" = stdin) into a table, all or nothing')
    .argument('<file>', 'FILE.jsonl, or - for stdin')
    .requiredOption('-t, --table <name>', 'a table declared in the config')
    .option(
      '--skip-invalid',
      'load the valid lines and list the bad ones (default: a bad line loads nothing)',
    )
    .option(...CONFIG_FLAG)
    .action(async (file: string, opts: { table: string; skipInvalid?: boolean; config?: string }) => {
      const config = await loadCliConfig(opts.config, io);
      setExit(await load(config, file, opts.table, opts.skipInvalid === true, io));
    });
}

interface GenerateFlags {
  chain: string;
  blocks: string;
  from: string;
  seed: string;
  chunk: string;
  config?: string;
}

interface GenerateArgs {
  readonly chainId: number;
  readonly blocks: number;
  readonly fromBlock: number;
  readonly seed: number;
  readonly chunk: number;
}

async function generate(config: BlockxConfig, args: GenerateArgs, io: CliIo): Promise<number> {
  const bd = await import('../../services/storage/block-data/index.js');
  const { rowProblems } = await import('../../services/storage/row-check.js');
  const { StorageError, StorageErrorCode } = await import('../../services/storage/errors.js');
  // Before touching the database: the block tables are declared, and their columns fit the generator's
  // rows (a few blocks past genesis, so every table has rows to check).
  const sample = [...bd.syntheticChain({ ...args, fromBlock: Math.max(1, args.fromBlock), blocks: 3 })];
  for (const name of bd.BLOCK_TABLE_NAMES) {
    const table = bd.declaredTable(config.tables, name);
    const problems = sample.flatMap((b) =>
      bd.rowsOf(b, name).flatMap((row) => rowProblems(name, table, row)),
    );
    if (problems.length > 0)
      throw new StorageError(
        StorageErrorCode.BAD_VALUE,
        `the synthetic chain does not fit table "${name}" as the config declares it: ${[...new Set(problems)].join('; ')}`,
        { table: name },
      );
  }

  return withStorage(config, async (backend) => {
    if ((await migrateReporting(backend, io, 'data generate')) === undefined) return EXIT.FAILED;
    const started = performance.now();
    const totals = await bd.writeSyntheticChain(backend, config.tables, args);
    const end = args.fromBlock + args.blocks; // exclusive
    const seconds = (performance.now() - started) / 1000;
    const rows = totals.blocks + totals.transactions + totals.events + totals.traces;
    const fmt = (n: number) => n.toLocaleString('en-US');
    io.stdout(
      `generated chain ${args.chainId} heights ${args.fromBlock}..${end - 1} (seed ${args.seed}) into ${backend.displayUrl}\n` +
        `  blocks        ${fmt(totals.blocks)} (${fmt(totals.siblings)} non-canonical)\n` +
        `  transactions  ${fmt(totals.transactions)}\n` +
        `  events        ${fmt(totals.events)}\n` +
        `  traces        ${fmt(totals.traces)}\n` +
        `  ${fmt(rows)} rows in ${seconds.toFixed(2)} s (${fmt(Math.round(rows / Math.max(seconds, 1e-3)))} rows/s)\n`,
    );
    return EXIT.OK;
  });
}

async function load(
  config: BlockxConfig,
  file: string,
  tableName: string,
  skipInvalid: boolean,
  io: CliIo,
): Promise<number> {
  const { declaredTable } = await import('../../services/storage/block-data/index.js');
  const tableConfig = declaredTable(config.tables, tableName);
  const source = file === '-' ? 'stdin' : file;
  let input: NodeJS.ReadableStream & { destroy?: () => void };
  if (file === '-') input = process.stdin;
  else {
    try {
      // Opened before the database is touched: a missing file is reported plainly, not mid-stream.
      input = (await open(file, 'r')).createReadStream();
    } catch (err) {
      io.stderr(`blockx data load: cannot read ${file}: ${(err as Error).message}\n`);
      return EXIT.FAILED;
    }
  }
  try {
    return await loadInto(config, input, source, tableName, tableConfig, skipInvalid, io);
  } finally {
    if (input !== process.stdin) input.destroy?.();
  }
}

async function loadInto(
  config: BlockxConfig,
  input: NodeJS.ReadableStream,
  source: string,
  tableName: string,
  tableConfig: TableConfig,
  skipInvalid: boolean,
  io: CliIo,
): Promise<number> {
  const { loadJsonl } = await import('../../services/storage/block-data/index.js');
  return withStorage(config, async (backend: StorageBackend) => {
    if ((await migrateReporting(backend, io, 'data load')) === undefined) return EXIT.FAILED;
    const lines = createInterface({ input, crlfDelay: Infinity });
    const started = performance.now();
    const report = await loadJsonl({
      backend,
      table: tableName,
      tableConfig,
      lines,
      source,
      skipInvalid,
      printCap: MAX_PRINTED_PROBLEMS,
    }).finally(() => lines.close());
    const seconds = ((performance.now() - started) / 1000).toFixed(2);
    if (report.bad.count > 0)
      io.stderr(
        report.bad
          .messages()
          .map((m) => `${m}\n`)
          .join(''),
      );
    if (report.bad.count > 0 && !skipInvalid) {
      io.stderr(
        `blockx data load: ${report.bad.count} bad line${report.bad.count === 1 ? '' : 's'} in ${source}; ` +
          `nothing was loaded (--skip-invalid loads the valid lines)\n`,
      );
      return EXIT.FAILED;
    }
    io.stdout(
      `loaded ${report.loadedRows} row${report.loadedRows === 1 ? '' : 's'} into ${tableName} from ${source} ` +
        `(${report.lines} lines) in ${seconds} s\n`,
    );
    if (report.bad.count > 0)
      io.stdout(
        `skipped ${report.bad.count} bad line${report.bad.count === 1 ? '' : 's'}: ${report.bad.lineList()}\n`,
      );
    return EXIT.OK;
  });
}
