// Shared by concurrent-writes.test.ts and the scratch throughput measurement (not a test file itself):
// the built-in writer plugins run as a Worker's Result phase runs them — `writer.execute(ctx, config,
// outputs, scope.io('result'))` inside a task IO scope of a StorageIoScopeFactory, with its retry scope —
// many at once, on several backends (separate pg pools: one per modelled worker) over one database.
//
//   const fleet = await openFleet(url, 4, { poolSize: 16 });
//   const report = await runWrites(fleet, jobs, 64);   // 64 writes in flight per backend
//   report.failures  // every write that did not succeed, with its error
import { randomUUID } from 'node:crypto';
import blockBundleWriter, {
  type BlockBundleWriteResultHandlerConfig,
} from '../../../plugins/writers/block-bundle-write/src/index.js';
import blockWriter, {
  type BlockWriteResultHandlerConfig,
} from '../../../plugins/writers/block-write/src/index.js';
import tableUpsertsWriter from '../../../plugins/writers/table-upserts/src/index.js';
import type { BlockxConfig, TableConfig } from '../../../src/kernel/config-types.js';
import type { TaskCtx, WriterPlugin } from '../../../src/kernel/plugin-types.js';
import { openStorage } from '../../../src/services/storage/open-storage.js';
import type { Row, StorageBackend } from '../../../src/services/storage/types.js';
import { StorageIoScopeFactory } from '../../../src/services/worker/adapters/io/index.js';
import { TOP_LEVEL_DEFAULTS } from '../../../src/kernel/config-defaults.js';
import { pluginConfigOf } from '../../support/plugin-config.js';

export const CHAIN_ID = 1;
export const TABLE = 'token_transfers';

/** The repository's token_transfers table (blockx.config.yaml). */
export const TABLES: Readonly<Record<string, TableConfig>> = {
  [TABLE]: {
    columns: {
      chain_id: { type: 'integer', nullable: false },
      block_number: { type: 'bigint', nullable: false },
      log_idx: { type: 'integer', nullable: false },
      token: { type: 'text', nullable: false },
      from_address: { type: 'text', nullable: false },
      to_address: { type: 'text', nullable: false },
      amount: { type: 'text', nullable: false },
    },
    primaryKey: ['chain_id', 'block_number', 'log_idx'],
    blockColumn: 'block_number',
    chainColumn: 'chain_id',
    writable: true, // an output table (docs/storage.md § Which tables tasks may write)
  },
};

export type StorageSettings = BlockxConfig['storage'];

/** The shipped storage defaults on `url`, with `overrides`. */
export function storageSettings(url: string, overrides: Partial<StorageSettings> = {}): StorageSettings {
  return { ...(TOP_LEVEL_DEFAULTS.storage as StorageSettings), ...overrides, url };
}

/** One modelled worker: its backend (pool) and its task IO scopes. */
export interface FleetMember {
  readonly backend: StorageBackend;
  readonly scopes: StorageIoScopeFactory;
}

export interface Fleet {
  readonly members: readonly FleetMember[];
  /** Retries of every member's scopes so far. */
  retries(): number;
  close(): Promise<void>;
}

export async function openFleet(
  url: string,
  workers: number,
  overrides: Partial<StorageSettings> = {},
): Promise<Fleet> {
  const storage = storageSettings(url, overrides);
  const members: FleetMember[] = [];
  for (let i = 0; i < workers; i++) {
    const backend = await openStorage(storage, TABLES, { closeDrainMs: 500 });
    members.push({ backend, scopes: new StorageIoScopeFactory({ backend, storage }) });
  }
  await members[0]?.backend.migrate();
  return {
    members,
    retries: () => members.reduce((n, m) => n + m.scopes.stats().retries, 0),
    close: async () => {
      for (const m of members) {
        await m.scopes.close();
        await m.backend.close();
      }
    },
  };
}

/** A transfer row of `block`; `run` marks which write produced it (so a mix of two runs shows). */
export function transferRow(block: number, logIdx: number, run: string): Row {
  return {
    chain_id: CHAIN_ID,
    block_number: block,
    log_idx: logIdx,
    token: `0x${'ab'.repeat(20)}`,
    from_address: `0x${'01'.repeat(20)}`,
    to_address: `0x${'02'.repeat(20)}`,
    amount: `${run}:${block}:${logIdx}`,
  };
}

/** `count` rows of one block, all of run `run`. */
export function blockOutputs(block: number, count: number, run: string): Row[] {
  return Array.from({ length: count }, (_, i) => transferRow(block, i, run));
}

