// bench/backfill's view of the output table, on the raw driver (not BlockX's storage backend, which is
// under test): clear it between runs, and fingerprint it (row count + SHA-256 of every row in key order)
// so a BlockX run can be checked to leave exactly the floor's rows.
import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import pg from 'pg';
import { TRANSFER_COLUMNS } from './backfill-floor.js';

export interface TableFingerprint {
  readonly rows: number;
  readonly sha256: string;
}

export interface OutputTable {
  /** Deletes every token_transfers row of the chain. */
  clear(chainId: number): Promise<void>;
  fingerprint(): Promise<TableFingerprint>;
  close(): Promise<void>;
}

const SELECT_ALL = `SELECT ${TRANSFER_COLUMNS.join(', ')} FROM token_transfers ORDER BY chain_id, block_number, log_idx`;

function fingerprintOf(rows: Iterable<Record<string, unknown>>): TableFingerprint {
  const hash = createHash('sha256');
  let n = 0;
  for (const row of rows) {
    n++;
    hash.update(`${TRANSFER_COLUMNS.map((c) => String(row[c])).join('\t')}\n`);
  }
  return { rows: n, sha256: hash.digest('hex') };
}

/** `sqlite:PATH` or `postgres://…`, as BLOCKX_STORAGE_URL. */
export async function openOutputTable(storageUrl: string): Promise<OutputTable> {
  if (storageUrl.startsWith('sqlite:')) {
    const db = new Database(storageUrl.slice('sqlite:'.length));
    db.pragma('busy_timeout = 5000');
    return {
      clear: async (chainId) =>
        void db.prepare('DELETE FROM token_transfers WHERE chain_id = ?').run(chainId),
      fingerprint: async () => fingerprintOf(db.prepare<[], Record<string, unknown>>(SELECT_ALL).iterate()),
      close: async () => {
        db.close();
      },
    };
  }
  const client = new pg.Client({ connectionString: storageUrl });
  await client.connect();
  return {
    clear: async (chainId) =>
      void (await client.query('DELETE FROM token_transfers WHERE chain_id = $1', [chainId])),
    fingerprint: async () => fingerprintOf((await client.query<Record<string, unknown>>(SELECT_ALL)).rows),
    close: () => client.end(),
  };
}
