// The executor process: connects to the Worker's Unix socket, says Hello, heartbeats, and runs calls
// on its thread pool. See PROTOCOL.md for the frames and why the Worker listens and the Executor dials.
//
// Lifetime: the executor lives exactly as long as its connection. When the socket closes (the Worker
// exited, crashed, or dropped us), it stops its threads and returns; the CLI entry then exits. It also
// stops when its parent process changes (the parent died and we were re-parented), so it can never be
// left running as an orphan.

import { connect, type Socket } from 'node:net';
import { readPackageVersion } from '../kernel/package-root.js';
import { FunctionCodeView, type EpochSnapshot } from './code-epochs.js';
import { ExecutorErrorCode } from './errors.js';
import {
  callsCompletedFrames,
  DEFAULT_MAX_FRAME_BYTES,
  FrameDecoder,
  FrameWriter,
  parseMessage,
  type RawFrame,
} from './frame-codec.js';
import { FunctionCompiler, type CompiledFunction } from './function-compiler.js';
import {
  ExecutorFeature,
  PROTOCOL_VERSION,
  type BatchedCallIn,
  type CallTask,
  type ExecuteCallMessage,
  type ExecuteCallsMessage,
  type HeartbeatMessage,
  type HelloMessage,
  type WorkerToExecutor,
} from './protocol.js';
import type { ExecutorSettings } from './executor-settings.js';
import { checkSocketPath } from './socket-path.js';
import { logLine, ThreadPool } from './thread-pool.js';

/** How to run: where to connect, where the functions are, and every setting (executor-settings.ts). */
export interface ExecutorOptions extends ExecutorSettings {
  readonly socketPath: string;
  readonly functionsDir: string;
  /** The spawn secret for the Hello (cli-entry.ts `--secret-fd`; docs/security.md). Absent: none sent. */
  readonly secret?: string;
  readonly maxFrameBytes?: number;
  /** How long to keep retrying the initial connect (the Worker may still be binding). Default 10 s. */
  readonly connectTimeoutMs?: number;
  /** Exit when the parent pid changes. Default true. */
  readonly watchParent?: boolean;
  /** Stops the executor (like a Shutdown frame with no grace). */
  readonly signal?: AbortSignal;
  /** Where log lines go (JSON, one per line). Default stderr. */
  readonly log?: (line: string) => void;
}

export interface ExecutorExit {
  readonly reason: string;
}

