// The storage side of a Worker process: the backend named by `storage.url` (SQLite by default,
// PostgreSQL for clusters), its tables created or checked against the config (`migrate`: missing tables
// are created, a table that differs from the config stops the process with every difference listed —
// nothing is ever altered), and the task IO scope factory over it. The factory's `callIoHandler` serves
// `ctx.io` reads of running functions; the executor runtime gets it.
//
// `blockx up` opens the backend once and gives each of its workers a factory over it (`shared`), so the
// workers of one process share one SQLite connection and one admission budget.

import type { BlockxConfig } from '../../../kernel/config-types.js';
import { openStorage } from '../../storage/open-storage.js';
import type { StorageBackend } from '../../storage/types.js';
import { StorageIoScopeFactory } from '../adapters/io/index.js';
import type { ServiceLogger } from '../../../kernel/observability/service-logger.js';

export interface StorageRuntime {
  readonly backend: StorageBackend;
  /** A factory per worker; every one of them is closed by `close()`. */
  scopesForWorker(): StorageIoScopeFactory;
  /** Closes the factories (open scopes are cancelled), then the backend. Idempotent. */
  close(): Promise<void>;
}

/** Opens and migrates the configured storage. Rejects (closing what it opened) on any failure. */
export async function startStorageRuntime(ctx: {
  readonly config: BlockxConfig;
  readonly logger: ServiceLogger;
}): Promise<StorageRuntime> {
  const { config, logger } = ctx;
  const backend = await openStorage(config.storage, config.tables, { baseDir: config.baseDir });
  try {
    const report = await backend.migrate();
    logger.info(
      { storage: backend.displayUrl, created: report.created, unchanged: report.unchanged.length },
      report.created.length > 0 ? 'storage ready: created missing tables' : 'storage ready',
    );
  } catch (err) {
    await backend.close();
    throw err;
  }
  const factories: StorageIoScopeFactory[] = [];
  let closed: Promise<void> | undefined;
  return {
    backend,
    scopesForWorker() {
      const factory = new StorageIoScopeFactory({ backend, storage: config.storage });
      factories.push(factory);
      return factory;
    },
    close() {
      closed ??= (async () => {
        for (const f of factories) await f.close();
        await backend.close();
      })();
      return closed;
    },
  };
}
