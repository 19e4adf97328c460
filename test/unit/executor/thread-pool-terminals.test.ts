// The thread pool's promise (docs/executor.md § Calls in bulk, § Cancellation): whatever happens, every
// attempt it accepts gets exactly one terminal — a CallCompleted, a CallsCompleted entry or a CallFailed.
// The pool runs here with fake threads (ThreadPool's `testing` option) on a virtual clock: a fast-check
// property drives any interleaving of ExecuteCall / ExecuteCalls (with and without bulkResults), CancelCall,
// threads that start, finish, wait, hang, stop beating, crash, grow over the memory bound or get
// terminated at a cancel's hard limit, and executor shutdown. The fake threads do what a real one does
// with the shared memory: claim each exec in order (so take-back and pickup times are the real ones).
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type {
  ExecutionThread,
  ThreadSetEvents,
  ThreadSetLike,
} from '../../../src/executor/execution-thread.js';
import { newThreadRecord } from '../../../src/executor/execution-thread.js';
import { completedResultJson } from '../../../src/executor/frame-codec.js';
import type { BatchedCall, CallTask } from '../../../src/executor/protocol.js';
import { ThreadPool, type PoolCall } from '../../../src/executor/thread-pool.js';
import {
  beat,
  claimExec,
  monoAt,
  newSignalsBuffer,
  publishMemory,
  ThreadEvent,
  type ThreadControl,
  type ThreadModule,
} from '../../../src/executor/thread-messages.js';

type Thread = ExecutionThread<PoolCall>;

interface FakeRun {
  readonly key: string;
  readonly callId: string;
  readonly attempt: number;
  readonly bulk: boolean;
  cancelled: boolean;
}

/** What a fake thread holds: execs and controls not yet delivered, and the calls it runs. */
interface FakeState {
  inbox: { task: CallTask; entry: BatchedCall }[];
  controls: ThreadControl[];
  nextSeq: number;
  running: FakeRun[];
  killed: boolean;
}

class FakeThreads implements ThreadSetLike<PoolCall> {
  threads: Thread[] = [];
  readonly state = new Map<Thread, FakeState>();
  private next = 0;

  constructor(
    private readonly on: ThreadSetEvents<PoolCall>,
    private readonly clock: () => number,
  ) {}

  spawn(): Thread {
    // No worker: the pool reaches a thread through this set only.
    const t = newThreadRecord<PoolCall>(this.next++, undefined as never, newSignalsBuffer());
    beat(t.signals, monoAt(this.clock()));
    this.state.set(t, { inbox: [], controls: [], nextSeq: 0, running: [], killed: false });
    this.threads.push(t);
    return t;
  }
  remove(t: Thread): void {
    t.dead = true;
    this.threads = this.threads.filter((x) => x !== t);
  }
  terminate(t: Thread): void {
    this.remove(t);
    this.kill(t);
  }
  kill(t: Thread): void {
    this.state.get(t)!.killed = true;
  }
  async terminateAll(): Promise<void> {
    for (const t of this.threads) this.terminate(t);
  }
  exec(t: Thread, task: CallTask, entry: BatchedCall, mod: ThreadModule): void {
    t.modules.add(mod.moduleKey);
    this.state.get(t)!.inbox.push({ task, entry });
  }
  control(t: Thread, c: ThreadControl): void {
    this.state.get(t)!.controls.push(c);
  }

  /** The thread's runner reports ready. */
  ready(t: Thread): void {
    if (!this.state.get(t)!.killed)
      this.on.message(t, { ready: true, kinds: [], keys: [], frames: [], logs: [] });
  }