/** Run an executor until its connection ends; resolves with the reason it stopped. */
export async function runExecutor(options: ExecutorOptions): Promise<ExecutorExit> {
  checkSocketPath(options.socketPath);
  const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const { threads } = options;
  const maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  const socket = await connectWithRetry(options.socketPath, options.connectTimeoutMs ?? 10_000);
  socket.setNoDelay?.(true);
  const writer = new FrameWriter(socket, { maxFrameBytes });
  const decoder = new FrameDecoder({ maxFrameBytes, attachments: true });

  const hello: HelloMessage = {
    type: 'Hello',
    protocolVersion: PROTOCOL_VERSION,
    executorVersion: readPackageVersion(),
    pid: process.pid,
    threads,
    functionsDir: options.functionsDir,
    features: [
      ExecutorFeature.ExecuteCalls,
      ExecutorFeature.CallsCompleted,
      ExecutorFeature.ArgsJson,
      ExecutorFeature.Tenants,
      ExecutorFeature.Pages,
      ExecutorFeature.ArgsBytes,
    ],
    ...(options.secret !== undefined ? { secret: options.secret } : {}),
  };
  // The Hello goes out before any user code is loaded, and the Worker accepts its secret once: a
  // function that later digs it out of this process's memory cannot open a second connection with it.
  writer.send(hello);
  writer.flush();

  const send = (json: string): void => {
    try {
      writer.sendJson(json);
    } catch (err) {
      // Threads size-check their frames; this is the last line of defence for the connection.
      log(logLine('error', `dropping an outbound frame: ${(err as Error).message}`));
    }
  };
  // Successful outcomes of bulkResults attempts, per task, joined into CallsCompleted frames once per
  // turn: at the writer's flush, so they leave in the same write as the turn's other frames.
  let completed = new Map<string, string[]>();
  const sendCompleted = (): void => {
    const byTask = completed;
    completed = new Map();
    for (const [taskId, entries] of byTask)
      for (const frame of callsCompletedFrames(taskId, entries, maxFrameBytes)) send(frame);
  };

  const epochs = new EpochStore(options.functionsDir);
  const compiler = new FunctionCompiler();
  const pool = new ThreadPool({
    threads,
    maxCallsPerThread: options.maxCallsPerThread,
    cancelHardLimitMs: options.cancelHardLimitMs,
    maxFrameBytes,
    readCopyMaxEntries: options.readCopyMaxEntries,
    isolation: options.isolation,
    memory: {
      threadHeapMb: options.threadHeapMb,
      threadMemoryMb: options.threadMemoryMb,
      maxRssMb: options.maxRssMb,
    },
    resolveModule: (epoch, name) => resolveModule(epochs, compiler, epoch, name),
    send,
    sendCompleted: (taskId, entry) => {
      const entries = completed.get(taskId);
      if (entries !== undefined) entries.push(entry);
      else {
        completed.set(taskId, [entry]);
        writer.defer(sendCompleted);
      }
    },
    log,
  });

  let stopping: ((reason: string) => void) | undefined;
  const stopped = new Promise<string>((resolve) => (stopping = resolve));
  const stop = (reason: string) => stopping?.(reason);

  const onData = (chunk: Buffer): void => {
    let frames: RawFrame[];
    try {
      frames = decoder.pushFrames(chunk);
    } catch (err) {
      log(logLine('error', `protocol error, closing: ${(err as Error).message}`));
      stop(`protocol error: ${(err as Error).message}`);
      return;
    }
    for (const raw of frames) {
      let m: WorkerToExecutor;
      const attachment = typeof raw === 'string' ? undefined : raw.attachment;
      try {
        m = parseMessage<WorkerToExecutor>(typeof raw === 'string' ? raw : raw.json);
      } catch (err) {
        log(logLine('error', `protocol error, closing: ${(err as Error).message}`));
        stop(`protocol error: ${(err as Error).message}`);
        return;
      }
      switch (m.type) {
        case 'ExecuteCall': {
          const problem = checkExecuteCall(m);
          if (problem) log(logLine('error', `ignoring a malformed ExecuteCall: ${problem}`));
          else pool.execute(taskOf(m), [{ callId: m.callId, attempt: m.attempt, args: m.args }]);
          break;
        }
        case 'ExecuteCalls': {
          const batch = batchOf(
            m,
            (problem) => log(logLine('error', `ignoring a malformed ExecuteCalls: ${problem}`)),
            attachment,
          );
          if (batch !== undefined) pool.execute(batch.task, batch.calls);
          break;
        }
        case 'CancelCall':
          pool.cancel(m.callId, m.attempt, m.reason ?? 'cancelled by the worker');
          break;
        case 'ResumeCall':
          pool.resume(m);
          break;
        case 'DefineEpoch':
          epochs.define({ id: m.epoch, functionsDir: m.functionsDir, files: m.files });
          break;
        case 'RetireEpoch':
          epochs.retire(m.epoch);
          compiler.drop(m.epoch);
          pool.retireEpoch(m.epoch);
          break;
        case 'DropIoCache':
          if (typeof m.ioCache === 'string') pool.dropIoCache(m.ioCache);
          break;
        case 'Shutdown':
          void pool.drained(m.graceMs).then(() => stop(`shutdown: ${m.reason}`));
          break;
        default: {
          const _exhaustive: never = m;
          log(logLine('warn', `ignoring unknown frame type ${(_exhaustive as { type: string }).type}`));
        }
      }
    }
  };
  // A frame that parses but cannot be handled (a field of the wrong type or absurdly deep, e.g. a
  // 100k-deep `callId` overflowed the stack in attemptKey) must not crash the executor and every call
  // on it: it is a protocol error, and the connection is closed like for a frame that does not parse.
  // The rest of that chunk's frames are dropped with it (test/process/fuzz-executor-frames.test.ts).
  socket.on('data', (chunk: Buffer) => {
    try {
      onData(chunk);
    } catch (err) {
      log(logLine('error', `protocol error, closing: cannot handle a frame: ${(err as Error).message}`));
      stop(`protocol error: ${(err as Error).message}`);
    }
  });
  socket.on('close', () => stop('connection closed'));
  socket.on('error', (err) => stop(`socket error: ${err.message}`));
  options.signal?.addEventListener('abort', () => stop('aborted'), { once: true });
  if (options.signal?.aborted) stop('aborted');

  const parentPid = process.ppid;
  const parentWatch =
    options.watchParent === false
      ? undefined
      : setInterval(() => process.ppid !== parentPid && stop(`parent ${parentPid} is gone`), 1000);
  parentWatch?.unref();

  let seq = 0;
  let heartbeat: NodeJS.Timeout | undefined;
  const beat = () => {
    const s = pool.stats();
    const hb: HeartbeatMessage = {
      type: 'Heartbeat',
      seq: seq++,
      pid: process.pid,
      inflight: s.inflight,
      queued: s.queued,
      threads: s.threads,
      epochs: s.epochs,
      rssBytes: process.memoryUsage.rss(),
    };
    writer.send(hb);
    writer.flush();
  };
  // Ready means "threads are up": the first heartbeat waits for them.
  let finished = false;
  void Promise.race([pool.ready(), stopped]).then(() => {
    if (finished || socket.destroyed) return;
    beat();
    heartbeat = setInterval(beat, options.heartbeatIntervalMs);
  });

  const reason = await stopped;
  finished = true;
  if (heartbeat) clearInterval(heartbeat);
  if (parentWatch) clearInterval(parentWatch);
  writer.flush();
  writer.close();
  socket.end();
  socket.destroy();
  await pool.close();
  return { reason };
}

