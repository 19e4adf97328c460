// The Worker's end of the executor socket: the IO shell around the link core (core/link/link-core.ts,
// whose opening comment states the rules: handshake, in-flight table, queue, link lost → fail all in
// flight). The protocol, the events and their guarantees are docs/executor.md ("The Worker's API").
//
// Command-shaped API for the dispatcher adapter (`executeCall`, `cancelCall`, `resumeCall`; events come
// back through one `onEvent`): every `executeCall` gets exactly one terminal event; failures the link
// decides itself are emitted on a microtask, never inside the command that caused them. If `onWaiting`
// returns a promise for a `callWaiting` request, the link answers it itself with ResumeCall.
//
// What stays here: the socket server and its file (socket-path.ts), framing (frame-codec.ts), the
// secret's randomness, the one OS timer for the core's hello deadlines, the rate-limited refusal log
// (docs/security.md § Logs), which executor takes ExecuteCalls (its Hello's `features`), and serving
// `onWaiting` (serveWaiting, shared with the in-process link). The hot frames are written as text in
// frames-as-text.ts: ExecuteCall, ExecuteCalls (one open batch per connection), a cached ResumeCall.

import { randomBytes } from 'node:crypto';
import { chown } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import {
  FrameDecoder,
  FrameWriter,
  completedResultsOf,
  parseMessage,
} from '../../../executor/frame-codec.js';
import {
  ExecutorFeature,
  type CallsCompletedMessage,
  type ExecutorToWorker,
} from '../../../executor/protocol.js';
import {
  listenOnSocket,
  makePrivateSocketDir,
  removePrivateSocketDir,
  unlinkOwnSocket,
  type SocketFileIdentity,
} from '../../../executor/socket-path.js';
import type { EpochSource } from '../../../executor/code-epochs.js';
import { logRateLimit, suppressedSuffix } from '../../../kernel/observability/log-rate-limit.js';
import {
  LinkCore,
  type ConnId,
  type ExecuteCallCommand,
  type ExecutorLinkEvent,
  type LinkCommand,
  type ResumeOutcome,
  type WaitingRequest,
} from '../core/link/index.js';
import { ExecuteCallsBatcher, executeCallJson, resumeOkJson } from './frames-as-text.js';

// The link's public shapes: the commands the dispatcher adapter issues and the events it gets back are
// defined with the link core (core/link/types.ts); the socket shell's options are here.
export type * from '../core/link/types.js';

export interface ExecutorLinkOptions {
  /**
   * Where to listen, in a directory the caller made private. Either this or `socketDir`; production
   * (executor-ports.ts) uses `socketDir`.
   */
  readonly socketPath?: string;
  /**
   * Listen in a fresh 0700 directory made under this one (`<socketDir>/bx-XXXXXX/executor.sock`),
   * removed again on close (docs/security.md, "The executor socket").
   */
  readonly socketDir?: string;
  /**
   * The user the Executor runs as when it is not this process's (`executor.user`): the private
   * directory and the socket file are handed to it (still 0700 / 0600), so it alone can connect.
   */
  readonly socketOwner?: { readonly uid: number; readonly gid: number };
  /** How long a new connection may take to present an authenticated Hello. Default 5000 ms. */
  readonly helloTimeoutMs?: number;
  readonly onEvent: (event: ExecutorLinkEvent) => void;
  /** Serve a request (IO reads); return undefined to leave it to whoever handles `callWaiting` events. */
  readonly onWaiting?: (request: WaitingRequest) => Promise<ResumeOutcome> | undefined;
  /** Sources for DefineEpoch / retirements for RetireEpoch (the Worker's FunctionCodeView). */
  readonly epochs?: EpochSource;
  readonly maxFrameBytes?: number;
  /** Hold calls while no executor is ready (default true); false fails them at once, retryably. */
  readonly queueWhileDown?: boolean;
  /**
   * Take successes in bulk: `callsCompleted` events, one per task for the successes of one read from
   * the socket (CallCompleted frames and CallsCompleted entries alike), and from an executor that
   * announced CallsCompleted its successes in bulk frames (ExecuteCalls.bulkResults). Default false: one
   * `callCompleted` event per success.
   */
  readonly bulkResults?: boolean;
  readonly log?: (level: 'info' | 'warn' | 'error', message: string) => void;
}

