// The floor of bench/backfill: what a user would write instead of BlockX to fill token_transfers — one
// process, the database driver and nothing else. It imports nothing from src/ (nor functions/): it is
// the baseline BlockX is judged by, so none of BlockX's code may speed it up or slow it down.
//
// Block after block (backfill-floor-sqlite.ts on better-sqlite3, backfill-floor-postgres.ts on pg):
//   1. the canonical block at the height (blocks: chain_id, number, canonical);
//   2. its Transfer events (events: chain_id, block_number, block_hash, selector = TRANSFER_SELECTOR —
//      the per-block template's `where`);
//   3. decodeTransfer on each, the same checks and output as functions/erc20_transfers.ts (the bench
//      compares the two tables row for row, so a drift shows as a failed run);
//   4. one transaction: delete the block's token_transfers rows, insert the decoded ones.

/** keccak("Transfer(address,address,uint256)"), as functions/erc20_transfers.ts names it. */
export const TRANSFER_SELECTOR = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

const WORD = /^0x[0-9a-fA-F]{64}$/;
const ADDRESS_WORD = /^0x0{24}([0-9a-fA-F]{40})$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** An events row as the driver returns it (topics: JSON text on SQLite, parsed jsonb on PostgreSQL). */
export interface FloorEvent {
  readonly chain_id: number;
  readonly block_number: number | string;
  readonly idx: number;
  readonly contract_id: string;
  readonly selector: string;
  readonly topics: unknown;
  readonly data: unknown;
}

/** A token_transfers row, columns in table order. */
export type TransferRow = readonly [
  chainId: number,
  blockNumber: number | string,
  logIdx: number,
  token: string,
  from: string,
  to: string,
  amount: string,
];

export const TRANSFER_COLUMNS = [
  'chain_id',
  'block_number',
  'log_idx',
  'token',
  'from_address',
  'to_address',
  'amount',
] as const;

/** The ERC-20 Transfer an event encodes, or null (ERC-721's four topics, a malformed word, …). */
export function decodeTransfer(event: FloorEvent, topicsOf: (raw: unknown) => unknown): TransferRow | null {
  const topics = topicsOf(event.topics);
  const { data, contract_id: token } = event;
  if (!Array.isArray(topics) || topics.length !== 3) return null;
  const [selector, fromWord, toWord] = topics as unknown[];
  if (typeof selector !== 'string' || selector.toLowerCase() !== TRANSFER_SELECTOR) return null;
  if (event.selector.toLowerCase() !== TRANSFER_SELECTOR) return null;
  const from = typeof fromWord === 'string' ? ADDRESS_WORD.exec(fromWord)?.[1] : undefined;
  const to = typeof toWord === 'string' ? ADDRESS_WORD.exec(toWord)?.[1] : undefined;
  if (from === undefined || to === undefined) return null;
  if (typeof token !== 'string' || !ADDRESS.test(token)) return null;
  if (typeof data !== 'string' || !WORD.test(data)) return null;
  return [
    event.chain_id,
    event.block_number,
    event.idx,
    token.toLowerCase(),
    `0x${from.toLowerCase()}`,
    `0x${to.toLowerCase()}`,
    BigInt(data).toString(),
  ];
}

export interface FloorJob {
  readonly chainId: number;
  readonly from: number;
  /** Inclusive. */
  readonly to: number;
}

export interface FloorResult {
  readonly blocks: number;
  /** Events decoded: the calls a per-block BlockX job makes. */
  readonly events: number;
  /** token_transfers rows written. */
  readonly rows: number;
  /** From the first query to the last commit (the connection is open before). */
  readonly seconds: number;
  /** This process's CPU over the same span, user + system, in ms. */
  readonly cpuMs: number;
}

/** Times `loop` (wall and this process's CPU) and shapes its counts into a FloorResult. */
export async function timeFloor(
  job: FloorJob,
  loop: () => Promise<{ events: number; rows: number }>,
): Promise<FloorResult> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const { events, rows } = await loop();
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return { blocks: job.to - job.from + 1, events, rows, seconds, cpuMs: (used.user + used.system) / 1000 };
}

export function noCanonicalBlock(job: FloorJob, number: number, found: number): Error {
  return new Error(`floor: ${found} canonical blocks at height ${number} of chain ${job.chainId}`);
}