  /** The thread's event loop runs: it beats, starts what it can claim (in order), applies controls. */
  deliver(t: Thread): void {
    const s = this.state.get(t)!;
    if (s.killed) return;
    const mono = monoAt(this.clock());
    beat(t.signals, mono);
    for (const { task, entry } of s.inbox.splice(0)) {
      const seq = s.nextSeq;
      s.nextSeq = (s.nextSeq + 1) & 0x7fffffff;
      if (!claimExec(t.signals, seq, mono)) continue;
      const key = `${entry.callId}#${entry.attempt}`;
      s.running.push({
        key,
        callId: entry.callId,
        attempt: entry.attempt,
        bulk: task.bulkResults === true,
        cancelled: false,
      });
    }
    for (const c of s.controls.splice(0)) {
      if (c.t !== 'cancel') continue;
      const run = s.running.find((r) => r.callId === c.callId && r.attempt === c.attempt);
      if (run) run.cancelled = true;
    }
  }

  /** Ends up to `n` of its running calls (a cancelled one fails `deadline`), or makes one wait. */
  finish(t: Thread, n: number, failEvery: number, waitOne: boolean): void {
    const s = this.state.get(t)!;
    if (s.killed) return;
    beat(t.signals, monoAt(this.clock()));
    const batch = {
      ready: false,
      kinds: [] as ThreadEvent[],
      keys: [] as string[],
      frames: [] as string[],
      logs: [],
    };
    if (waitOne && s.running.length > 0) {
      const r = s.running[0]!;
      batch.kinds.push(ThreadEvent.Waiting);
      batch.keys.push(r.key);
      batch.frames.push(
        JSON.stringify({
          type: 'CallWaiting',
          taskId: 't',
          callId: r.callId,
          attempt: r.attempt,
          requestId: 1,
          request: { kind: 'subcall', function: 'f', args: [] },
        }),
      );
    }
    for (const r of s.running.splice(0, n)) {
      const failed = r.cancelled || (failEvery > 0 && batch.keys.length % failEvery === 0);
      batch.keys.push(r.key);
      if (failed) {
        batch.kinds.push(ThreadEvent.Done);
        batch.frames.push(
          JSON.stringify({
            type: 'CallFailed',
            callId: r.callId,
            attempt: r.attempt,
            kind: r.cancelled ? 'deadline' : 'user',
            retryable: r.cancelled,
            message: 'x',
          }),
        );
      } else if (r.bulk) {
        batch.kinds.push(ThreadEvent.Completed);
        batch.frames.push(completedResultJson(r.callId, r.attempt, 1, 0.1, 0));
      } else {
        batch.kinds.push(ThreadEvent.Done);
        batch.frames.push(
          JSON.stringify({
            type: 'CallCompleted',
            callId: r.callId,
            attempt: r.attempt,
            value: 1,
            durationMs: 0.1,
          }),
        );
      }
    }
    this.on.message(t, batch);
  }

  publish(t: Thread, mb: number): void {
    publishMemory(t.signals, mb);
  }

  crash(t: Thread): void {
    const s = this.state.get(t)!;
    if (s.killed) return;
    s.killed = true;
    this.on.lost(t, 'crashed: boom');
  }
}

const CANCEL_HARD_LIMIT_MS = 200;

type Step =
  | {
      readonly k: 'execute';
      readonly n: number;
      readonly bulk: boolean;
      readonly fn: 'f' | 'g' | 'bad' | 'slow';
      readonly single: boolean;
    }
  | { readonly k: 'cancel'; readonly pick: number }
  | { readonly k: 'ready' | 'deliver' | 'hang' | 'crash'; readonly thread: number }
  | {
      readonly k: 'finish';
      readonly thread: number;
      readonly n: number;
      readonly failEvery: number;
      readonly wait: boolean;
    }
  | { readonly k: 'memory'; readonly thread: number; readonly mb: number }
  | { readonly k: 'time'; readonly ms: number }
  | { readonly k: 'shutdown' };

