// The Worker's end of the executor socket. The Worker listens; the (supervised) executor connects.
//
// Command-shaped API for the dispatcher adapter: `executeCall`, `cancelCall`, `resumeCall`; everything
// the executor reports comes back through one `onEvent` handler. Invariants the dispatcher can rely on:
//
//  - every `executeCall` gets exactly one terminal event, `callCompleted` or `callFailed`;
//  - `callStarted` (with `elapsedMs` already spent on the executor thread) comes only for calls that
//    run longer than ~25 ms; a quick call goes straight to `callCompleted` / `callWaiting` /
//    `callFailed`, each of which implies it started;
//  - when the executor is lost (socket closed, heartbeat timeout, process exit) the link emits
//    `executorLost`, then a retryable `executor_crash` `callFailed` for every attempt it had sent;
//  - while no executor is ready, new calls wait in the link (not started: no budget runs) and go out
//    when the next executor is ready, unless `queueWhileDown` is false (then they fail retryably).
//
// IO and subcall requests (`callWaiting`) are emitted as events; if `onWaiting` returns a promise for a
// request, the link answers it itself with ResumeCall. Synthetic events (failures the link decides)
// are emitted on a microtask, never from inside the command that caused them.

import { createServer, type Server, type Socket } from 'node:net';
import { CallAlreadyInFlightError } from '../../../executor/errors.js';
import { jsonOf } from './frozen-json.js';
import { FrameDecoder, FrameWriter, parseMessage } from '../../../executor/frame-codec.js';
import {
  PROTOCOL_VERSION,
  attemptKey,
  type CallFailureKind,
  type ExecutorToWorker,
} from '../../../executor/protocol.js';
import { listenOnSocket, unlinkOwnSocket, type SocketFileIdentity } from '../../../executor/socket-path.js';
import type {
  AttemptFields,
  ExecuteCallCommand,
  ExecutorLinkOptions,
  ResumeOutcome,
  WaitingRequest,
} from './executor-link-types.js';

export type * from './executor-link-types.js';

interface Inflight extends AttemptFields {
  /** The connection the ExecuteCall went out on; undefined while queued in the link. */
  conn: Connection | undefined;
  command: ExecuteCallCommand;
  /** Open request ids, oldest first. */
  waits: number[] | undefined;
}

interface Connection {
  readonly socket: Socket;
  readonly writer: FrameWriter;
  readonly decoder: FrameDecoder;
  pid: number | undefined;
  executorVersion: string;
  threads: number;
  hello: boolean;
  ready: boolean;
  lastHeartbeatAtMs: number;
  readonly sentEpochs: Set<string>;
  closed: boolean;
}

export class ExecutorLink {
  private readonly opts: ExecutorLinkOptions;
  private readonly inflightCalls = new Map<string, Inflight>();
  private queued: Inflight[] = [];
  private server: Server | undefined;
  private socketFile: SocketFileIdentity | undefined;
  private conn: Connection | undefined;
  private closed = false;
  private readonly unsubscribeRetire: (() => void) | undefined;

  constructor(options: ExecutorLinkOptions) {
    this.opts = options;
    this.unsubscribeRetire = options.epochs?.onRetire((epoch) => this.retireEpoch(epoch));
  }

  /** Listen on the socket path (taking over a stale socket file, refusing a live one). */
  async listen(): Promise<void> {
    const server = createServer((socket) => this.accept(socket));
    this.socketFile = await listenOnSocket(server, this.opts.socketPath);
    this.server = server;
  }

  get socketPath(): string {
    return this.opts.socketPath;
  }

  /** True between the executor's first heartbeat and its loss. */
  get ready(): boolean {
    return this.conn?.ready === true;
  }

  /** Attempts accepted and not yet terminal (sent or queued). */
  get inflight(): number {
    return this.inflightCalls.size;
  }

  get executorPid(): number | undefined {
    return this.conn?.pid;
  }

  /** When the current executor last sent a heartbeat (Date.now ms), if it is connected. */
  get lastHeartbeatAtMs(): number | undefined {
    return this.conn?.lastHeartbeatAtMs;
  }

  executeCall(command: ExecuteCallCommand): void {
    const key = attemptKey(command.callId, command.attempt);
    if (this.inflightCalls.has(key)) throw new CallAlreadyInFlightError(command.callId, command.attempt);
    const entry: Inflight = {
      taskId: command.taskId,
      callId: command.callId,
      attempt: command.attempt,
      conn: undefined,
      command,
      waits: undefined,
    };
    if (this.conn?.ready) {
      this.inflightCalls.set(key, entry);
      this.send(this.conn, entry);
    } else if (this.opts.queueWhileDown !== false && !this.closed) {
      this.inflightCalls.set(key, entry);
      this.queued.push(entry);
    } else {
      this.later(() =>
        this.emitFailed(
          entry,
          'executor_crash',
          true,
          this.closed ? 'executor link is closed' : 'no executor is ready',
        ),
      );
    }
  }