/** Epoch snapshots the Worker defined, with the executor's own view of the directory as a fallback. */
class EpochStore {
  private readonly defined = new Map<string, EpochSnapshot>();
  private readonly local: FunctionCodeView;

  constructor(functionsDir: string) {
    this.local = new FunctionCodeView({ dir: functionsDir, ttlMs: 100 });
  }

  define(snapshot: EpochSnapshot): void {
    this.defined.set(snapshot.id, snapshot);
  }

  retire(epoch: string): void {
    this.defined.delete(epoch);
  }

  get(epoch: string): EpochSnapshot | undefined {
    return this.defined.get(epoch);
  }

  /** The Worker sent no DefineEpoch: serve the epoch if it is what the directory holds now. */
  async fromDirectory(epoch: string): Promise<EpochSnapshot | string> {
    try {
      let current = await this.local.currentEpoch();
      // A Worker may have seen a change before our cached stat did: look again before refusing.
      if (current !== epoch) current = await this.local.currentEpoch(0);
      const snap = this.local.snapshot(epoch);
      if (snap) return snap;
      return `code epoch ${epoch} is not available: the worker did not define it and ${this.local.dir} now holds epoch ${current}`;
    } catch (err) {
      return (err as Error).message;
    }
  }
}

function resolveModule(
  epochs: EpochStore,
  compiler: FunctionCompiler,
  epoch: string,
  name: string,
): CompiledFunction | Promise<CompiledFunction> {
  const hit = compiler.peek(epoch, name);
  if (hit) return hit;
  const snap = epochs.get(epoch);
  if (snap) return compiler.compile(snap, name);
  return epochs
    .fromDirectory(epoch)
    .then((s) =>
      typeof s === 'string'
        ? { ok: false, code: ExecutorErrorCode.EPOCH_UNKNOWN, message: s }
        : compiler.compile(s, name),
    );
}

async function connectWithRetry(path: string, timeoutMs: number): Promise<Socket> {
  const deadline = Date.now() + timeoutMs;
  let delay = 25;
  for (;;) {
    try {
      return await new Promise<Socket>((resolve, reject) => {
        const s = connect(path);
        s.once('connect', () => {
          s.off('error', reject);
          resolve(s);
        });
        s.once('error', reject);
      });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if ((code !== 'ENOENT' && code !== 'ECONNREFUSED') || Date.now() + delay > deadline) throw err;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 500);
    }
  }
}

