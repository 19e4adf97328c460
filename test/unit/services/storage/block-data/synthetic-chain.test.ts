import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../../src/kernel/config.js';
import { rowProblems } from '../../../../../src/services/storage/row-check.js';
import {
  BLOCK_TABLE_NAMES,
  blockHashOf,
  CHAIN_SHAPE,
  rowsOf,
  syntheticChain,
  ZERO_HASH,
  type SyntheticBlock,
} from '../../../../../src/services/storage/block-data/index.js';

const REPO = path.resolve(import.meta.dirname, '../../../../..');
const tables = loadConfig({ configPath: path.join(REPO, 'blockx.config.yaml'), env: {} }).tables;
const HASH = /^0x[0-9a-f]{64}$/;
const ADDRESS = /^0x[0-9a-f]{40}$/;

const chain = (over: Partial<{ chainId: number; fromBlock: number; blocks: number; seed: number }> = {}) => [
  ...syntheticChain({ chainId: 1, fromBlock: 1, blocks: 15, seed: 1, ...over }),
];
// 300 heights of chain 1 / seed 1 hold several non-canonical siblings (asserted below).
const sample = chain({ blocks: 300 });
const canonical = sample.filter((b) => b.block.canonical);
const siblings = sample.filter((b) => !b.block.canonical);

describe('syntheticChain: determinism', () => {
  it('the same arguments give deep-equal output', () => {
    expect(chain()).toEqual(chain());
  });

  it('is pinned: block 1 of chain 1 / seed 1 stays the same across releases (update on purpose only)', () => {
    const [first] = chain({ blocks: 1 });
    expect(first?.block.hash).toBe('0xea38f0c708dd753a263182f1f73e4fa6c166d46cd1602f6d51f8c9ceadb69734');
    expect(first?.transactions[0]?.hash).toBe(
      '0xdbf77c52ab6eb31a949e4d3249fa094b6a4acbbcff81680bcfd75e2dcab8be47',
    );
    expect([first?.transactions.length, first?.events.length, first?.traces.length]).toEqual([1, 5, 6]);
  });

  it('another seed or chain id gives another chain', () => {
    const base = chain({ blocks: 5 });
    for (const other of [chain({ blocks: 5, seed: 2 }), chain({ blocks: 5, chainId: 2 })]) {
      expect(other.map((b) => b.block.hash)).not.toEqual(base.map((b) => b.block.hash));
      expect(other.flatMap((b) => b.transactions.map((t) => t.hash))).not.toEqual(
        base.flatMap((b) => b.transactions.map((t) => t.hash)),
      );
    }
  });

  it('block n depends only on (seed, chain, n): a later --from reproduces the same blocks', () => {
    const late = chain({ fromBlock: 9, blocks: 7 });
    expect(late).toEqual(chain({ blocks: 15 }).filter((b) => b.block.number >= 9));
  });

  it('is lazy: the first blocks of a billion-height chain come at once', () => {
    const it = syntheticChain({ chainId: 1, fromBlock: 1, blocks: 1e9, seed: 1 });
    const first = [it.next().value, it.next().value] as SyntheticBlock[];
    expect(first.map((b) => b.block.number)).toEqual([1, 2]);
  });

  it('rejects negative or fractional arguments', () => {
    for (const bad of [{ blocks: -1 }, { fromBlock: 1.5 }, { seed: -3 }, { chainId: Number.NaN }])
      expect(() => chain(bad)).toThrow(RangeError);
  });
});

// Row-level checks collect violations and assert once: an expect() per row would make 75k assertions.
function violations(check: (block: SyntheticBlock, bad: (what: string) => void) => void): string[] {
  const out: string[] = [];
  for (const block of sample)
    check(block, (what) => out.length < 20 && out.push(`block ${block.block.hash}: ${what}`));
  return out;
}

describe('syntheticChain: rows fit the configured tables', () => {
  it('every row of every table passes rowProblems and has exactly the declared columns', () => {
    for (const name of BLOCK_TABLE_NAMES) expect(tables[name], name).toBeDefined();
    const found = violations((block, bad) => {
      for (const name of BLOCK_TABLE_NAMES) {
        const table = tables[name]!;
        const columns = Object.keys(table.columns).sort().join();
        for (const row of rowsOf(block, name)) {
          const problems = rowProblems(name, table, row);
          if (problems.length > 0) bad(`${name}: ${problems.join('; ')}`);
          if (Object.keys(row).sort().join() !== columns) bad(`${name}: columns ${Object.keys(row).join()}`);
        }
      }
    });
    expect(found).toEqual([]);
  });

  it('hashes are 0x + 64 hex, addresses 0x + 40 hex, topics an array of 32-byte words', () => {
    const found = violations(({ block, transactions, events, traces }, bad) => {
      const check = (what: string, value: unknown, re: RegExp) => {
        if (typeof value !== 'string' || !re.test(value)) bad(`${what} ${String(value)}`);
      };
      check('hash', block.hash, HASH);
      check('parent_hash', block.parent_hash, HASH);
      check('miner', block.miner, ADDRESS);
      for (const t of transactions) {
        check('tx hash', t.hash, HASH);
        check('tx from', t.from_address, ADDRESS);
        if (t.to_address !== null) check('tx to', t.to_address, ADDRESS);
        check('tx value', t.value, /^\d+$/);
      }
      for (const e of events) {
        check('event contract', e.contract_id, ADDRESS);
        if (e.topics.length === 0) bad('event without topics');
        for (const topic of e.topics) check('topic', topic, HASH);
        if (e.selector !== e.topics[0]) bad(`selector ${e.selector} is not topics[0]`);
        check('event data', e.data, /^0x([0-9a-f]{2})*$/);
      }
      for (const tr of traces) check('trace_address', tr.trace_address, /^(\d+(,\d+)*)?$/);
    });
    expect(found).toEqual([]);
  });
});