  /** Cancel an attempt: the executor aborts its signal; a queued one fails at once (kind `deadline`). */
  cancelCall(callId: string, attempt: number, reason = 'cancelled by the worker'): void {
    const key = attemptKey(callId, attempt);
    const entry = this.inflightCalls.get(key);
    if (!entry) return;
    if (entry.conn === undefined) {
      this.inflightCalls.delete(key);
      this.queued = this.queued.filter((q) => q !== entry);
      this.later(() => this.emitFailed(entry, 'deadline', true, `cancelled before it was sent (${reason})`));
      return;
    }
    if (!entry.conn.closed) entry.conn.writer.send({ type: 'CancelCall', callId, attempt, reason });
  }

  /** Answer a `callWaiting` request. Unknown attempts and requests are ignored (the call has ended). */
  resumeCall(callId: string, attempt: number, outcome: ResumeOutcome): void {
    const entry = this.inflightCalls.get(attemptKey(callId, attempt));
    if (!entry?.conn || entry.conn.closed || !entry.waits?.length) return;
    let requestId = outcome.requestId;
    if (requestId === undefined) {
      requestId = entry.waits.shift()!;
    } else {
      const i = entry.waits.indexOf(requestId);
      if (i < 0) return;
      entry.waits.splice(i, 1);
    }
    const writer = entry.conn.writer;
    try {
      if (outcome.ok)
        // A cached row goes to every call that reads it: its text is taken once (frozen-json.ts).
        writer.sendJson(
          `{"type":"ResumeCall","callId":${JSON.stringify(callId)},"attempt":${attempt}` +
            `,"requestId":${requestId},"ok":true,"value":${jsonOf(outcome.value ?? null)}}`,
        );
      else writer.send({ type: 'ResumeCall', callId, attempt, requestId, ok: false, error: outcome.error });
    } catch (err) {
      // The answer cannot travel (too large, not JSON): the call gets an error it can handle instead.
      writer.send({
        type: 'ResumeCall',
        callId,
        attempt,
        requestId,
        ok: false,
        error: {
          message: `the worker's answer cannot be sent: ${(err as Error).message}`,
          kind: 'io',
          retryable: false,
        },
      });
    }
  }

  /** The Calls phase `ioCache` ended: the executor's threads drop their read copies of it. */
  dropIoCache(ioCache: string): void {
    const conn = this.conn;
    if (!conn?.ready || conn.closed) return; // a new executor starts without copies
    conn.writer.send({ type: 'DropIoCache', ioCache });
  }

  /** Tell the executor no task uses `epoch` any more (the code view does this by itself when given). */
  retireEpoch(epoch: string): void {
    const conn = this.conn;
    if (!conn || conn.closed || !conn.sentEpochs.delete(epoch)) return;
    conn.writer.send({ type: 'RetireEpoch', epoch });
  }

  /** Ask the executor to stop after at most `graceMs`. */
  shutdownExecutor(reason: string, graceMs: number): void {
    const conn = this.conn;
    if (!conn || conn.closed) return;
    conn.writer.send({ type: 'Shutdown', reason, graceMs });
    conn.writer.flush();
  }

  /** Treat the current executor as lost (e.g. missed heartbeats): close it and fail its attempts. */
  dropConnection(reason: string): void {
    if (this.conn) this.lose(this.conn, reason);
  }