const thread = fc.nat(7);
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      k: fc.constant('execute' as const),
      n: fc.integer({ min: 1, max: 40 }),
      bulk: fc.boolean(),
      fn: fc.constantFrom('f' as const, 'f' as const, 'g' as const, 'slow' as const, 'bad' as const),
      single: fc.boolean(),
    }),
  },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('cancel' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('ready' as const), thread }) },
  { weight: 5, arbitrary: fc.record({ k: fc.constant('deliver' as const), thread }) },
  {
    weight: 4,
    arbitrary: fc.record({
      k: fc.constant('finish' as const),
      thread,
      n: fc.integer({ min: 1, max: 30 }),
      failEvery: fc.nat(4),
      wait: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('crash' as const), thread }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('hang' as const), thread }) },
  {
    weight: 2,
    arbitrary: fc.record({ k: fc.constant('memory' as const), thread, mb: fc.constantFrom(10, 500) }),
  },
  {
    weight: 5,
    arbitrary: fc.record({ k: fc.constant('time' as const), ms: fc.constantFrom(5, 30, 60, 250) }),
  },
);
/** Steps, and in half the scenarios a shutdown somewhere among them. */
const scenario: fc.Arbitrary<Step[]> = fc
  .tuple(fc.array(step, { minLength: 1, maxLength: 60 }), fc.option(fc.nat(), { freq: 2 }))
  .map(([steps, at]) =>
    at === null ? steps : [...steps.slice(0, at % (steps.length + 1)), { k: 'shutdown' as const }],
  );