/** One writer execution: a task's Result phase. */
export type WriteJob =
  | { readonly kind: 'block'; readonly number: number; readonly rows: readonly Row[] }
  | {
      readonly kind: 'bundle';
      readonly bundle: number;
      readonly bundleSize?: number;
      readonly rows: readonly Row[];
    }
  | { readonly kind: 'upserts'; readonly rows: readonly Row[] };

// The writers' configs as a Worker hands them over: validated, the schema defaults filled in.
const blockConfig = await pluginConfigOf<BlockWriteResultHandlerConfig>(
  new URL('../../../plugins/writers/block-write/', import.meta.url),
);
const bundleConfig = await pluginConfigOf<BlockBundleWriteResultHandlerConfig>(
  new URL('../../../plugins/writers/block-bundle-write/', import.meta.url),
);

function writerOf(job: WriteJob): { writer: WriterPlugin<unknown>; config: unknown; outputs: unknown[] } {
  switch (job.kind) {
    case 'block':
      return {
        writer: blockWriter as WriterPlugin<unknown>,
        config: blockConfig({ table: TABLE, chainId: CHAIN_ID, block: { number: job.number } }),
        outputs: [...job.rows],
      };
    case 'bundle':
      return {
        writer: blockBundleWriter as WriterPlugin<unknown>,
        config: bundleConfig({
          table: TABLE,
          chainId: CHAIN_ID,
          bundle: job.bundle,
          ...(job.bundleSize === undefined ? {} : { bundleSize: job.bundleSize }),
        }),
        outputs: [...job.rows],
      };
    case 'upserts':
      return {
        writer: tableUpsertsWriter as WriterPlugin<unknown>,
        config: {},
        outputs: job.rows.map((row) => ({
          table: TABLE,
          key: { chain_id: row.chain_id, block_number: row.block_number, log_idx: row.log_idx },
          values: row,
        })),
      };
    default: {
      const unreachable: never = job;
      throw new Error(`unknown job ${JSON.stringify(unreachable)}`);
    }
  }
}

/** Runs one job as a task's Result phase on `member`; resolves with its error, if any. */
export async function runJob(member: FleetMember, job: WriteJob): Promise<unknown> {
  const taskId = randomUUID();
  const scope = await member.scopes.open(taskId);
  const { writer, config, outputs } = writerOf(job);
  const ctx: TaskCtx = {
    taskId,
    stage: 'plugin',
    deadlineMs: Date.now() + 120_000,
    signal: new AbortController().signal,
  };
  try {
    const results = await writer.execute(ctx, config, outputs, scope.io('result'));
    const failed = results.find((r) => !r.success);
    return failed === undefined ? undefined : new Error(`${failed.failureCode}: ${failed.failureMessage}`);
  } catch (err) {
    return err;
  } finally {
    await scope.close();
  }
}

export interface WriteReport {
  readonly jobs: number;
  readonly failures: readonly { readonly job: WriteJob; readonly error: unknown }[];
  readonly retries: number;
  readonly elapsedMs: number;
}

/**
 * Runs `jobs` spread round-robin over the fleet's members, at most `perMember` in flight on each
 * (a worker's concurrent tasks), and reports every failure.
 */
export async function runWrites(
  fleet: Fleet,
  jobs: readonly WriteJob[],
  perMember: number,
): Promise<WriteReport> {
  const queues = fleet.members.map((): WriteJob[] => []);
  jobs.forEach((job, i) => queues[i % queues.length]!.push(job));
  const failures: { job: WriteJob; error: unknown }[] = [];
  const retriesBefore = fleet.retries();
  const started = performance.now();
  await Promise.all(
    fleet.members.map((member, m) => {
      const queue = queues[m]!;
      let next = 0;
      const lane = async (): Promise<void> => {
        while (next < queue.length) {
          const job = queue[next++]!;
          const error = await runJob(member, job);
          if (error !== undefined) failures.push({ job, error });
        }
      };
      return Promise.all(Array.from({ length: Math.min(perMember, queue.length) }, lane));
    }),
  );
  return {
    jobs: jobs.length,
    failures,
    retries: fleet.retries() - retriesBefore,
    elapsedMs: performance.now() - started,
  };
}

/** Every row of the table for blocks `from..to`, sorted by key. */
export async function tableRows(backend: StorageBackend, from = 0, to = 2 ** 40): Promise<Row[]> {
  const rows: Row[] = [];
  for await (const page of backend.scan(TABLE, { blockRange: { from, to } })) rows.push(...page);
  return rows;
}

/** A short description of a failure, for assertion messages. */
export function describeFailure(f: { readonly job: WriteJob; readonly error: unknown }): string {
  const where = f.job.kind === 'block' ? `block ${f.job.number}` : f.job.kind;
  return `${where}: ${f.error instanceof Error ? f.error.message : String(f.error)}`;
}
