// A streaming bundle scan of 200,000 rows in bounded memory, on real storage (SQLite file and
// PostgreSQL): BlockBundleCallConfig with stream.enabled over 200,000 `events` rows of one bundle (1,000
// canonical blocks × 200 events), submitted over gRPC to a real Worker with the real
// StorageIoScopeFactory. The Calls phase is the real ExecutorCallRunner (dispatcher core, stream feeder),
// but its executor link is in-process and completes every call with null in the next event-loop turn,
// so the test measures the scan → feeder → dispatch path, not executor round trips.
//
// Heap: the live heap (heapUsed right after a full GC) before the task and every 10,000 dispatched
// calls; the peak above the first must stay under HEAP_BOUND_MB. Live, because heapUsed between
// collections counts garbage: with calls in bulk the same scan peaked anywhere from 20 to 157 MB of
// heapUsed from one run to the next, while a scan that buffered its rows holds them across every GC. The feeder must never have buffered the
// scan: root calls handed to the dispatcher but not yet dispatched stay ≤ 2 × taskMaxInflightCalls + 64.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { beforeAll, describe, expect, it } from 'vitest';
import { openStorage } from '../../../src/services/storage/open-storage.js';
import type { Row, StorageBackend } from '../../../src/services/storage/types.js';
import {
  ExecutorCallRunner,
  dispatcherConfigFromWorker,
  type ExecutorLinkCommands,
} from '../../../src/services/call-host/adapters/executor-call-runner.js';
import type { ExecuteCallCommand } from '../../../src/services/call-host/adapters/executor-link.js';
import { CHAIN_ID, loadIoConfig, newTaskId, startIoStack, testDatabases } from './harness.js';

const BLOCKS = 1_000;
const EVENTS_PER_BLOCK = 200;
const TOTAL = BLOCKS * EVENTS_PER_BLOCK;
const INSERT_CHUNK = 5_000;
// Live growth measured 6-8 MB on SQLite and PostgreSQL; the 200,000 rows buffered would hold well over
// 100 MB (each row's nine fields, three 66-character hex words among them).
const HEAP_BOUND_MB = 64;
const MAX_INFLIGHT = 1_024;
const PENDING_BOUND = 2 * MAX_INFLIGHT + 64;
const SELECTOR = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
const dbs = testDatabases('sm');

// A full GC on demand, without starting the test process with --expose-gc.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
/** heapUsed after a full GC: what the process holds, not the garbage it has not collected yet. */
function liveHeap(): number {
  gc();
  return process.memoryUsage().heapUsed;
}

const word = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const blockHash = (n: number) => word(0xb10c_0000 + n);

/**
 * An executor link that completes every call with null, and watches the heap. Completions are delivered
 * once per event-loop turn (setImmediate), in one burst, as the real link delivers a socket read's
 * frames: completing each call on the next microtask instead chains all 200,000 calls of a SQLite scan
 * (a synchronous driver) into one macrotask, which starves the gRPC server and every timer for the
 * whole run.
 */
class AutoCompleteLink implements ExecutorLinkCommands {
  readonly ready = true;
  runner: ExecutorCallRunner | undefined;
  executed = 0;
  peakPending = 0;
  peakHeap = 0;
  private due: ExecuteCallCommand[] = [];
  executeCall(cmd: ExecuteCallCommand): void {
    this.executed++;
    if (this.executed % 64 === 0) {
      const pending = this.runner?.core.taskStats(cmd.taskId)?.rootsPending ?? 0;
      if (pending > this.peakPending) this.peakPending = pending;
    }
    if (this.executed % 10_000 === 0) this.sampleHeap();
    if (this.due.push(cmd) === 1) setImmediate(this.completeDue);
  }
  private readonly completeDue = (): void => {
    const due = this.due;
    this.due = [];
    for (const { taskId, callId, attempt } of due)
      this.runner?.handleEvent({
        type: 'callCompleted',
        taskId,
        callId,
        attempt,
        value: null,
        durationMs: 0,
      });
  };
  cancelCall(): void {}
  resumeCall(): void {}
  dropIoCache(): void {}
  sampleHeap(): void {
    const used = liveHeap();
    if (used > this.peakHeap) this.peakHeap = used;
  }
}

