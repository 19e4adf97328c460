// One execution thread as the pool sees it, and how it is started.
//
// A thread starts from a small bootstrap script: it registers tsx (so functions may import TypeScript
// helpers, and so the runner itself loads when the executor runs from src/), then imports the runner
// (call-runner-thread), which registers the epoch loader hooks and reports ready.

import { Worker } from 'node:worker_threads';
import { EPOCH_LOADER_HOOKS_URL } from './epoch-loader-hooks.js';
import {
  newSignalsBuffer,
  signalViews,
  type MainToThreadBatch,
  type ThreadData,
  type ThreadSignals,
} from './thread-messages.js';

export interface ExecutionThread<Call> {
  readonly index: number;
  readonly worker: Worker;
  /** The runner reported ready; only ready threads get calls. */
  ready: boolean;
  /** Terminated, crashed or retired: its messages are ignored. */
  dead: boolean;
  /** Takes no new calls; terminated once `calls` is empty (its epoch was retired). */
  draining: boolean;
  /** Calls on the thread that are running (not waiting on the Worker), or sent and not yet started. */
  running: number;
  /** Calls on the thread that were cancelled and have not ended yet. */
  cancelling: number;
  /** The sequence number of the next exec sent to the thread (see `ThreadSignals`). */
  sentSeq: number;
  /** Shared memory: which execs the thread has started and when, and its liveness beat. */
  readonly signals: ThreadSignals;
  readonly calls: Set<Call>;
  /** Module keys announced to the thread, and the epochs they belong to. */
  readonly modules: Set<string>;
  readonly epochs: Set<string>;
  /** Why the thread is being terminated, when the pool decided it for memory (memory-watch.ts). */
  memoryKill: string | undefined;
  /** What goes to the thread at the end of this turn. */
  outbox: MainToThreadBatch;
  outboxPending: boolean;
}

export function emptyOutbox(): MainToThreadBatch {
  return { modules: [], execRaw: [], execModule: [], controls: [] };
}

/** Start a thread (not ready yet: wait for its `ready` batch). */
export function startExecutionThread<Call>(
  index: number,
  limits: {
    readonly maxFrameBytes: number;
    readonly readCopyMaxEntries: number;
    readonly isolation: 'task' | 'none';
    readonly threadHeapMb: number;
  },
  bootstrap: string,
): ExecutionThread<Call> {
  const sab = newSignalsBuffer();
  const data: ThreadData = {
    hooksUrl: EPOCH_LOADER_HOOKS_URL,
    runnerUrl: RUNNER_URL,
    maxFrameBytes: limits.maxFrameBytes,
    readCopyMaxEntries: limits.readCopyMaxEntries,
    threadIndex: index,
    isolation: limits.isolation,
    signals: sab,
  };
  return {
    index,
    worker: new Worker(bootstrap, {
      eval: true,
      workerData: data,
      // The heap bound (memory-watch.ts); off-heap memory is watched by the pool.
      resourceLimits: { maxOldGenerationSizeMb: limits.threadHeapMb },
    }),
    ready: false,
    dead: false,
    draining: false,
    running: 0,
    cancelling: 0,
    sentSeq: 0,
    signals: signalViews(sab),
    calls: new Set(),
    modules: new Set(),
    epochs: new Set(),
    memoryKill: undefined,
    outbox: emptyOutbox(),
    outboxPending: false,
  };
}

/** The runner module next to this file: `.ts` when running from src/ under tsx, `.js` from dist/. */
const RUNNER_URL = new URL(
  `./call-runner-thread${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`,
  import.meta.url,
).href;

function resolveTsxApi(): string | undefined {
  try {
    return import.meta.resolve('tsx/esm/api');
  } catch {
    return undefined;
  }
}

/** The bootstrap script every thread starts from (an eval'd CommonJS script). */
export function bootstrapSource(): string {
  const tsx = resolveTsxApi();
  return `(async () => {
  const { workerData } = await import('node:worker_threads');
  ${tsx ? `(await import(${JSON.stringify(tsx)})).register();` : ''}
  await import(workerData.runnerUrl);
})().catch((err) => {
  process.stderr.write('blockx executor thread failed to start: ' + (err && err.stack || err) + '\\n');
  process.exit(1);
});`;
}