/** Bound on a new connection's wait for its Hello (docs/security.md). */
export const DEFAULT_HELLO_TIMEOUT_MS = 5_000;
/** A Hello is a few hundred bytes; a connection that buffers more before one is not an executor. */
const MAX_HELLO_BYTES = 64 * 1024;

interface Wire {
  readonly socket: Socket;
  readonly writer: FrameWriter;
  readonly decoder: FrameDecoder;
  /** Set once the executor's Hello announced ExecuteCalls: attempts then travel in batches (and ask for
   *  their successes in bulk when it announced CallsCompleted and `bulkResults` is on). */
  batcher: ExecuteCallsBatcher | undefined;
}

export class ExecutorLink {
  private readonly opts: ExecutorLinkOptions;
  private readonly core: LinkCore;
  private readonly wires = new Map<ConnId, Wire>();
  private server: Server | undefined;
  private socketFile: SocketFileIdentity | undefined;
  private listeningOn: string | undefined;
  /** The 0700 directory listen() made (socketDir mode), removed on close. */
  private privateDir: string | undefined;
  private helloTimer: NodeJS.Timeout | undefined;
  private helloTimerAt: number | undefined;
  private readonly refusalLog = logRateLimit({ burst: 10, intervalMs: 10_000 });
  private readonly unsubscribeRetire: (() => void) | undefined;

  constructor(options: ExecutorLinkOptions) {
    this.opts = options;
    this.core = new LinkCore({
      helloTimeoutMs: options.helloTimeoutMs ?? DEFAULT_HELLO_TIMEOUT_MS,
      queueWhileDown: options.queueWhileDown !== false,
      bulkResults: options.bulkResults === true,
    });
    this.unsubscribeRetire = options.epochs?.onRetire((epoch) => this.retireEpoch(epoch));
  }

  /**
   * Listen: on `socketPath` (taking over a stale socket file, refusing a live one), or in a fresh 0700
   * directory under `socketDir`. The socket file is 0600 either way.
   */
  async listen(): Promise<void> {
    let socketPath = this.opts.socketPath;
    if (socketPath === undefined) {
      if (this.opts.socketDir === undefined) throw new Error('ExecutorLink needs socketPath or socketDir');
      const made = await makePrivateSocketDir(this.opts.socketDir);
      this.privateDir = made.dir;
      socketPath = made.socketPath;
    }
    const server = createServer((socket) => this.accept(socket));
    try {
      this.socketFile = await listenOnSocket(server, socketPath);
      const owner = this.opts.socketOwner;
      if (owner !== undefined) {
        if (this.privateDir !== undefined) await chown(this.privateDir, owner.uid, owner.gid);
        await chown(socketPath, owner.uid, owner.gid);
      }
    } catch (err) {
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
      if (this.privateDir !== undefined) await removePrivateSocketDir(this.privateDir);
      this.privateDir = undefined;
      throw err;
    }
    this.listeningOn = socketPath;
    this.server = server;
  }

  /** The socket path (with `socketDir`, known once listen() has run). */
  get socketPath(): string {
    const socketPath = this.listeningOn ?? this.opts.socketPath;
    if (socketPath === undefined) throw new Error('the executor socket path is known once listen() has run');
    return socketPath;
  }

  /**
   * A fresh secret for the executor about to be spawned (32 random bytes, hex). It replaces any earlier
   * one and opens exactly one connection: the first Hello that presents it.
   */
  issueSecret(): string {
    const secret = randomBytes(32).toString('hex');
    this.core.expectSecret(secret);
    return secret;
  }

  /** True between the executor's first heartbeat and its loss. */
  get ready(): boolean {
    return this.core.ready;
  }

  /** Attempts accepted and not yet terminal (sent or queued). */
  get inflight(): number {
    return this.core.inflight;
  }

  get executorPid(): number | undefined {
    return this.core.executorPid;
  }

  /** When the current executor last sent a heartbeat (Date.now ms), if it is connected. */
  get lastHeartbeatAtMs(): number | undefined {
    return this.core.lastHeartbeatAtMs;
  }

  executeCall(command: ExecuteCallCommand): void {
    this.core.executeCall(command);
    this.apply();
  }

  /** Attempts in order; one still in flight is refused with a retryable callFailed, never a throw. */
  executeCalls(commands: readonly ExecuteCallCommand[]): void {
    this.core.executeCalls(commands);
    this.apply();
  }

