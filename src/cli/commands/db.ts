// `blockx db migrate [--check]`: creates the declared tables the database lacks (with their block-column
// index), or with --check only compares. Existing tables are never altered: any difference from the
// config (column type, nullability, missing/extra column, primary key) is printed, one line each, and the
// command exits 1. Also the storage helpers the `data` commands share (open, migrate, report a mismatch).
import type { Command } from 'commander';
import type { BlockxConfig } from '../../kernel/config-types.js';
import type { MigrationReport, StorageBackend } from '../../services/storage/types.js';
import { CONFIG_FLAG, EXIT, type CliIo } from '../io.js';
import { renderTable } from '../table.js';

/** The config as every command loads it: --config, else BLOCKX_CONFIG, else the search; env overrides. */
export async function loadCliConfig(configPath: string | undefined, io: CliIo): Promise<BlockxConfig> {
  const { loadConfig } = await import('../../kernel/config.js');
  return loadConfig({ configPath, cwd: io.cwd(), env: io.env });
}

/** Opens the configured storage (BLOCKX_STORAGE_URL already applied), runs `fn`, always closes it. */
export async function withStorage<T>(
  config: BlockxConfig,
  fn: (backend: StorageBackend) => Promise<T>,
): Promise<T> {
  const { openStorage } = await import('../../services/storage/open-storage.js');
  const backend = await openStorage(config.storage, config.tables, { baseDir: config.baseDir });
  try {
    return await fn(backend);
  } finally {
    await backend.close();
  }
}

/**
 * Runs migrate; a SCHEMA_MISMATCH is printed (every difference) and yields undefined, so the caller exits
 * 1 without a stack trace. Other errors propagate.
 */
export async function migrateReporting(
  backend: StorageBackend,
  io: CliIo,
  command: string,
  opts: { readonly checkOnly?: boolean } = {},
): Promise<MigrationReport | undefined> {
  const { StorageError, StorageErrorCode } = await import('../../services/storage/errors.js');
  try {
    return await backend.migrate(opts);
  } catch (err) {
    if (!(err instanceof StorageError) || err.code !== StorageErrorCode.SCHEMA_MISMATCH) throw err;
    const differences = err.details.differences ?? [err.message];
    io.stderr(
      `blockx ${command}: the database ${backend.displayUrl} differs from the config ` +
        `(${differences.length} difference${differences.length === 1 ? '' : 's'}); nothing was changed:\n` +
        differences.map((d) => `  - ${d}\n`).join(''),
    );
    return undefined;
  }
}

export function registerDbCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  const db = program.command('db').description('manage the storage database (tables declared in the config)');
  db.command('migrate')
    .description('create the declared tables the database lacks; check the others against the config')
    .option(...CONFIG_FLAG)
    .option('--check', 'only compare: create nothing; a missing table is a difference')
    .action(async (opts: { config?: string; check?: boolean }) => {
      const config = await loadCliConfig(opts.config, io);
      const checkOnly = opts.check === true;
      const report = await withStorage(config, (backend) =>
        migrateReporting(backend, io, 'db migrate', { checkOnly }).then((r) => {
          if (r !== undefined) io.stdout(`storage ${backend.displayUrl}\n`);
          return r;
        }),
      );
      if (report === undefined) return setExit(EXIT.FAILED);
      const rows = [
        ...report.created.map((table) => ({ table, status: 'created' })),
        ...report.unchanged.map((table) => ({ table, status: checkOnly ? 'ok' : 'unchanged' })),
      ];
      if (rows.length > 0) io.stdout(renderTable(['table', 'status'], rows));
      io.stdout(
        checkOnly
          ? `all ${report.unchanged.length} declared tables match the config\n`
          : `${report.created.length} created, ${report.unchanged.length} unchanged\n`,
      );
      setExit(EXIT.OK);
    });
}
