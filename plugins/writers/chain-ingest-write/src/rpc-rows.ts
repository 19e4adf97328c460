// The node's JSON for one block → the rows of the chain tables (docs/ingest.md § From RPC fields to columns).
// Pure: no IO. Every field is checked as it is read (a quantity is 0x-hex, a hash 32 bytes, an address 20),
// and a bad one fails with the path of the field, so a node that answers nonsense never writes half a block.
//
// - blocks: one row, `canonical` true (the block came from asking the node for that height).
// - transactions: the block's transactions with their receipt's `status` and `gasUsed` merged; `value` in
//   decimal (wei exceed 2^53). A receipt must name its transaction and block: a mismatch is a reorg between
//   two answers, retryable.
// - events: the receipts' logs; `idx` = logIndex, `selector` = topics[0] or '' for a log without topics,
//   `contract_id` the lower-case address, `topics` the array, `data` the hex.
// - traces: trace_block's frames (block rewards, which belong to no transaction, are left out) or the call
//   tracer's call trees flattened depth first; `trace_address` is the frame's path, "" for the root, "0,1" for
//   the second child of the first child.
import type { BlockRow, EventRow, RawBlock, TraceRow, TransactionRow } from 'blockx/ingest';
import { ChainIngestError, ChainIngestErrorCode } from './errors.js';

/** A trace row; call_type is what the node says, lower-case (call, delegatecall, staticcall, create, create2…). */
export type IngestTraceRow = Omit<TraceRow, 'call_type'> & { call_type: string };

export interface BlockTableRows {
  readonly blocks: BlockRow[];
  readonly transactions: TransactionRow[];
  readonly events: EventRow[];
  /** undefined when the traces were skipped (the table is then left as it is). */
  readonly traces: IngestTraceRow[] | undefined;
}

type Json = Record<string, unknown>;

export function rowsOfBlock(raw: RawBlock, chainId: number): BlockTableRows {
  const b = raw.block;
  const number = quantity(b['number'], 'block.number');
  if (number !== raw.number) bad(`block.number is ${number}, asked for ${raw.number}`);
  const hash = hash32(b['hash'], 'block.hash');
  const txs = list(b['transactions'], 'block.transactions');
  const at = { chain_id: chainId, block_number: number, block_hash: hash };
  const block: BlockRow = {
    chain_id: chainId,
    number,
    hash,
    parent_hash: hash32(b['parentHash'], 'block.parentHash'),
    timestamp: quantity(b['timestamp'], 'block.timestamp'),
    miner: address(b['miner'], 'block.miner'),
    gas_used: quantity(b['gasUsed'], 'block.gasUsed'),
    gas_limit: quantity(b['gasLimit'], 'block.gasLimit'),
    tx_count: txs.length,
    canonical: true,
  };
  if (raw.receipts.length !== txs.length) {
    mismatch(
      `the block has ${txs.length} transactions but the node returned ${raw.receipts.length} receipts`,
    );
  }
  const transactions: TransactionRow[] = [];
  const events: EventRow[] = [];
  txs.forEach((value, i) => {
    const tx = record(value, `block.transactions[${i}]`);
    const receipt = raw.receipts[i] as Json;
    const path = `block.transactions[${i}]`;
    const txHash = hash32(tx['hash'], `${path}.hash`);
    if (hash32(receipt['transactionHash'], `receipts[${i}].transactionHash`) !== txHash) {
      mismatch(`receipt ${i} is for transaction ${String(receipt['transactionHash'])}, not ${txHash}`);
    }
    if (hash32(receipt['blockHash'], `receipts[${i}].blockHash`) !== hash) {
      mismatch(`receipt ${i} is from block ${String(receipt['blockHash'])}, not ${hash}`);
    }
    transactions.push({
      ...at,
      idx: i,
      hash: txHash,
      from_address: address(tx['from'], `${path}.from`),
      to_address: tx['to'] === null || tx['to'] === undefined ? null : address(tx['to'], `${path}.to`),
      value: decimal(tx['value'], `${path}.value`),
      gas_used: quantity(receipt['gasUsed'], `receipts[${i}].gasUsed`),
      // Receipts before Byzantium carry a state root instead of a status: they are counted as successful.
      status:
        receipt['status'] === undefined || receipt['status'] === null
          ? 1
          : quantity(receipt['status'], `receipts[${i}].status`),
      input: hex(tx['input'], `${path}.input`),
    });
    list(receipt['logs'], `receipts[${i}].logs`).forEach((l, j) => {
      const log = record(l, `receipts[${i}].logs[${j}]`);
      const lp = `receipts[${i}].logs[${j}]`;
      const topics = list(log['topics'], `${lp}.topics`).map((t, k) => hash32(t, `${lp}.topics[${k}]`));
      events.push({
        ...at,
        idx: quantity(log['logIndex'], `${lp}.logIndex`),
        tx_hash: txHash,
        contract_id: address(log['address'], `${lp}.address`),
        selector: topics[0] ?? '',
        topics,
        data: hex(log['data'], `${lp}.data`),
      });
    });
  });
  let traces: IngestTraceRow[] | undefined;
  if (raw.traces !== undefined) {
    traces =
      raw.traces.source === 'trace_block'
        ? parityTraces(raw.traces.data, at, hash)
        : callTracerTraces(raw.traces.data, at, txs.length);
  }
  return { blocks: [block], transactions, events, traces };
}