  /** Cancel an attempt: the executor aborts its signal; a queued one fails at once (kind `deadline`). */
  cancelCall(callId: string, attempt: number, reason = 'cancelled by the worker'): void {
    this.core.cancelCall(callId, attempt, reason);
    this.apply();
  }

  /** Answer a `callWaiting` request. Unknown attempts and requests are ignored (the call has ended). */
  resumeCall(callId: string, attempt: number, outcome: ResumeOutcome): void {
    this.core.resumeCall(callId, attempt, outcome);
    this.apply();
  }

  /** The Calls phase `ioCache` ended: the executor's threads drop their read copies of it. */
  dropIoCache(ioCache: string): void {
    this.core.dropIoCache(ioCache);
    this.apply();
  }

  /** Tell the executor no task uses `epoch` any more (the code view does this by itself when given). */
  retireEpoch(epoch: string): void {
    this.core.retireEpoch(epoch);
    this.apply();
  }

  /** Ask the executor to stop after at most `graceMs`. */
  shutdownExecutor(reason: string, graceMs: number): void {
    this.core.shutdownExecutor(reason, graceMs);
    this.apply();
  }

  /** Treat the current executor as lost (e.g. missed heartbeats): close it and fail its attempts. */
  dropConnection(reason: string): void {
    this.core.dropConnection(reason);
    this.apply();
  }

  /** Stop listening, drop the executor, fail every attempt, and remove our socket file. */
  async close(): Promise<void> {
    if (this.core.closed) return;
    this.unsubscribeRetire?.();
    this.core.close();
    this.apply();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    if (this.socketFile) await unlinkOwnSocket(this.socketFile);
    if (this.privateDir !== undefined) await removePrivateSocketDir(this.privateDir);
    this.privateDir = undefined;
  }

  // ---- sockets -----------------------------------------------------------------------------------------

  private accept(socket: Socket): void {
    if (this.core.closed) {
      socket.destroy();
      return;
    }
    const id = this.core.connectionOpened(Date.now());
    const wire: Wire = {
      socket,
      writer: new FrameWriter(socket, { maxFrameBytes: this.opts.maxFrameBytes }),
      decoder: new FrameDecoder({ maxFrameBytes: this.opts.maxFrameBytes }),
      batcher: undefined,
    };
    this.wires.set(id, wire);
    socket.setNoDelay?.(true);
    socket.on('data', (chunk: Buffer) => this.onData(id, wire, chunk));
    socket.on('close', () => this.input(() => this.core.connectionClosed(id)));
    socket.on('error', (err) => this.input(() => this.core.connectionClosed(id, err.message)));
    this.apply();
  }

  private onData(id: ConnId, wire: Wire, chunk: Buffer): void {
    const core = this.core;
    if (!core.isOpen(id)) return;
    let frames: string[];
    const heldBefore = wire.decoder.pendingBytes;
    try {
      frames = wire.decoder.pushRaw(chunk);
    } catch (err) {
      this.input(() => core.decodeFailed(id, (err as Error).message));
      return;
    }
    if (!core.isAuthenticated(id)) {
      const first = frames[0];
      const tooLarge =
        first === undefined
          ? wire.decoder.pendingBytes > MAX_HELLO_BYTES
          : Buffer.byteLength(first) > MAX_HELLO_BYTES;
      if (tooLarge) return this.input(() => core.firstFrameTooLarge(id));
    }
    const now = Date.now();
    const sizes = frameSizes(frames, heldBefore + chunk.length - wire.decoder.pendingBytes);
    // The frames of one read go to the core first and its commands are carried out once, after them:
    // the same commands in the same order, and successes of one task back to back join one event.
    for (let i = 0; i < frames.length; i++) {
      const raw = frames[i]!;
      let m: ExecutorToWorker;
      try {
        m = parseMessage<ExecutorToWorker>(raw);
      } catch (err) {
        this.input(() => core.frameUnparsable(id, (err as Error).message));
        return;
      }
      if (m.type === 'Hello' && Array.isArray(m.features)) wire.batcher ??= this.batcherFor(wire, m.features);
      else if (m.type === 'CallsCompleted') m = this.checkedResults(m);
      const bytes = m.type === 'CallCompleted' || m.type === 'CallsCompleted' ? sizes(i) : 0;
      core.messageReceived(id, now, m, bytes);
      if (!core.isOpen(id)) break;
    }
    this.apply();
  }

