// One execution thread as the pool sees it, how it is started, and the set of them (`ThreadSet`: the
// pool's threads, their batched outboxes and their lifecycle events).
//
// A thread starts from a small bootstrap script: it registers tsx (so functions may import TypeScript
// helpers, and so the runner itself loads when the executor runs from src/), then imports the runner
// (call-runner-thread), which registers the epoch loader hooks and reports ready.

import { Worker } from 'node:worker_threads';
import type { ThreadBooks } from './core/pool-calls.js';
import { EPOCH_LOADER_HOOKS_URL } from './epoch-loader-hooks.js';
import type { BatchedCallIn, CallTask } from './protocol.js';
import {
  newSignalsBuffer,
  pushExec,
  signalViews,
  type ExecSlice,
  type MainToThreadBatch,
  type ThreadControl,
  type ThreadData,
  type ThreadModule,
  type ThreadSignals,
  type ThreadToMainBatch,
} from './thread-messages.js';

export interface ThreadLimits {
  readonly maxFrameBytes: number;
  readonly readCopyMaxEntries: number;
  readonly isolation: 'task' | 'none';
  readonly threadHeapMb: number;
}

/** What the pool hears from its threads. */
export interface ThreadSetEvents<Call> {
  readonly message: (t: ExecutionThread<Call>, batch: ThreadToMainBatch) => void;
  readonly lost: (t: ExecutionThread<Call>, reason: string) => void;
}

/** The pool's port to its threads (ThreadSet; a test's fake threads). */
export interface ThreadSetLike<Call> {
  readonly threads: ExecutionThread<Call>[];
  spawn(): ExecutionThread<Call>;
  remove(t: ExecutionThread<Call>): void;
  terminate(t: ExecutionThread<Call>): void;
  /** Stop the thread's code now; the pool then counts it lost itself. */
  kill(t: ExecutionThread<Call>): void;
  terminateAll(): Promise<void>;
  exec(t: ExecutionThread<Call>, task: CallTask, entry: BatchedCallIn, mod: ThreadModule): void;
  control(t: ExecutionThread<Call>, c: ThreadControl): void;
}

/**
 * The pool's threads. Whatever goes to a thread during one event-loop turn leaves as one batch
 * (`setImmediate`): structured clone of one batch of strings is much cheaper than one per call.
 */
export class ThreadSet<Call> implements ThreadSetLike<Call> {
  threads: ExecutionThread<Call>[] = [];
  private nextIndex = 0;
  private outboxScheduled = false;
  private readonly bootstrap = bootstrapSource();

  constructor(
    private readonly limits: ThreadLimits,
    private readonly on: ThreadSetEvents<Call>,
  ) {}

  /** Start one more thread; it takes calls once its `ready` batch came. */
  spawn(): ExecutionThread<Call> {
    const t = startExecutionThread<Call>(this.nextIndex++, this.limits, this.bootstrap);
    t.worker.on('message', (batch: ThreadToMainBatch) => this.on.message(t, batch));
    t.worker.on('error', (err: Error & { code?: string }) => {
      if (err?.code === 'ERR_WORKER_OUT_OF_MEMORY')
        t.memoryKill ??= `it ran out of its heap (executor.threadHeapMb ${this.limits.threadHeapMb})`;
      this.on.lost(t, `crashed: ${err?.message ?? String(err)}`);
    });
    t.worker.on('exit', (code) => this.on.lost(t, `exited with code ${code}`));
    this.threads.push(t);
    return t;
  }

  /** Off the set: its messages are ignored from now on. */
  remove(t: ExecutionThread<Call>): void {
    t.dead = true;
    this.threads = this.threads.filter((x) => x !== t);
  }

  /** Off the set and terminated (retired, or given up on). */
  terminate(t: ExecutionThread<Call>): void {
    this.remove(t);
    void t.worker.terminate().catch(() => 0);
  }

  kill(t: ExecutionThread<Call>): void {
    void t.worker.terminate().catch(() => 0);
  }