type At = { chain_id: number; block_number: number; block_hash: string };

function parityTraces(data: unknown, at: At, hash: string): IngestTraceRow[] {
  const rows: IngestTraceRow[] = [];
  list(data, 'trace_block').forEach((value, i) => {
    const t = record(value, `trace_block[${i}]`);
    const p = `trace_block[${i}]`;
    if (t['transactionPosition'] === undefined || t['transactionPosition'] === null) return; // a reward
    if (t['blockHash'] !== undefined && hash32(t['blockHash'], `${p}.blockHash`) !== hash) {
      mismatch(`trace ${i} is from block ${String(t['blockHash'])}, not ${hash}`);
    }
    const action = record(t['action'], `${p}.action`);
    const result =
      t['result'] === null || t['result'] === undefined ? undefined : record(t['result'], `${p}.result`);
    const type = text(t['type'], `${p}.type`);
    const traceAddress = list(t['traceAddress'], `${p}.traceAddress`).map((n, k) =>
      integer(n, `${p}.traceAddress[${k}]`),
    );
    const common = {
      ...at,
      tx_idx: integer(t['transactionPosition'], `${p}.transactionPosition`),
      trace_address: traceAddress.join(','),
      gas_used: result?.['gasUsed'] === undefined ? 0 : quantity(result['gasUsed'], `${p}.result.gasUsed`),
      error: t['error'] === undefined || t['error'] === null ? null : text(t['error'], `${p}.error`),
    };
    if (type === 'create') {
      rows.push({
        ...common,
        call_type: 'create',
        from_address: address(action['from'], `${p}.action.from`),
        to_address:
          result?.['address'] === undefined ? null : address(result['address'], `${p}.result.address`),
        value: decimal(action['value'], `${p}.action.value`),
        input: hex(action['init'], `${p}.action.init`),
        output: result?.['code'] === undefined ? null : hex(result['code'], `${p}.result.code`),
      });
    } else if (type === 'suicide' || type === 'selfdestruct') {
      rows.push({
        ...common,
        call_type: 'selfdestruct',
        from_address: address(action['address'], `${p}.action.address`),
        to_address: address(action['refundAddress'], `${p}.action.refundAddress`),
        value: decimal(action['balance'], `${p}.action.balance`),
        input: '0x',
        output: null,
      });
    } else if (type === 'call') {
      rows.push({
        ...common,
        call_type: text(action['callType'], `${p}.action.callType`).toLowerCase(),
        from_address: address(action['from'], `${p}.action.from`),
        to_address: address(action['to'], `${p}.action.to`),
        value: decimal(action['value'] ?? '0x0', `${p}.action.value`),
        input: hex(action['input'], `${p}.action.input`),
        output: result?.['output'] === undefined ? null : hex(result['output'], `${p}.result.output`),
      });
    } else {
      bad(`${p}.type is ${JSON.stringify(type)}: expected call, create or suicide`);
    }
  });
  return rows;
}