  /** ExecuteCalls frames to an executor that takes them; asking for CallsCompleted when it takes those. */
  private batcherFor(wire: Wire, features: readonly string[]): ExecuteCallsBatcher | undefined {
    if (!features.includes(ExecutorFeature.ExecuteCalls)) return undefined;
    const bulk = this.opts.bulkResults === true && features.includes(ExecutorFeature.CallsCompleted);
    return new ExecuteCallsBatcher(
      wire.writer,
      bulk,
      features.includes(ExecutorFeature.ArgsJson),
      features.includes(ExecutorFeature.Tenants),
      features.includes(ExecutorFeature.Pages),
      features.includes(ExecutorFeature.ArgsBytes),
    );
  }

  /** A CallsCompleted frame with its malformed entries left out (each logged): they answer nothing. */
  private checkedResults(m: CallsCompletedMessage): CallsCompletedMessage {
    const results = completedResultsOf(m, (problem) =>
      this.opts.log?.('warn', `ignoring a malformed CallsCompleted entry: ${problem}`),
    );
    return { type: 'CallsCompleted', taskId: m.taskId, results };
  }

  private input(fn: () => void): void {
    fn();
    this.apply();
  }

  // ---- commands ----------------------------------------------------------------------------------------

  /** Carry out what the core decided, in order. Handlers may re-enter (they run nested, as before). */
  private apply(): void {
    const commands = this.core.takeCommands();
    for (let i = 0; i < commands.length; i++) this.perform(commands[i]!);
    this.armHelloTimer();
  }

  private perform(c: LinkCommand): void {
    switch (c.type) {
      case 'emit':
        this.opts.onEvent(c.event);
        return;
      case 'emitLater': {
        const event = c.event;
        queueMicrotask(() => this.opts.onEvent(event));
        return;
      }
      case 'sendExecutes':
        this.sendExecutes(c.conn, c.calls);
        return;
      case 'defineEpoch':
        this.defineEpoch(c.conn, c.epoch);
        return;
      case 'send': {
        const wire = this.wires.get(c.conn);
        if (!wire) return;
        wire.batcher?.close();
        wire.writer.send(c.frame);
        if (c.flush) wire.writer.flush();
        return;
      }
      case 'sendResume':
        this.sendResume(c);
        return;
      case 'serveWaiting':
        serveWaiting(this.opts.onWaiting, c.request, (callId, attempt, outcome) =>
          this.resumeCall(callId, attempt, outcome),
        );
        return;
      case 'flushQueued':
        this.core.flushQueued(c.conn);
        this.apply();
        return;
      case 'closeConnection':
        this.closeWire(c.conn, c.refusal);
        return;
      case 'log':
        this.opts.log?.(c.level, c.message);
        return;
      default: {
        const _exhaustive: never = c;
        throw new Error(`unknown link command ${(_exhaustive as { type: string }).type}`);
      }
    }
  }

  private sendExecutes(id: ConnId, calls: readonly ExecuteCallCommand[]): void {
    const wire = this.wires.get(id);
    if (!wire) return;
    for (let i = 0; i < calls.length; i++) {
      const c = calls[i]!;
      try {
        // The hottest line of the link, written as text (frames-as-text.ts).
        if (wire.batcher) wire.batcher.add(c);
        else wire.writer.sendJson(executeCallJson(c));
      } catch (err) {
        // Arguments too large for a frame (or not JSON): this attempt can never run.
        this.core.executeUnsendable(c.callId, c.attempt, (err as Error).message);
        this.apply();
      }
    }
  }

  private defineEpoch(id: ConnId, epoch: string): void {
    const wire = this.wires.get(id);
    const snap = this.opts.epochs?.snapshot(epoch);
    if (!wire || !snap) {
      this.core.epochNotDefined(id, epoch); // the executor falls back to its own view of the directory
      return;
    }
    wire.batcher?.close();
    try {
      wire.writer.send({ type: 'DefineEpoch', epoch, functionsDir: snap.functionsDir, files: snap.files });
    } catch (err) {
      // Too large for one frame: the executor falls back to its own view of the directory.
      this.core.epochNotDefined(id, epoch);
      this.opts.log?.(
        'error',
        `cannot define code epoch ${epoch} on the executor: ${(err as Error).message}`,
      );
    }
  }