  async terminateAll(): Promise<void> {
    const threads = this.threads;
    this.threads = [];
    await Promise.all(threads.map((t) => ((t.dead = true), t.worker.terminate().catch(() => 0))));
  }

  /**
   * Queue an exec for the thread, announcing its module first if the thread does not have it. Execs of
   * the same task fields and module in a row join one slice.
   */
  exec(t: ExecutionThread<Call>, task: CallTask, entry: BatchedCallIn, mod: ThreadModule): void {
    const { slices } = t.outbox;
    const last = slices[slices.length - 1];
    if (last !== undefined && last.task === task && last.moduleKey === mod.moduleKey) {
      pushExec(last, entry);
      return; // scheduled with the slice's first exec
    }
    if (!t.modules.has(mod.moduleKey)) {
      t.modules.add(mod.moduleKey);
      t.epochs.add(task.codeEpoch);
      t.outbox.modules.push({ moduleKey: mod.moduleKey, url: mod.url, code: mod.code, path: mod.path });
    }
    const slice: ExecSlice = { task, moduleKey: mod.moduleKey, callIds: [], attempts: [], args: [] };
    pushExec(slice, entry);
    slices.push(slice);
    this.schedule(t);
  }

  control(t: ExecutionThread<Call>, c: ThreadControl): void {
    t.outbox.controls.push(c);
    this.schedule(t);
  }

  private schedule(t: ExecutionThread<Call>): void {
    t.outboxPending = true;
    if (this.outboxScheduled) return;
    this.outboxScheduled = true;
    setImmediate(() => {
      this.outboxScheduled = false;
      for (const th of this.threads) {
        if (!th.outboxPending) continue;
        const batch = th.outbox;
        th.outbox = emptyOutbox();
        th.outboxPending = false;
        if (!th.dead) th.worker.postMessage(batch);
      }
    });
  }
}

export interface ExecutionThread<Call> extends ThreadBooks<Call> {
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
  /** When the thread last went from no calls to some (pool clock): its silence counts from then. */
  busySince: number;
  /** Shared memory: which execs the thread has started and when, and its liveness beat. */
  readonly signals: ThreadSignals;
  readonly calls: Set<Call>;
  /** Module keys announced to the thread, and the epochs they belong to. */
  readonly modules: Set<string>;
  readonly epochs: Set<string>;
  /**
   * The Calls-phase `ioCache` ids the thread may hold read copies of: those of calls that asked the
   * Worker something here (a copy is only ever an answer to such a request). A DropIoCache reaches only
   * these threads.
   */
  readonly ioCaches: Set<string>;
  /** Why the thread is being terminated, when the pool decided it for memory (memory-watch.ts). */
  memoryKill: string | undefined;
  /** What goes to the thread at the end of this turn. */
  outbox: MainToThreadBatch;
  outboxPending: boolean;
}

export function emptyOutbox(): MainToThreadBatch {
  return { modules: [], slices: [], controls: [] };
}

/** Start a thread (not ready yet: wait for its `ready` batch). */
export function startExecutionThread<Call>(
  index: number,
  limits: ThreadLimits,
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
  const worker = new Worker(bootstrap, {
    eval: true,
    workerData: data,
    // The heap bound (memory-watch.ts); off-heap memory is watched by the pool.
    resourceLimits: { maxOldGenerationSizeMb: limits.threadHeapMb },
  });
  return newThreadRecord<Call>(index, worker, sab);
}

/** The pool's record of a thread that has just been started (not ready yet). */
export function newThreadRecord<Call>(
  index: number,
  worker: Worker,
  signals: SharedArrayBuffer,
): ExecutionThread<Call> {
  return {
    index,
    worker,
    ready: false,
    dead: false,
    draining: false,
    running: 0,
    cancelling: 0,
    sentSeq: 0,
    busySince: 0,
    signals: signalViews(signals),
    calls: new Set(),
    modules: new Set(),
    epochs: new Set(),
    ioCaches: new Set(),
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