function callTracerTraces(data: unknown, at: At, txCount: number): IngestTraceRow[] {
  const entries = list(data, 'debug_traceBlockByNumber');
  if (entries.length !== txCount) {
    mismatch(`the block has ${txCount} transactions but the call tracer returned ${entries.length} traces`);
  }
  const rows: IngestTraceRow[] = [];
  entries.forEach((value, txIdx) => {
    const entry = record(value, `debug_traceBlockByNumber[${txIdx}]`);
    // Geth wraps each trace as {txHash, result}; some nodes return the frames bare.
    const root = 'result' in entry ? entry['result'] : entry;
    const walk = (v: unknown, path: number[], p: string): void => {
      const f = record(v, p);
      const type = text(f['type'], `${p}.type`).toLowerCase();
      rows.push({
        ...at,
        tx_idx: txIdx,
        trace_address: path.join(','),
        call_type: type,
        from_address: address(f['from'], `${p}.from`),
        to_address: f['to'] === undefined || f['to'] === null ? null : address(f['to'], `${p}.to`),
        value: decimal(f['value'] ?? '0x0', `${p}.value`),
        gas_used: f['gasUsed'] === undefined ? 0 : quantity(f['gasUsed'], `${p}.gasUsed`),
        input: hex(f['input'] ?? '0x', `${p}.input`),
        output: f['output'] === undefined || f['output'] === null ? null : hex(f['output'], `${p}.output`),
        error: f['error'] === undefined || f['error'] === null ? null : text(f['error'], `${p}.error`),
      });
      const calls = f['calls'] === undefined || f['calls'] === null ? [] : list(f['calls'], `${p}.calls`);
      calls.forEach((c, k) => walk(c, [...path, k], `${p}.calls[${k}]`));
    };
    walk(root, [], `debug_traceBlockByNumber[${txIdx}].result`);
  });
  return rows;
}

// ---- Field checks ------------------------------------------------------------------------------------

function bad(message: string): never {
  throw new ChainIngestError(ChainIngestErrorCode.BAD_BLOCK_DATA, message, { retryable: false });
}

/** Two answers about one block disagree: a reorg happened between them, so asking again may agree. */
function mismatch(message: string): never {
  throw new ChainIngestError(ChainIngestErrorCode.INCONSISTENT_ANSWERS, message, { retryable: true });
}

const show = (v: unknown) => (v === undefined ? 'missing' : JSON.stringify(v)?.slice(0, 80));

function record(v: unknown, path: string): Json {
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    bad(`${path} is ${show(v)}: expected an object`);
  return v as Json;
}

function list(v: unknown, path: string): unknown[] {
  if (!Array.isArray(v)) bad(`${path} is ${show(v)}: expected an array`);
  return v as unknown[];
}

function text(v: unknown, path: string): string {
  if (typeof v !== 'string') bad(`${path} is ${show(v)}: expected a string`);
  return v as string;
}

function integer(v: unknown, path: string): number {
  if (!Number.isSafeInteger(v) || (v as number) < 0) bad(`${path} is ${show(v)}: expected an integer ≥ 0`);
  return v as number;
}

const QUANTITY = /^0x[0-9a-f]+$/i;

function quantity(v: unknown, path: string): number {
  if (typeof v !== 'string' || !QUANTITY.test(v)) bad(`${path} is ${show(v)}: expected a 0x-hex quantity`);
  const n = Number(BigInt(v as string));
  if (!Number.isSafeInteger(n)) bad(`${path} is ${show(v)}: beyond 2^53`);
  return n;
}

function decimal(v: unknown, path: string): string {
  if (typeof v !== 'string' || !QUANTITY.test(v)) bad(`${path} is ${show(v)}: expected a 0x-hex quantity`);
  return BigInt(v as string).toString(10);
}

function hex(v: unknown, path: string): string {
  if (typeof v !== 'string' || !/^0x([0-9a-f]{2})*$/i.test(v))
    bad(`${path} is ${show(v)}: expected 0x-hex data`);
  return (v as string).toLowerCase();
}

function hash32(v: unknown, path: string): string {
  if (typeof v !== 'string' || !/^0x[0-9a-f]{64}$/i.test(v))
    bad(`${path} is ${show(v)}: expected a 32-byte hash`);
  return (v as string).toLowerCase();
}

function address(v: unknown, path: string): string {
  if (typeof v !== 'string' || !/^0x[0-9a-f]{40}$/i.test(v))
    bad(`${path} is ${show(v)}: expected a 20-byte address`);
  return (v as string).toLowerCase();
}