  private sendResume(c: Extract<LinkCommand, { type: 'sendResume' }>): void {
    const wire = this.wires.get(c.conn);
    if (!wire) return;
    const { callId, attempt, requestId, outcome } = c;
    wire.batcher?.close();
    try {
      if (outcome.ok)
        // A cached row goes to every call that reads it: its text is taken once (jsonOf, below).
        wire.writer.sendJson(resumeOkJson(callId, attempt, requestId, outcome.value ?? null));
      else
        wire.writer.send({ type: 'ResumeCall', callId, attempt, requestId, ok: false, error: outcome.error });
    } catch (err) {
      // The answer cannot travel (too large, not JSON): the call gets an error it can handle instead.
      const message = `the worker's answer cannot be sent: ${(err as Error).message}`;
      const error = { message, kind: 'io', retryable: false } as const;
      wire.writer.send({ type: 'ResumeCall', callId, attempt, requestId, ok: false, error });
    }
  }

  /**
   * Close a socket. A refusal (it never authenticated) is one warn line, rate-limited: anyone with
   * access to the socket can cause it at will (docs/security.md § Logs). The secret is never logged.
   */
  private closeWire(id: ConnId, refusal: string | undefined): void {
    const wire = this.wires.get(id);
    if (!wire) return;
    this.wires.delete(id);
    wire.writer.close();
    wire.socket.destroy();
    if (refusal === undefined) return;
    this.refusalLog(Date.now(), (suppressed) =>
      this.opts.log?.(
        'warn',
        `refused a connection to the executor socket: ${refusal}; only the executor this worker spawned, ` +
          `presenting its secret, is served (docs/security.md)${suppressedSuffix(suppressed)}`,
      ),
    );
  }

  /** One OS timer, at the core's earliest hello deadline. */
  private armHelloTimer(): void {
    const at = this.core.nextDeadline();
    if (at === this.helloTimerAt) return;
    if (this.helloTimer) clearTimeout(this.helloTimer);
    this.helloTimer = undefined;
    this.helloTimerAt = at;
    if (at === undefined) return;
    this.helloTimer = setTimeout(
      () => {
        this.helloTimer = undefined;
        this.helloTimerAt = undefined;
        this.input(() => this.core.tick(Date.now()));
      },
      Math.max(0, at - Date.now()),
    );
    this.helloTimer.unref();
  }
}

// ---- Frame sizes ----

/** Each frame's length prefix (docs/executor.md § Framing: a 4-byte length, then the UTF-8 JSON). */
const FRAME_HEADER_BYTES = 4;

/**
 * The UTF-8 size of each frame of one read, given the bytes the decoder consumed for them: a frame's
 * text length when the read is all ASCII (its payload bytes equal its characters; the usual case, with
 * no scan of the text), else measured. A success's size stands in for its value's (maxCollectedOutputBytes).
 */
function frameSizes(frames: readonly string[], consumedBytes: number): (i: number) => number {
  let chars = 0;
  for (let i = 0; i < frames.length; i++) chars += frames[i]!.length;
  if (chars === consumedBytes - FRAME_HEADER_BYTES * frames.length) return (i) => frames[i]!.length;
  return (i) => Buffer.byteLength(frames[i]!);
}

// ---- Serving a request ----
//
// Serving a `callWaiting` request through the link's `onWaiting` handler (the events and their guarantees are docs/executor.md, "The Worker's API"). If the handler returns a promise, its
// outcome goes back to the call as a ResumeCall; a handler that throws or rejects answers with an `io`
// error the call can handle. A handler that returns undefined leaves the request to whoever handles
// `callWaiting` events.

/** Offer `req` to `handler`; `resume` carries its answer back (ExecutorLink#resumeCall). */
export function serveWaiting(
  handler: ExecutorLinkOptions['onWaiting'],
  req: WaitingRequest,
  resume: (callId: string, attempt: number, outcome: ResumeOutcome) => void,
): void {
  if (!handler) return;
  let pending: Promise<ResumeOutcome> | undefined;
  try {
    pending = handler(req);
  } catch (err) {
    pending = Promise.reject(err);
  }
  if (!pending) return;
  pending.then(
    (outcome) => resume(req.callId, req.attempt, { ...outcome, requestId: req.requestId }),
    (err: unknown) => {
      const e = err as { message?: string; retryable?: unknown; code?: unknown } | undefined;
      resume(req.callId, req.attempt, {
        requestId: req.requestId,
        ok: false,
        error: {
          message: e?.message ?? String(err),
          kind: 'io',
          retryable: e?.retryable === true,
          ...(typeof e?.code === 'string' ? { code: e.code } : {}),
        },
      });
    },
  );
}
