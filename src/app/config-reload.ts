// Config changes without a restart (docs/configuration.md § Changing the config of a running process,
// docs/storage.md § Changing the config of a running cluster). `blockx up` and `blockx worker` read their
// config file again when it changes (a poll of its mtime every CONFIG_POLL_MS) or on SIGHUP, and apply
// what a running process can take:
//   - tables: added ones are created as `blockx db migrate` creates them and served at once; a change of
//     `writable` is taken; a change of a table's shape is refused with the migration it needs
//     (services/storage/table-changes.ts) and the running declaration keeps serving;
//   - function files need nothing: every task pins the functions folder's current content (code epochs,
//     docs/functions.md), so a changed or added function serves the next task;
//   - plugins: when a plugin package or the `plugins` section changed, the plugins are loaded again
//     (plugin-reload.ts); tasks already running keep the ones they started with;
//   - a field of the field table marked `reload: 'live'` is taken (the table's docs column says so per
//     field);
//   - everything else (deployments, storage, registry, plugins, ...) is named as taking effect after a
//     restart; the running config keeps serving.
// A file that no longer loads (invalid YAML, a schema error) is reported with its problems and changes
// nothing. Each reload says what it did in one line per change.
import { statSync, unwatchFile, watchFile } from 'node:fs';
import { CONFIG_FIELDS } from '../kernel/config-fields/index.js';
import type { BlockxConfig } from '../kernel/config-types.js';
import { planTableChanges, tablesAfter } from '../services/storage/table-changes.js';
import type { StorageBackend } from '../services/storage/types.js';
import type { SignalSource } from './signals.js';

/** How often the config file's modification time is looked at. */
export const CONFIG_POLL_MS = 500;

/**
 * Top-level sections whose changes wait for a restart, but for their fields marked `reload: 'live'` in
 * the field table (LIVE_FIELDS). `tables` has rules of its own (table-changes.ts).
 */
export const RESTART_SECTIONS = [
  'tls',
  'registry',
  'storage',
  'functions',
  'plugins',
  'observability',
  'up',
  'deployments',
  'sources',
  'jobs',
] as const;

/** Top-level fields (dotted paths) a running process takes on a reload: the field table says which. */
export const LIVE_FIELDS: readonly string[] = Object.freeze(
  CONFIG_FIELDS.filter((f) => f.section === 'top' && f.reload === 'live').map((f) => f.path),
);

export interface ConfigReloadOptions {
  /** Loads the file again, as at start (same path, environment and flags); throws when it is invalid. */
  readonly load: () => BlockxConfig;
  /** The config the process started with. */
  readonly running: BlockxConfig;
  /** Where added tables are created and served; absent: a table change waits for a restart. */
  readonly storage?: Pick<StorageBackend, 'tables' | 'serveTables'>;
  /** Loads the plugins again when they changed (plugin-reload.ts); absent: a change waits for a restart. */
  readonly plugins?: (next: BlockxConfig) => Promise<void>;
  /** One line per change applied, refused or deferred. */
  readonly report: (level: 'info' | 'warn' | 'error', line: string) => void;
}

/** Reads the config again and applies what it can; never throws. */
export function createConfigReload(opts: ConfigReloadOptions): () => Promise<void> {
  let running = opts.running;
  let chain = Promise.resolve();
  const once = async (): Promise<void> => {
    let next: BlockxConfig;
    try {
      next = opts.load();
    } catch (err) {
      opts.report(
        'error',
        `config reload: the file does not load; the running config keeps serving: ${(err as Error).message}`,
      );
      return;
    }
    const { storage } = opts;
    if (storage === undefined) {
      if (JSON.stringify(running.tables) !== JSON.stringify(next.tables))
        opts.report('warn', 'config reload: tables changed; they take effect after a restart');
    } else await applyTables(storage, next, opts.report);
    if (opts.plugins) await opts.plugins(next);
    else if (JSON.stringify(running.plugins) !== JSON.stringify(next.plugins))
      opts.report('warn', 'config reload: plugins changed; it takes effect after a restart');
    for (const section of RESTART_SECTIONS) {
      if (JSON.stringify(withoutLive(section, running)) !== JSON.stringify(withoutLive(section, next)))
        opts.report('warn', `config reload: ${section} changed; it takes effect after a restart`);
    }
    running = next;
  };
  // One reload at a time, in the order asked.
  return () => (chain = chain.then(once));
}

/** `config[section]` without its live fields (their changes are taken, so they do not count). */
function withoutLive(section: (typeof RESTART_SECTIONS)[number], config: BlockxConfig): unknown {
  const value = config[section];
  const live = LIVE_FIELDS.filter((f) => f.startsWith(`${section}.`));
  if (live.length === 0) return value;
  const copy = structuredClone(value) as Record<string, unknown>;
  for (const field of live) {
    const keys = field.split('.').slice(1);
    let at: Record<string, unknown> | undefined = copy;
    for (const key of keys.slice(0, -1)) at = at?.[key] as Record<string, unknown> | undefined;
    if (at) delete at[keys[keys.length - 1]!];
  }
  return copy;
}

/** Plans and applies the table changes of `next` (table-changes.ts), one line per change. */
async function applyTables(
  storage: Pick<StorageBackend, 'tables' | 'serveTables'>,
  next: BlockxConfig,
  report: ConfigReloadOptions['report'],
): Promise<void> {
  const served = storage.tables;
  const plan = planTableChanges(served, next.tables);
  for (const c of plan.changed) {
    report(
      'warn',
      `config reload: table "${c.table}" changed (${c.differences.join('; ')}): refused, a running ` +
        `cluster cannot change a table that may hold rows; it keeps serving as before. The migration it ` +
        `needs: ${c.migration.join(' ')}`,
    );
  }
  for (const name of plan.removed) {
    report(
      'warn',
      `config reload: table "${name}" is no longer declared: still served until a restart, nothing dropped`,
    );
  }
  if (plan.added.length === 0 && plan.updated.length === 0) return;
  try {
    await storage.serveTables(tablesAfter(served, next.tables, plan));
    for (const name of plan.added)
      report(
        'info',
        `config reload: table "${name}" created (as blockx db migrate does); tasks may use it now`,
      );
    for (const name of plan.updated) report('info', `config reload: table "${name}" updated`);
  } catch (err) {
    report(
      'error',
      `config reload: the new tables were not applied; the running config keeps serving: ${(err as Error).message}`,
    );
  }
}

/**
 * Calls `reload` when `file`'s modification time moves, and on SIGHUP (only on SIGHUP without a file:
 * the config came from the environment alone). Returns the function that stops both.
 */
export function watchConfigFile(
  file: string | undefined,
  reload: () => Promise<void>,
  source: SignalSource = process,
  intervalMs = CONFIG_POLL_MS,
): () => void {
  const onHangup = (): void => void reload();
  source.on('SIGHUP', onHangup);
  if (file === undefined) return () => void source.off('SIGHUP', onHangup);
  let seen = mtimeOf(file);
  const onChange = (): void => {
    const now = mtimeOf(file);
    if (now === seen) return;
    seen = now;
    void reload();
  };
  watchFile(file, { interval: intervalMs, persistent: false }, onChange);
  return () => {
    unwatchFile(file, onChange);
    source.off('SIGHUP', onHangup);
  };
}

function mtimeOf(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}
