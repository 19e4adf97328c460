// Config changes without a restart (docs/storage.md § Changing the config of a running cluster).
// `blockx up` reads its config file again when it changes (a poll of its mtime every CONFIG_POLL_MS) or
// on SIGHUP, and applies what a running process can take:
//   - tables: added ones are created as `blockx db migrate` creates them and served at once; a change of
//     `writable` is taken; a change of a table's shape is refused with the migration it needs
//     (services/storage/table-changes.ts) and the running declaration keeps serving;
//   - function files need nothing: every task pins the functions folder's current content (code epochs,
//     docs/functions.md), so a changed or added function serves the next task;
//   - everything else (deployments, storage, registry, plugins, ...) is named as taking effect after a
//     restart; the running config keeps serving.
// A file that no longer loads (invalid YAML, a schema error) is reported with its problems and changes
// nothing. Each reload says what it did in one line per change.
import { statSync, unwatchFile, watchFile } from 'node:fs';
import type { BlockxConfig } from '../kernel/config-types.js';
import { planTableChanges, tablesAfter } from '../services/storage/table-changes.js';
import type { StorageBackend } from '../services/storage/types.js';

/** How often the config file's modification time is looked at. */
export const CONFIG_POLL_MS = 500;

/** Top-level sections a running process does not take; a change to one waits for a restart. */
const RESTART_SECTIONS = [
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

export interface ConfigReloadOptions {
  /** Loads the file again, as at start (same path, environment and flags); throws when it is invalid. */
  readonly load: () => BlockxConfig;
  /** The config the process started with. */
  readonly running: BlockxConfig;
  readonly storage: Pick<StorageBackend, 'tables' | 'serveTables'>;
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
    const served = opts.storage.tables;
    const plan = planTableChanges(served, next.tables);
    for (const c of plan.changed) {
      opts.report(
        'warn',
        `config reload: table "${c.table}" changed (${c.differences.join('; ')}): refused, a running ` +
          `cluster cannot change a table that may hold rows; it keeps serving as before. The migration it ` +
          `needs: ${c.migration.join(' ')}`,
      );
    }
    for (const name of plan.removed) {
      opts.report(
        'warn',
        `config reload: table "${name}" is no longer declared: still served until a restart, nothing dropped`,
      );
    }
    if (plan.added.length > 0 || plan.updated.length > 0) {
      try {
        await opts.storage.serveTables(tablesAfter(served, next.tables, plan));
        for (const name of plan.added)
          opts.report(
            'info',
            `config reload: table "${name}" created (as blockx db migrate does); tasks may use it now`,
          );
        for (const name of plan.updated) opts.report('info', `config reload: table "${name}" updated`);
      } catch (err) {
        opts.report(
          'error',
          `config reload: the new tables were not applied; the running config keeps serving: ${(err as Error).message}`,
        );
      }
    }
    for (const section of RESTART_SECTIONS) {
      if (JSON.stringify(running[section]) !== JSON.stringify(next[section]))
        opts.report('warn', `config reload: ${section} changed; it takes effect after a restart`);
    }
    running = next;
  };
  // One reload at a time, in the order asked.
  return () => (chain = chain.then(once));
}

/**
 * Calls `reload` when `file`'s modification time moves, and on SIGHUP. Returns the function that stops
 * both.
 */
export function watchConfigFile(
  file: string,
  reload: () => Promise<void>,
  source: Pick<NodeJS.Process, 'on' | 'off'> = process,
  intervalMs = CONFIG_POLL_MS,
): () => void {
  let seen = mtimeOf(file);
  const onChange = (): void => {
    const now = mtimeOf(file);
    if (now === seen) return;
    seen = now;
    void reload();
  };
  const onHangup = (): void => void reload();
  watchFile(file, { interval: intervalMs, persistent: false }, onChange);
  source.on('SIGHUP', onHangup);
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