  /** Stop listening, drop the executor, fail every attempt, and remove our socket file. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribeRetire?.();
    if (this.conn) this.lose(this.conn, 'executor link closed');
    const pending = [...this.inflightCalls.values()];
    this.inflightCalls.clear();
    this.queued = [];
    for (const entry of pending) this.emitFailed(entry, 'executor_crash', true, 'executor link closed');
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    if (this.socketFile) await unlinkOwnSocket(this.socketFile);
  }

  // ---- connection ------------------------------------------------------------------------------------

  private accept(socket: Socket): void {
    if (this.closed) {
      socket.destroy();
      return;
    }
    // One executor at a time: a newer connection supersedes the old one (its process is being replaced).
    if (this.conn) this.lose(this.conn, 'superseded by a new executor connection');
    const conn: Connection = {
      socket,
      writer: new FrameWriter(socket, { maxFrameBytes: this.opts.maxFrameBytes }),
      decoder: new FrameDecoder({ maxFrameBytes: this.opts.maxFrameBytes }),
      pid: undefined,
      executorVersion: '',
      threads: 0,
      hello: false,
      ready: false,
      lastHeartbeatAtMs: Date.now(),
      sentEpochs: new Set(),
      closed: false,
    };
    this.conn = conn;
    socket.setNoDelay?.(true);
    socket.on('data', (chunk: Buffer) => this.onData(conn, chunk));
    socket.on('close', () => this.lose(conn, 'executor connection closed'));
    socket.on('error', (err) => this.lose(conn, `executor connection error: ${err.message}`));
  }

  private onData(conn: Connection, chunk: Buffer): void {
    if (conn.closed) return;
    let frames: string[];
    try {
      frames = conn.decoder.pushRaw(chunk);
    } catch (err) {
      this.lose(conn, `protocol error: ${(err as Error).message}`);
      return;
    }
    for (const raw of frames) {
      let m: ExecutorToWorker;
      try {
        m = parseMessage<ExecutorToWorker>(raw);
      } catch (err) {
        this.lose(conn, `protocol error: ${(err as Error).message}`);
        return;
      }
      this.onMessage(conn, m, raw);
      if (conn.closed) return;
    }
  }

  /** `raw`: the frame's JSON text (its size stands in for the size of a completed call's value). */
  private onMessage(conn: Connection, m: ExecutorToWorker, raw: string): void {
    switch (m.type) {
      case 'Hello':
        if (m.protocolVersion !== PROTOCOL_VERSION) {
          this.opts.log?.(
            'error',
            `executor speaks protocol ${m.protocolVersion}, expected ${PROTOCOL_VERSION}`,
          );
          conn.writer.send({ type: 'Shutdown', reason: 'protocol version mismatch', graceMs: 0 });
          conn.writer.flush();
          this.lose(conn, `protocol version mismatch (${m.protocolVersion} != ${PROTOCOL_VERSION})`);
          return;
        }
        conn.hello = true;
        conn.pid = m.pid;
        conn.executorVersion = m.executorVersion;
        conn.threads = m.threads;
        return;
      case 'Heartbeat': {
        conn.lastHeartbeatAtMs = Date.now();
        if (!conn.ready) {
          if (!conn.hello) {
            this.lose(conn, 'protocol error: Heartbeat before Hello');
            return;
          }
          conn.ready = true;
          this.opts.onEvent({
            type: 'executorReady',
            pid: conn.pid!,
            executorVersion: conn.executorVersion,
            threads: conn.threads,
          });
          this.flushQueued(conn);
        }
        const { type: _type, ...stats } = m;
        this.opts.onEvent({ type: 'heartbeat', ...stats });
        return;
      }
      case 'CallStarted': {
        const entry = this.entryOn(conn, m.callId, m.attempt);
        if (entry) {
          this.opts.onEvent({
            type: 'callStarted',
            taskId: entry.taskId,
            callId: m.callId,
            attempt: m.attempt,
            elapsedMs: m.elapsedMs ?? 0,
          });
        }
        return;
      }
      case 'CallWaiting': {
        const entry = this.entryOn(conn, m.callId, m.attempt);
        if (!entry) return;
        (entry.waits ??= []).push(m.requestId);
        const req = {
          taskId: entry.taskId,
          callId: m.callId,
          attempt: m.attempt,
          requestId: m.requestId,
          request: m.request,
        };
        this.opts.onEvent({ type: 'callWaiting', ...req });
        this.serveWaiting(req);
        return;
      }
      case 'CallCompleted': {
        const entry = this.entryOn(conn, m.callId, m.attempt);
        if (!entry) return;
        this.inflightCalls.delete(attemptKey(m.callId, m.attempt));
        this.opts.onEvent({
          type: 'callCompleted',
          taskId: entry.taskId,
          callId: m.callId,
          attempt: m.attempt,
          value: m.value ?? null,
          durationMs: m.durationMs,
          // The frame is the value plus a small envelope: measuring it costs no second serialisation.
          outputBytes: Buffer.byteLength(raw),
          ...ioHitsOf(m),
        });
        return;
      }
      case 'CallFailed': {
        const entry = this.entryOn(conn, m.callId, m.attempt);
        if (!entry) return;
        this.inflightCalls.delete(attemptKey(m.callId, m.attempt));
        this.opts.onEvent({
          type: 'callFailed',
          taskId: entry.taskId,
          callId: m.callId,
          attempt: m.attempt,
          kind: m.kind,
          retryable: m.retryable,
          message: m.message,
          ...(m.stack !== undefined ? { stack: m.stack } : {}),
          ...(m.code !== undefined ? { code: m.code } : {}),
          ...ioHitsOf(m),
        });
        return;
      }
      default: {
        const _exhaustive: never = m;
        this.opts.log?.('warn', `ignoring unknown executor frame ${(_exhaustive as { type: string }).type}`);
      }
    }
  }

