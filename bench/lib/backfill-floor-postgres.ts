// The floor of bench/backfill on PostgreSQL (backfill-floor.ts says what it does): one pg client, one
// transaction per block (BEGIN, DELETE by block, one multi-row INSERT, COMMIT).
import pg from 'pg';
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

const asIs = (raw: unknown): unknown => raw; // jsonb arrives parsed

/** `INSERT … VALUES ($1, …, $7), ($8, …)` for `n` rows. */
function insertSql(n: number): string {
  const width = TRANSFER_COLUMNS.length;
  const tuples = Array.from(
    { length: n },
    (_, r) => `(${TRANSFER_COLUMNS.map((_c, c) => `$${r * width + c + 1}`).join(', ')})`,
  );
  return `INSERT INTO token_transfers (${TRANSFER_COLUMNS.join(', ')}) VALUES ${tuples.join(', ')}`;
}

export async function runPostgresFloor(url: string, job: FloorJob): Promise<FloorResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await timeFloor(job, async () => {
      let decoded = 0;
      let written = 0;
      for (let number = job.from; number <= job.to; number++) {
        const blocks = await client.query<{ hash: string }>({
          name: 'floor-canonical',
          text: 'SELECT hash FROM blocks WHERE chain_id = $1 AND number = $2 AND canonical',
          values: [job.chainId, number],
        });
        if (blocks.rows.length !== 1) throw noCanonicalBlock(job, number, blocks.rows.length);
        const events = await client.query<FloorEvent>({
          name: 'floor-events',
          text:
            'SELECT chain_id, block_number, idx, contract_id, selector, topics, data FROM events ' +
            'WHERE chain_id = $1 AND block_number = $2 AND block_hash = $3 AND selector = $4 ORDER BY idx',
          values: [job.chainId, number, blocks.rows[0]!.hash, TRANSFER_SELECTOR],
        });
        const rows: TransferRow[] = [];
        for (const event of events.rows) {
          decoded++;
          const row = decodeTransfer(event, asIs);
          if (row !== null) rows.push(row);
        }
        await client.query('BEGIN');
        try {
          await client.query({
            name: 'floor-delete',
            text: 'DELETE FROM token_transfers WHERE chain_id = $1 AND block_number = $2',
            values: [job.chainId, number],
          });
          if (rows.length > 0) await client.query(insertSql(rows.length), rows.flat());
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK');
          throw err;
        }
        written += rows.length;
      }
      return { events: decoded, rows: written };
    });
  } finally {
    await client.end();
  }
}