/** What is wrong with an ExecuteCall, or undefined. */
export function checkExecuteCall(m: ExecuteCallMessage): string | undefined {
  return (
    checkAttemptFields(m.callId, m.attempt) ??
    checkTaskNames(m) ??
    checkArgs(m.args) ??
    checkBudgetAndCache(m)
  );
}

/** The fields that name one attempt (each entry of an ExecuteCalls carries its own). */
function checkAttemptFields(callId: unknown, attempt: unknown): string | undefined {
  if (typeof callId !== 'string' || callId === '') return 'callId must be a non-empty string';
  if (!Number.isInteger(attempt) || (attempt as number) < 1) return 'attempt must be a positive integer';
  return undefined;
}

/** The task-level fields, which an ExecuteCalls carries once for all its entries. */
type TaskFields = Pick<
  ExecuteCallMessage,
  'taskId' | 'function' | 'codeEpoch' | 'budgetMs' | 'ioCache' | 'tenant'
>;

function checkTaskNames(m: TaskFields): string | undefined {
  if (typeof m.taskId !== 'string') return 'taskId must be a string';
  if (typeof m.function !== 'string' || m.function === '') return 'function must be a non-empty string';
  if (typeof m.codeEpoch !== 'string' || m.codeEpoch === '') return 'codeEpoch must be a non-empty string';
  return undefined;
}

function checkArgs(args: unknown): string | undefined {
  return Array.isArray(args) ? undefined : 'args must be an array';
}

/**
 * An ExecuteCalls entry's arguments: `args`, their JSON text `argsJson` (ArgsJson), or where that text's
 * UTF-8 is in the frame's attachment, `argsAt: [offset, length]` (ArgsBytes); exactly one.
 */
function checkEntryArgs(e: Record<string, unknown>, attachment: Uint8Array | undefined): string | undefined {
  if (e.page !== undefined) {
    const bad = checkPage(e.page);
    if (bad !== undefined) return bad;
  }
  const given =
    (e.args !== undefined ? 1 : 0) + (e.argsJson !== undefined ? 1 : 0) + (e.argsAt !== undefined ? 1 : 0);
  if (given > 1) return 'an entry carries one of args, argsJson and argsAt';
  if (e.argsAt !== undefined) return checkArgsAt(e.argsAt, attachment);
  if (e.argsJson === undefined) return checkArgs(e.args);
  return typeof e.argsJson === 'string' ? undefined : 'argsJson must be a string';
}

/** `argsAt`: `[offset, length]` inside the frame's attachment. */
function checkArgsAt(at: unknown, attachment: Uint8Array | undefined): string | undefined {
  if (attachment === undefined) return 'argsAt needs a frame with an attachment';
  if (
    !Array.isArray(at) ||
    at.length !== 2 ||
    !Number.isSafeInteger(at[0]) ||
    !Number.isSafeInteger(at[1]) ||
    (at[0] as number) < 0 ||
    (at[1] as number) < 0
  )
    return 'argsAt must be [offset, length], two integers >= 0';
  if ((at[0] as number) + (at[1] as number) > attachment.length)
    return `argsAt [${at[0]}, ${at[1]}] overruns the attachment of ${attachment.length} bytes`;
  return undefined;
}

/**
 * A page entry's `page` (docs/executor.md § Pages): `first` a position, `blocks` runs `[count, block]`.
 * That the counts add up to the calls is checked where the arguments are parsed (the thread).
 */
function checkPage(page: unknown): string | undefined {
  const p = (typeof page === 'object' && page !== null ? page : {}) as Record<string, unknown>;
  if (!Number.isSafeInteger(p.first) || (p.first as number) < 0) return 'page.first must be an integer >= 0';
  if (!Array.isArray(p.blocks)) return 'page.blocks must be a list of [count, block] runs';
  for (const run of p.blocks as unknown[]) {
    if (
      !Array.isArray(run) ||
      run.length !== 2 ||
      !Number.isSafeInteger(run[0]) ||
      (run[0] as number) < 1 ||
      typeof run[1] !== 'object'
    )
      return 'page.blocks must be a list of [count >= 1, block object or null] runs';
  }
  return undefined;
}