/** Runs the steps and checks the promise; returns each attempt's terminals (`CallFailed:<kind>`, …). */
async function runScenario(steps: readonly Step[]): Promise<Map<string, string[]>> {
  let now = 1_000;
  let fake!: FakeThreads;
  const terminals = new Map<string, string[]>();
  let closed = false;
  const afterClose: string[] = [];
  const unexpected: string[] = [];
  const record = (key: string, how: string) => {
    if (closed) afterClose.push(key);
    terminals.set(key, [...(terminals.get(key) ?? []), how]);
  };
  const pool = new ThreadPool({
    threads: 2,
    maxCallsPerThread: 16,
    cancelHardLimitMs: CANCEL_HARD_LIMIT_MS,
    maxFrameBytes: 1 << 20,
    readCopyMaxEntries: 0,
    isolation: 'none',
    memory: { threadHeapMb: 256, threadMemoryMb: 100, maxRssMb: 0 },
    resolveModule: (_epoch, name) => {
      const ok = {
        ok: true as const,
        moduleKey: `m-${name}`,
        url: `file:///${name}.mjs`,
        code: '',
        path: `/${name}.mjs`,
      };
      if (name === 'bad') return { ok: false, code: 'FUNCTION_NOT_FOUND', message: 'no such function' };
      return name === 'slow' ? Promise.resolve(ok) : ok;
    },
    send: (json) => {
      const m = JSON.parse(json) as { type: string; callId: string; attempt: number; kind?: string };
      const key = `${m.callId}#${m.attempt}`;
      if (m.type === 'CallCompleted') record(key, m.type);
      else if (m.type === 'CallFailed') record(key, `CallFailed:${m.kind}`);
      else if (m.type !== 'CallStarted' && m.type !== 'CallWaiting') unexpected.push(json);
    },
    sendCompleted: (_taskId, entry) => {
      const e = JSON.parse(entry) as { callId: string; attempt: number };
      record(`${e.callId}#${e.attempt}`, 'CallsCompleted');
    },
    log: () => undefined,
    testing: {
      threadSet: (_limits, on) => (fake = new FakeThreads(on, () => now)),
      clock: () => now,
    },
  });
  const issued: { callId: string; attempt: number; bulk: boolean }[] = [];
  const threadAt = (i: number) => fake.threads[i % Math.max(1, fake.threads.length)];
  for (const t of fake.threads) fake.ready(t);
  let n = 0;
  for (const s of steps) {
    if (closed) break;
    switch (s.k) {
      case 'execute': {
        const task: CallTask = {
          taskId: `t${n}`,
          function: s.fn,
          codeEpoch: 'e',
          budgetMs: 100,
          ...(s.bulk ? { bulkResults: true as const } : {}),
        };
        const entries: BatchedCall[] = [];
        for (let i = 0; i < (s.single ? 1 : s.n); i++) {
          const callId = `c${n++}`;
          entries.push({ callId, attempt: 1, args: [i] });
          issued.push({ callId, attempt: 1, bulk: s.bulk });
        }
        pool.execute(task, entries);
        break;
      }
      case 'cancel': {
        // Mostly an attempt still in flight: those are the interesting ones.
        const open = issued.filter((x) => !terminals.has(`${x.callId}#${x.attempt}`));
        const from = open.length > 0 && s.pick % 4 !== 0 ? open : issued;
        const a = from[s.pick % Math.max(1, from.length)];
        if (a) pool.cancel(a.callId, a.attempt, 'deadline');
        break;
      }
      case 'ready': {
        const t = threadAt(s.thread);
        if (t && !t.ready) fake.ready(t);
        break;
      }
      case 'deliver': {
        const t = threadAt(s.thread);
        if (t) fake.deliver(t);
        break;
      }
      case 'finish': {
        const t = threadAt(s.thread);
        if (t) fake.finish(t, s.n, s.failEvery, s.wait);
        break;
      }
      case 'hang':
        break;
      case 'crash': {
        const t = threadAt(s.thread);
        if (t) fake.crash(t);
        break;
      }
      case 'memory': {
        const t = threadAt(s.thread);
        if (t) fake.publish(t, s.mb);
        break;
      }
      case 'time':
        now += s.ms;
        vi.advanceTimersByTime(s.ms); // a thread that died while starting is replaced after 1 s
        pool.sweep();
        break;
      case 'shutdown':
        closed = true;
        await pool.close();
        break;
      default: {
        const _exhaustive: never = s;
        throw new Error(String(_exhaustive));
      }
    }
    await Promise.resolve(); // a module resolved asynchronously lands here
  }
  if (!closed) {
    // Let everything end: threads start, run and finish what they have (cancelled ones fail), and the
    // sweep goes on (stuck threads give back, memory kills, hard limits).
    for (let round = 0; round < 400 && terminals.size < issued.length; round++) {
      for (const t of [...fake.threads]) {
        if (!t.ready) fake.ready(t);
        fake.publish(t, 10);
        fake.deliver(t);
        fake.finish(t, 1_000, 0, false);
      }
      now += 30;
      vi.advanceTimersByTime(30);
      pool.sweep();
      await Promise.resolve();
    }
    await pool.close();
  }
  // Exactly one terminal each; after a shutdown, none for the calls still in flight and none after it.
  for (const [key, how] of terminals) expect(how, key).toHaveLength(1);
  expect(afterClose).toEqual([]);
  expect(unexpected).toEqual([]);
  const keys = new Set(issued.map((a) => `${a.callId}#${a.attempt}`));
  for (const key of terminals.keys()) expect(keys.has(key), key).toBe(true);
  if (!steps.some((s) => s.k === 'shutdown')) expect(terminals.size).toBe(issued.length);
  // A successful bulk attempt ends as a CallsCompleted entry, never a CallCompleted frame.
  for (const a of issued) {
    const how = terminals.get(`${a.callId}#${a.attempt}`)?.[0];
    if (how !== undefined && !how.startsWith('CallFailed'))
      expect(how).toBe(a.bulk ? 'CallsCompleted' : 'CallCompleted');
  }
  return terminals;
}