/** 1,000 canonical blocks and 200,000 events of bundle 1, inserted in transactions of 5,000 rows. */
async function seed(backend: StorageBackend): Promise<void> {
  const blocks: Row[] = [];
  for (let n = 1; n <= BLOCKS; n++) {
    blocks.push({
      chain_id: CHAIN_ID,
      number: n,
      hash: blockHash(n),
      parent_hash: blockHash(n - 1),
      timestamp: 1_700_000_000 + 12 * n,
      miner: `0x${'aa'.repeat(20)}`,
      gas_used: 0,
      gas_limit: 30_000_000,
      tx_count: 1,
      canonical: true,
    });
  }
  await backend.transaction((tx) => tx.insertRows('blocks', blocks));
  for (let from = 0; from < TOTAL; from += INSERT_CHUNK) {
    const events: Row[] = [];
    for (let k = from; k < from + INSERT_CHUNK; k++) {
      const n = 1 + Math.floor(k / EVENTS_PER_BLOCK);
      const idx = k % EVENTS_PER_BLOCK;
      events.push({
        chain_id: CHAIN_ID,
        block_number: n,
        block_hash: blockHash(n),
        idx,
        tx_hash: word(k),
        contract_id: `0x${(k % 97).toString(16).padStart(40, '0')}`,
        selector: SELECTOR,
        topics: [SELECTOR, word(k % 13), word(k % 17)],
        data: word(k),
      });
    }
    await backend.transaction((tx) => tx.insertRows('events', events));
  }
}

interface ScanRun {
  readonly seconds: number;
  readonly growthMb: number;
  readonly peakPending: number;
}

/** A Worker on `url` whose Calls phase is the real ExecutorCallRunner over an AutoCompleteLink. */
async function streamScan(url: string, readCacheMaxEntries?: number): Promise<ScanRun> {
  const link = new AutoCompleteLink();
  let runner: ExecutorCallRunner | undefined;
  const stack = await startIoStack({
    url,
    worker: { taskMaxInflightCalls: MAX_INFLIGHT },
    ...(readCacheMaxEntries === undefined ? {} : { storage: { readCacheMaxEntries } }),
    callRunner: (io, config) => {
      runner = new ExecutorCallRunner({
        link,
        io,
        // Pages off (docs/executor.md § Pages): this measures the feeder's bound on undispatched calls,
        // one attempt per call; 200,000 calls in pages of 256 never wait at the in-flight cap at all.
        dispatcher: { ...dispatcherConfigFromWorker(config.deployments.block!.worker), callPageRows: 1 },
      });
      link.runner = runner;
      return runner;
    },
  });
  try {
    const baseline = liveHeap();
    link.peakHeap = baseline;
    const started = performance.now();
    const update = await stack.submit(
      {
        taskId: newTaskId(),
        functionCallConfig: {
          type: 'BlockBundleCallConfig',
          config: {
            function: 'noop',
            table: 'events',
            chainId: CHAIN_ID,
            bundle: 1,
            stream: { enabled: true },
          },
        },
        resultHandler: null,
        taskTimeoutMs: 120_000,
      },
      120_000,
    );
    link.sampleHeap();
    const er = update.result?.executeResult;
    expect(update.state, `${er?.failureCode}: ${er?.failureMessage}`).toBe('SUCCEEDED');
    expect(link.executed).toBe(TOTAL);
    expect(runner?.stats().callsSucceeded).toBe(TOTAL);
    return {
      seconds: (performance.now() - started) / 1000,
      growthMb: (link.peakHeap - baseline) / 2 ** 20,
      peakPending: link.peakPending,
    };
  } finally {
    await stack.close();
  }
}

function expectBounded(run: ScanRun, label: string): void {
  const figures = `${label}: ${TOTAL} calls in ${run.seconds.toFixed(1)} s, peak heap growth ${run.growthMb.toFixed(1)} MB, peak undispatched root calls ${run.peakPending}`;
  console.info(figures);
  expect(run.growthMb, figures).toBeLessThan(HEAP_BOUND_MB);
  expect(run.peakPending, figures).toBeGreaterThan(0);
  expect(run.peakPending, figures).toBeLessThanOrEqual(PENDING_BOUND);
}

describe.each([
  ['sqlite', dbs.makeSqlite],
  ['postgres', dbs.makePg],
])('streaming bundle scan of 200,000 rows on %s', (name, makeUrl) => {
  let url: string;

  beforeAll(async () => {
    url = await makeUrl();
    const config = loadIoConfig(url);
    const backend = await openStorage(config.storage, config.tables, { baseDir: config.baseDir });
    try {
      await backend.migrate();
      await seed(backend);
    } finally {
      await backend.close();
    }
  });

  // The scan and dispatch path alone: with the task read cache off, nothing but the current page, the
  // feeder's backlog and the dispatcher's live calls hold rows.
  it(`read cache off: heap growth under ${HEAP_BOUND_MB} MB, the scan never buffered`, async () => {
    expectBounded(await streamScan(url, 0), `${name}, read cache off`);
  });

  // The shipped config (storage.readCacheMaxEntries 100,000). Scans seed the task's read cache with
  // their first SCAN_SEED_ROWS rows only (task-io-scope.ts); when every row seeded it, this scan kept
  // 100,000 rows alive until the task ended and grew the heap by 158–235 MB.
  it(`default read cache: heap growth under ${HEAP_BOUND_MB} MB, the scan never buffered`, async () => {
    expectBounded(await streamScan(url), `${name}, default read cache`);
  });
});
