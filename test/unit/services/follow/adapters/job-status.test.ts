// What `blockx status` and the Prometheus export say of a follow job (src/services/follow/adapters/
// job-status.ts, follow-metrics.ts), from its state in a SQLite file and the chain tables' timestamps:
// the finalized height, the heights not yet applied (an in-flight one counts as not applied), the chain
// time from the newest applied block to the head, the runner and its term, reorgs (the last one too) and
// the last error.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import type { TableConfig } from '../../../../../src/kernel/config-types.js';
import { registerFollowMetrics } from '../../../../../src/services/follow/adapters/follow-metrics.js';
import type { JobLeases } from '../../../../../src/services/follow/adapters/job-lease.js';
import { readJobStatuses } from '../../../../../src/services/follow/adapters/job-status.js';
import {
  JobStore,
  reorgView,
  type FollowJobSpec,
} from '../../../../../src/services/follow/adapters/job-store.js';
import { openStorage } from '../../../../../src/services/storage/open-storage.js';
import { conformanceSettings } from '../../../../support/storage-conformance-fixtures.js';

const BLOCKS: TableConfig = {
  columns: {
    chain_id: { type: 'integer', nullable: false },
    number: { type: 'bigint', nullable: false },
    hash: { type: 'text', nullable: false },
    timestamp: { type: 'bigint', nullable: false },
    canonical: { type: 'boolean', nullable: false },
  },
  primaryKey: ['chain_id', 'number', 'hash'],
  blockColumn: 'number',
  chainColumn: 'chain_id',
} as TableConfig;

const SPEC: FollowJobSpec = {
  kind: 'follow',
  template: {},
  from: 1,
  chainId: 7,
  blocksTable: 'blocks',
  storage: 'test',
  finality: 5,
  pollIntervalMs: 1000,
};

const leases = (runner: string | undefined): JobLeases => ({
  kind: 'storage',
  lease: () => {
    throw new Error('not used');
  },
  holderOf: async () => (runner === undefined ? undefined : { holder: 'h', info: runner, untilMs: 0 }),
  close: async () => {},
});

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function fixture() {
  const dir = mkdtempSync(path.join(tmpdir(), 'blockx-job-status-'));
  dirs.push(dir);
  const settings = conformanceSettings(`sqlite:${path.join(dir, 'db.sqlite')}`);
  const store = await JobStore.open(settings, dir);
  const chain = await openStorage(settings, { blocks: BLOCKS }, { baseDir: dir });
  await chain.migrate();
  const rows: Record<string, unknown>[] = [];
  // Block n at 1000 + 12 n seconds; block 28 also has an orphaned sibling at another time.
  for (let n = 0; n <= 30; n++)
    rows.push({ chain_id: 7, number: n, hash: `0x${n}`, timestamp: 1000 + 12 * n, canonical: true });
  rows.push({ chain_id: 7, number: 28, hash: '0xorphan', timestamp: 5, canonical: false });
  await chain.transaction((tx) => tx.insertRows('blocks', rows));
  return { store, chain };
}

describe('readJobStatuses', () => {
  it('counts the heights not yet applied and the chain time behind, with the finalized height and the runner', async () => {
    const { store, chain } = await fixture();
    try {
      await store.ensure('fl-a', SPEC);
      // Cursor 24: heights 24..27 applied, 28 in flight (unknown), 29 and 30 not run yet; head 30.
      for (const h of [24, 25, 26, 27]) await store.setApplied('fl-a', h, `0x${h}`);
      await store.setApplied('fl-a', 28, '');
      await store.setFinal('fl-a', 24, '0x23', { head: 30, reorgs: 2, deepestReorg: 3, lastError: 'boom' });
      await store.claimTerm('fl-a');
      await store.claimTerm('fl-a');
      const reorg = { ancestor: 26, depth: 2, oldTip: '0x28old', newTip: '0x28' };
      await store.recordReorg('fl-a', reorgView({ ...reorg, ancestor: 20 }, 500));
      await store.recordReorg('fl-a', reorgView(reorg, 900));
      const [status] = await readJobStatuses(store, leases('host pid 1'), chain, 0);
      expect(status).toMatchObject({
        jobId: 'fl-a',
        kind: 'follow',
        term: 2,
        lastReorg: { atMs: 900, ...reorg },
        chainId: 7,
        state: 'running',
        runner: 'host pid 1',
        head: 30,
        finalized: 25,
        lagBlocks: 3,
        lagSeconds: 3 * 12, // 27 → 30
        reorgs: 2,
        deepestReorg: 3,
        lastError: 'boom',
      });
      // Nobody holds it: a "running" row is a stopped job.
      const [alone] = await readJobStatuses(store, leases(undefined), chain, 0);
      expect(alone).toMatchObject({ state: 'stopped', runner: null });

      const registry = new Registry();
      registerFollowMetrics(registry, () => readJobStatuses(store, leases('host pid 1'), chain, 0));
      const text = await registry.metrics();
      for (const [name, value] of [
        ['blockx_follow_head_block', 30],
        ['blockx_follow_finalized_block', 25],
        ['blockx_follow_lag_blocks', 3],
        ['blockx_follow_lag_seconds', 36],
        ['blockx_follow_reorgs_total', 2],
        ['blockx_follow_deepest_reorg_blocks', 3],
        ['blockx_follow_running', 1],
        ['blockx_follow_failed', 0],
      ] as const) {
        expect(text).toContain(`${name}{job_id="fl-a",chain_id="7"} ${value}\n`);
      }
    } finally {
      await chain.close();
      await store.close();
    }
  });

  it('knows no head, finalized height or lag before the job read the chain', async () => {
    const { store, chain } = await fixture();
    try {
      await store.ensure('fl-b', SPEC);
      const [status] = await readJobStatuses(store, leases(undefined), chain, 0);
      expect(status).toMatchObject({
        head: null,
        finalized: null,
        lagBlocks: null,
        lagSeconds: null,
        term: null,
        lastReorg: null,
      });
      const registry = new Registry();
      registerFollowMetrics(registry, () => readJobStatuses(store, leases(undefined), chain, 0));
      expect(await registry.metrics()).not.toMatch(/blockx_follow_head_block\{/);
    } finally {
      await chain.close();
      await store.close();
    }
  });
});
