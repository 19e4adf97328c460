// The floor of bench/backfill on SQLite (backfill-floor.ts says what it does): better-sqlite3, prepared
// statements, one transaction per block, the same WAL journal and `synchronous = NORMAL` BlockX's SQLite
// backend uses (docs/storage.md), so both pay the same price per commit.
import Database from 'better-sqlite3';
import {
  TRANSFER_COLUMNS,
  TRANSFER_SELECTOR,
  decodeTransfer,
  noCanonicalBlock,
  timeFloor,
  type FloorEvent,
  type FloorJob,
  type FloorResult,
  type TransferRow,
} from './backfill-floor.js';

const parseTopics = (raw: unknown): unknown => (typeof raw === 'string' ? JSON.parse(raw) : raw);

export async function runSqliteFloor(file: string, job: FloorJob): Promise<FloorResult> {
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 5000');
    const canonical = db.prepare<[number, number], { hash: string }>(
      'SELECT hash FROM blocks WHERE chain_id = ? AND number = ? AND canonical = 1',
    );
    const events = db.prepare<[number, number, string, string], FloorEvent>(
      'SELECT chain_id, block_number, idx, contract_id, selector, topics, data FROM events ' +
        'WHERE chain_id = ? AND block_number = ? AND block_hash = ? AND selector = ? ORDER BY idx',
    );
    const remove = db.prepare('DELETE FROM token_transfers WHERE chain_id = ? AND block_number = ?');
    const insert = db.prepare(
      `INSERT INTO token_transfers (${TRANSFER_COLUMNS.join(', ')}) VALUES (${TRANSFER_COLUMNS.map(() => '?').join(', ')})`,
    );
    const replaceBlock = db.transaction((number: number, rows: readonly TransferRow[]) => {
      remove.run(job.chainId, number);
      for (const row of rows) insert.run(...row);
    });
    return await timeFloor(job, async () => {
      let decoded = 0;
      let written = 0;
      for (let number = job.from; number <= job.to; number++) {
        const blocks = canonical.all(job.chainId, number);
        if (blocks.length !== 1) throw noCanonicalBlock(job, number, blocks.length);
        const rows: TransferRow[] = [];
        for (const event of events.iterate(job.chainId, number, blocks[0]!.hash, TRANSFER_SELECTOR)) {
          decoded++;
          const row = decodeTransfer(event, parseTopics);
          if (row !== null) rows.push(row);
        }
        replaceBlock(number, rows);
        written += rows.length;
      }
      return { events: decoded, rows: written };
    });
  } finally {
    db.close();
  }
}