describe('syntheticChain: chain structure', () => {
  it('has exactly one canonical block per height, heights contiguous, siblings right after', () => {
    expect(canonical.map((b) => b.block.number)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    expect(siblings.length).toBeGreaterThanOrEqual(1);
    expect(siblings.length).toBeLessThan(15);
    sample.forEach((b, i) => {
      if (!b.block.canonical)
        expect(sample[i - 1]?.block).toMatchObject({ number: b.block.number, canonical: true });
    });
  });

  it('parent_hash links each block to the canonical block below it', () => {
    const byHeight = new Map(canonical.map((b) => [b.block.number, b.block.hash]));
    expect(sample[0]?.block.parent_hash).toBe(blockHashOf({ chainId: 1, seed: 1 }, 0));
    for (const { block } of sample) {
      if (block.number > 1) expect(block.parent_hash).toBe(byHeight.get(block.number - 1));
      if (!block.canonical) expect(block.hash).not.toBe(byHeight.get(block.number));
    }
    expect(new Set(sample.map((b) => b.block.hash)).size).toBe(sample.length);
  });

  it('genesis has the zero parent and no transactions', () => {
    const [genesis] = chain({ fromBlock: 0, blocks: 1 });
    expect(genesis?.block).toMatchObject({ number: 0, parent_hash: ZERO_HASH, tx_count: 0, canonical: true });
  });

  it('timestamps increase by about 12 s per height; siblings sit between their neighbours', () => {
    for (let i = 1; i < canonical.length; i++) {
      const gap = canonical[i]!.block.timestamp - canonical[i - 1]!.block.timestamp;
      expect(gap).toBeGreaterThanOrEqual(8);
      expect(gap).toBeLessThanOrEqual(16);
    }
    const span = canonical.at(-1)!.block.timestamp - canonical[0]!.block.timestamp;
    expect(span / (canonical.length - 1)).toBeCloseTo(12, 0);
  });

  it('each block row agrees with its transactions; every row carries the block hash', () => {
    const found = violations(({ block, transactions, events, traces }, bad) => {
      if (block.tx_count !== transactions.length) bad('tx_count');
      if (block.gas_used !== transactions.reduce((s, t) => s + t.gas_used, 0)) bad('gas_used');
      if (block.gas_used > block.gas_limit) bad('gas over the limit');
      transactions.forEach((t, i) => t.idx !== i && bad(`tx idx ${t.idx} at ${i}`));
      events.forEach((e, i) => e.idx !== i && bad(`log idx ${e.idx} at ${i}`)); // block-wide log index
      for (const r of [...transactions, ...events, ...traces])
        if (r.block_hash !== block.hash || r.block_number !== block.number || r.chain_id !== block.chain_id)
          bad(`row of another block: ${JSON.stringify(r)}`);
    });
    expect(found).toEqual([]);
  });

  it('events and traces belong to transactions of their block; call trees are well formed', () => {
    let reverted = 0;
    const found = violations(({ transactions, events, traces }, bad) => {
      const txHashes = new Set(transactions.map((t) => t.hash));
      for (const e of events) if (!txHashes.has(e.tx_hash)) bad(`event of unknown tx ${e.tx_hash}`);
      const frames = new Set(traces.map((t) => `${t.tx_idx}/${t.trace_address}`));
      if (frames.size !== traces.length) bad('duplicate trace key');
      for (const t of transactions) if (!frames.has(`${t.idx}/`)) bad(`tx ${t.idx} has no root frame`);
      for (const tr of traces) {
        if (tr.tx_idx >= transactions.length) bad(`trace of unknown tx ${tr.tx_idx}`);
        const parent = tr.trace_address.split(',').slice(0, -1).join(',');
        if (tr.trace_address !== '' && !frames.has(`${tr.tx_idx}/${parent}`))
          bad(`orphan frame ${tr.trace_address}`);
      }
      for (const t of transactions.filter((t) => t.status === 0)) {
        reverted++;
        if (events.some((e) => e.tx_hash === t.hash)) bad(`reverted tx ${t.idx} has events`);
        const root = traces.find((tr) => tr.tx_idx === t.idx && tr.trace_address === '');
        if (root?.error !== 'execution reverted' || root.output !== null)
          bad(`reverted tx ${t.idx} root frame`);
      }
    });
    expect(found).toEqual([]);
    expect(reverted).toBeGreaterThan(0);
  });

  it('has realistic variety: skewed tx counts, several event kinds, creations, reverts, nested calls', () => {
    const counts = canonical.map((b) => b.transactions.length);
    expect(Math.min(...counts)).toBe(0);
    expect(Math.max(...counts)).toBeGreaterThan(120);
    expect(Math.max(...counts)).toBeLessThanOrEqual(CHAIN_SHAPE.maxTxsPerBlock);
    const median = [...counts].sort((a, b) => a - b)[counts.length >> 1]!;
    expect(median).toBeLessThan(counts.reduce((s, c) => s + c, 0) / counts.length); // right-skewed
    const events = sample.flatMap((b) => b.events);
    const selectors = new Set(events.map((e) => e.selector));
    expect(selectors.size).toBeGreaterThanOrEqual(5);
    const txs = sample.flatMap((b) => b.transactions);
    expect(txs.some((t) => t.to_address === null)).toBe(true);
    expect(txs.some((t) => t.status === 0)).toBe(true);
    const traces = sample.flatMap((b) => b.traces);
    expect(new Set(traces.map((t) => t.call_type))).toEqual(
      new Set(['call', 'delegatecall', 'staticcall', 'create']),
    );
    expect(traces.some((t) => t.trace_address === '1,0')).toBe(true);
  });
});