function checkBudgetAndCache(m: TaskFields): string | undefined {
  if (typeof m.budgetMs !== 'number' || m.budgetMs < 0) return 'budgetMs must be a number >= 0';
  if (m.ioCache !== undefined && (typeof m.ioCache !== 'string' || m.ioCache === ''))
    return 'ioCache must be a non-empty string when present';
  if (m.tenant !== undefined && (typeof m.tenant !== 'string' || m.tenant === '' || m.tenant.length > 128))
    return 'tenant must be a string of 1 to 128 characters when present';
  return undefined;
}

/** The task-level fields of an ExecuteCall or an ExecuteCalls frame, as the pool shares them. */
function taskOf(m: ExecuteCallMessage | ExecuteCallsMessage): CallTask {
  const task: { -readonly [K in keyof CallTask]: CallTask[K] } = {
    taskId: m.taskId,
    function: m.function,
    codeEpoch: m.codeEpoch,
    budgetMs: m.budgetMs,
  };
  if (m.block !== undefined) task.block = m.block;
  if (m.ioCache !== undefined) task.ioCache = m.ioCache;
  if (m.tenant !== undefined) task.tenant = m.tenant;
  if ('bulkResults' in m && m.bulkResults === true) task.bulkResults = true;
  return task;
}

/**
 * The attempts an ExecuteCalls frame stands for, in order, and their task-level fields (one object for
 * all). A malformed task-level field drops the whole frame (undefined); a malformed entry only itself
 * (each is checked as its ExecuteCall would be). A well-formed entry is kept as it came.
 */
export function batchOf(
  m: ExecuteCallsMessage,
  malformed: (problem: string) => void,
  attachment?: Uint8Array,
): { task: CallTask; calls: BatchedCallIn[] } | undefined {
  // The task-level fields are checked once for the frame, each entry only for its own fields.
  const problem = Array.isArray(m.calls)
    ? (checkTaskNames(m) ?? checkBudgetAndCache(m))
    : 'calls must be an array';
  if (problem !== undefined) {
    malformed(problem);
    return undefined;
  }
  const calls: BatchedCallIn[] = [];
  for (const entry of m.calls as readonly unknown[]) {
    const e = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>;
    const bad = checkAttemptFields(e.callId, e.attempt) ?? checkEntryArgs(e, attachment);
    if (bad !== undefined) malformed(bad);
    else if (e.argsAt === undefined) calls.push(entry as BatchedCallIn);
    else {
      // Its own copy of the bytes: a view would take the whole frame's buffer along to the thread.
      const [offset, length] = e.argsAt as [number, number];
      const { argsAt: _at, ...rest } = e;
      calls.push({
        ...rest,
        argsBytes: new Uint8Array(attachment!.subarray(offset, offset + length)),
      } as unknown as BatchedCallIn);
    }
  }
  return { task: taskOf(m), calls };
}

/**
 * The ExecuteCall messages an ExecuteCalls frame stands for, in order (batchOf, spelled out one message
 * per attempt): what the Worker's side checks its frames against.
 */
export function executeCallsOf(
  m: ExecuteCallsMessage,
  malformed: (problem: string) => void,
  attachment?: Uint8Array,
): ExecuteCallMessage[] {
  const batch = batchOf(m, malformed, attachment);
  if (batch === undefined) return [];
  const { bulkResults: _bulk, ...task } = batch.task;
  return batch.calls.map((e) => ({
    type: 'ExecuteCall',
    ...task,
    callId: e.callId,
    attempt: e.attempt,
    args:
      'args' in e
        ? e.args
        : (JSON.parse('argsJson' in e ? e.argsJson : Buffer.from(e.argsBytes).toString('utf8')) as unknown[]),
  }));
}