  /** The attempt, if it is in flight on this connection (late frames of a lost connection are dropped). */
  private entryOn(conn: Connection, callId: string, attempt: number): Inflight | undefined {
    const entry = this.inflightCalls.get(attemptKey(callId, attempt));
    return entry?.conn === conn ? entry : undefined;
  }

  private serveWaiting(req: WaitingRequest): void {
    const handler = this.opts.onWaiting;
    if (!handler) return;
    let pending: Promise<ResumeOutcome> | undefined;
    try {
      pending = handler(req);
    } catch (err) {
      pending = Promise.reject(err);
    }
    if (!pending) return;
    pending.then(
      (outcome) => this.resumeCall(req.callId, req.attempt, { ...outcome, requestId: req.requestId }),
      (err: unknown) => {
        const e = err as { message?: string; retryable?: unknown; code?: unknown } | undefined;
        this.resumeCall(req.callId, req.attempt, {
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

  private send(conn: Connection, entry: Inflight): void {
    const c = entry.command;
    this.defineEpoch(conn, c.codeEpoch);
    try {
      // The hottest line of the link, written as text: the block every call of a task shares is
      // serialised once (frozen-json.ts), the rest per call. Same JSON as the ExecuteCall object.
      const block = c.block === undefined || c.block === null ? '' : `,"block":${jsonOf(c.block)}`;
      conn.writer.sendJson(
        `{"type":"ExecuteCall","taskId":${JSON.stringify(c.taskId)},"callId":${JSON.stringify(c.callId)}` +
          `,"attempt":${c.attempt},"function":${JSON.stringify(c.function)},"args":${JSON.stringify(c.args)}` +
          `${block},"codeEpoch":${JSON.stringify(c.codeEpoch)},"budgetMs":${c.budgetMs}` +
          `${c.ioCache === undefined ? '' : `,"ioCache":${JSON.stringify(c.ioCache)}`}}`,
      );
    } catch (err) {
      // Arguments too large for a frame (or not JSON): this attempt can never run.
      this.inflightCalls.delete(attemptKey(c.callId, c.attempt));
      const message = `cannot send the call to the executor: ${(err as Error).message}`;
      this.later(() => this.emitFailed(entry, 'user', false, message));
      return;
    }
    entry.conn = conn;
  }

  private defineEpoch(conn: Connection, epoch: string): void {
    if (conn.sentEpochs.has(epoch)) return;
    const snap = this.opts.epochs?.snapshot(epoch);
    if (!snap) return; // the executor falls back to its own view of the directory
    try {
      conn.writer.send({ type: 'DefineEpoch', epoch, functionsDir: snap.functionsDir, files: snap.files });
      conn.sentEpochs.add(epoch);
    } catch (err) {
      // Too large for one frame: the executor falls back to its own view of the directory.
      this.opts.log?.(
        'error',
        `cannot define code epoch ${epoch} on the executor: ${(err as Error).message}`,
      );
    }
  }

  private flushQueued(conn: Connection): void {
    const queued = this.queued;
    this.queued = [];
    for (const entry of queued) {
      if (this.inflightCalls.get(attemptKey(entry.callId, entry.attempt)) === entry) this.send(conn, entry);
    }
  }

  private lose(conn: Connection, reason: string): void {
    if (conn.closed) return;
    conn.closed = true;
    conn.writer.close();
    conn.socket.destroy();
    if (this.conn !== conn) return;
    this.conn = undefined;
    const failed: Inflight[] = [];
    for (const [key, entry] of this.inflightCalls) {
      if (entry.conn === conn) {
        this.inflightCalls.delete(key);
        failed.push(entry);
      }
    }
    if (!conn.hello && failed.length === 0) return; // never introduced itself: nothing was lost
    this.opts.onEvent({ type: 'executorLost', reason, pid: conn.pid, failedAttempts: failed.length });
    for (const entry of failed) this.emitFailed(entry, 'executor_crash', true, `executor lost: ${reason}`);
  }

  private emitFailed(entry: AttemptFields, kind: CallFailureKind, retryable: boolean, message: string): void {
    this.opts.onEvent({
      type: 'callFailed',
      taskId: entry.taskId,
      callId: entry.callId,
      attempt: entry.attempt,
      kind,
      retryable,
      message,
    });
  }

  private later(fn: () => void): void {
    queueMicrotask(fn);
  }
}

/** `{ioHits}` of a terminal frame when it reports a positive whole number of copy hits, else `{}`. */
function ioHitsOf(m: { readonly ioHits?: number }): { ioHits?: number } {
  const hits = m.ioHits;
  return typeof hits === 'number' && Number.isInteger(hits) && hits > 0 ? { ioHits: hits } : {};
}