describe('thread pool: exactly one terminal per attempt', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('property: any interleaving of calls, cancels, thread loss, hard limits, memory kills and shutdown', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (steps) => void (await runScenario(steps))),
      {
        numRuns: 600,
      },
    );
  });

  it('a cancelled call still running at its hard limit fails deadline, the others on its thread executor_crash', async () => {
    const terminals = await runScenario([
      { k: 'execute', n: 4, bulk: true, fn: 'f', single: false },
      { k: 'deliver', thread: 0 },
      { k: 'deliver', thread: 1 },
      { k: 'cancel', pick: 1 }, // c1, on thread 1 with c3
      { k: 'deliver', thread: 1 },
      { k: 'time', ms: 30 },
      { k: 'deliver', thread: 0 },
      { k: 'deliver', thread: 1 },
      { k: 'time', ms: 250 }, // past the hard limit: thread 1 is terminated
      { k: 'finish', thread: 0, n: 10, failEvery: 0, wait: false },
    ]);
    expect(Object.fromEntries(terminals)).toEqual({
      'c0#1': ['CallsCompleted'],
      'c1#1': ['CallFailed:deadline'],
      'c2#1': ['CallsCompleted'],
      'c3#1': ['CallFailed:executor_crash'],
    });
  });

  it('a thread over the memory bound is terminated: its running calls fail executor_crash, its unstarted ones run elsewhere', async () => {
    const terminals = await runScenario([
      { k: 'execute', n: 2, bulk: false, fn: 'f', single: false },
      { k: 'deliver', thread: 0 }, // c0 runs on thread 0; c1 was sent to thread 1, not started
      { k: 'memory', thread: 0, mb: 500 },
      { k: 'time', ms: 5 },
      { k: 'time', ms: 5 },
      { k: 'time', ms: 5 },
      { k: 'time', ms: 5 }, // the 4th sweep looks at memory
      { k: 'shutdown' },
    ]);
    expect(Object.fromEntries(terminals)).toEqual({ 'c0#1': ['CallFailed:executor_crash'] });
  });

  it('a call cancelled before its thread started it fails deadline at once and never runs', async () => {
    const terminals = await runScenario([
      { k: 'execute', n: 1, bulk: true, fn: 'f', single: true },
      { k: 'cancel', pick: 0 },
      { k: 'deliver', thread: 0 },
      { k: 'finish', thread: 0, n: 10, failEvery: 0, wait: false },
    ]);
    expect(Object.fromEntries(terminals)).toEqual({ 'c0#1': ['CallFailed:deadline'] });
  });
});

describe('thread pool: DropIoCache', () => {
  it('reaches only the threads where a call of that Calls phase asked the Worker something', () => {
    let fake!: FakeThreads;
    const pool = new ThreadPool({
      threads: 2,
      maxCallsPerThread: 16,
      cancelHardLimitMs: CANCEL_HARD_LIMIT_MS,
      maxFrameBytes: 1 << 20,
      readCopyMaxEntries: 100,
      isolation: 'none',
      memory: { threadHeapMb: 256, threadMemoryMb: 0, maxRssMb: 0 },
      resolveModule: () => ({ ok: true, moduleKey: 'm', url: 'file:///f.mjs', code: '', path: '/f.mjs' }),
      send: () => undefined,
      sendCompleted: () => undefined,
      log: () => undefined,
      testing: { threadSet: (_limits, on) => (fake = new FakeThreads(on, () => 1_000)), clock: () => 1_000 },
    });
    const [t0, t1] = fake.threads as [Thread, Thread];
    fake.ready(t0);
    fake.ready(t1);
    const drops = (t: Thread) =>
      fake.state.get(t)!.controls.flatMap((c) => (c.t === 'dropIoCache' ? [c.ioCache] : []));
    const task = (taskId: string): CallTask => ({
      taskId,
      function: 'f',
      codeEpoch: 'e',
      budgetMs: 100,
      ioCache: `${taskId}#1`,
    });
    // Task a: one call on each thread; only thread 0's asks the Worker (a read) before both end.
    pool.execute(task('a'), [
      { callId: 'a0', attempt: 1, args: [] },
      { callId: 'a1', attempt: 1, args: [] },
    ]);
    // Task b: its calls end without asking anything.
    pool.execute(task('b'), [
      { callId: 'b0', attempt: 1, args: [] },
      { callId: 'b1', attempt: 1, args: [] },
    ]);
    fake.deliver(t0);
    fake.deliver(t1);
    fake.finish(t0, 0, 0, true); // a0 waits
    fake.finish(t0, 10, 0, false);
    fake.finish(t1, 10, 0, false);
    pool.dropIoCache('a#1');
    pool.dropIoCache('b#1');
    pool.dropIoCache('a#1'); // told once: the thread has forgotten it
    expect(drops(t0)).toEqual(['a#1']);
    expect(drops(t1)).toEqual([]);
    void pool.close();
  });
});
