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
//
// Who may speak for the executor (docs/security.md, "The executor socket"): the socket sits in a 0700
// directory and is 0600, and a connection counts only once its FIRST frame is a Hello carrying the
// secret the supervisor handed the process it spawned (`issueSecret`, one per spawn, used once). Until
// then a connection is kept apart: it receives nothing, cannot displace the live executor, and is
// closed (one warn line, never the secret) when its first frame is anything else or it stays silent
// for `helloTimeoutMs`.

import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { CallAlreadyInFlightError } from '../../../executor/errors.js';
import { jsonOf } from './frozen-json.js';
import { logRateLimit, suppressedSuffix } from '../../../kernel/observability/log-rate-limit.js';
import { FrameDecoder, FrameWriter, parseMessage } from '../../../executor/frame-codec.js';
import {
  PROTOCOL_VERSION,
  attemptKey,
  type CallFailureKind,
  type ExecutorToWorker,
} from '../../../executor/protocol.js';
import {
  listenOnSocket,
  makePrivateSocketDir,
  removePrivateSocketDir,
  unlinkOwnSocket,
  type SocketFileIdentity,
} from '../../../executor/socket-path.js';
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
  /** Its first frame was a Hello with the spawn secret: only then may it be `ExecutorLink.conn`. */
  authenticated: boolean;
  helloTimer: NodeJS.Timeout | undefined;
}

/** Bound on a new connection's wait for its Hello (docs/security.md). */
export const DEFAULT_HELLO_TIMEOUT_MS = 5_000;
/** A Hello is a few hundred bytes; a connection that buffers more before one is not an executor. */
const MAX_HELLO_BYTES = 64 * 1024;

export class ExecutorLink {
  private readonly opts: ExecutorLinkOptions;
  private readonly inflightCalls = new Map<string, Inflight>();
  private queued: Inflight[] = [];
  private server: Server | undefined;
  private socketFile: SocketFileIdentity | undefined;
  private listeningOn: string | undefined;
  /** The 0700 directory listen() made (socketDir mode), removed on close. */
  private privateDir: string | undefined;
  /** The current spawn's secret; cleared once a Hello presented it (a secret opens one connection). */
  private expectedSecret: Buffer | undefined;
  /** Connections that have not presented an authenticated Hello yet. */
  private readonly unauthenticated = new Set<Connection>();
  private conn: Connection | undefined;
  private closed = false;
  private readonly refusalLog = logRateLimit({ burst: 10, intervalMs: 10_000 });
  private readonly unsubscribeRetire: (() => void) | undefined;

  constructor(options: ExecutorLinkOptions) {
    this.opts = options;
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
    } catch (err) {
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
    this.expectedSecret = Buffer.from(secret, 'utf8');
    return secret;
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
    this.expectedSecret = undefined;
    for (const pending of [...this.unauthenticated]) this.refuse(pending, undefined);
    if (this.conn) this.lose(this.conn, 'executor link closed');
    const pending = [...this.inflightCalls.values()];
    this.inflightCalls.clear();
    this.queued = [];
    for (const entry of pending) this.emitFailed(entry, 'executor_crash', true, 'executor link closed');
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    if (this.socketFile) await unlinkOwnSocket(this.socketFile);
    if (this.privateDir !== undefined) await removePrivateSocketDir(this.privateDir);
    this.privateDir = undefined;
  }

  // ---- connection ------------------------------------------------------------------------------------

  private accept(socket: Socket): void {
    if (this.closed) {
      socket.destroy();
      return;
    }
    // Not the executor yet: it becomes one (superseding the old) only with an authenticated Hello.
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
      authenticated: false,
      helloTimer: undefined,
    };
    this.unauthenticated.add(conn);
    const helloTimeoutMs = this.opts.helloTimeoutMs ?? DEFAULT_HELLO_TIMEOUT_MS;
    conn.helloTimer = setTimeout(
      () => this.refuse(conn, `no Hello within ${helloTimeoutMs} ms`),
      helloTimeoutMs,
    );
    conn.helloTimer.unref();
    socket.setNoDelay?.(true);
    socket.on('data', (chunk: Buffer) => this.onData(conn, chunk));
    socket.on('close', () =>
      conn.authenticated
        ? this.lose(conn, 'executor connection closed')
        : this.refuse(conn, 'closed before sending a Hello'),
    );
    socket.on('error', (err) =>
      conn.authenticated
        ? this.lose(conn, `executor connection error: ${err.message}`)
        : this.refuse(conn, `connection error before a Hello: ${err.message}`),
    );
  }

  private onData(conn: Connection, chunk: Buffer): void {
    if (conn.closed) return;
    let frames: string[];
    try {
      frames = conn.decoder.pushRaw(chunk);
    } catch (err) {
      if (conn.authenticated) this.lose(conn, `protocol error: ${(err as Error).message}`);
      else this.refuse(conn, `protocol error before a Hello: ${(err as Error).message}`);
      return;
    }
    if (!conn.authenticated) {
      const first = frames[0];
      if (first === undefined) {
        if (conn.decoder.pendingBytes > MAX_HELLO_BYTES) this.refuse(conn, 'its first frame is too large');
        return;
      }
      if (!this.authenticate(conn, first)) return;
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
        if (conn.hello) return; // said already, on the frame that authenticated this connection
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

  /**
   * The first frame of a connection decides whether it may speak for the executor: a Hello carrying the
   * current spawn secret. Anything else closes it (`refuse`) and leaves the live executor alone.
   */
  private authenticate(conn: Connection, raw: string): boolean {
    if (Buffer.byteLength(raw) > MAX_HELLO_BYTES) {
      this.refuse(conn, 'its first frame is too large');
      return false;
    }
    let m: { type: string; secret?: unknown };
    try {
      m = parseMessage<{ type: string; secret?: unknown }>(raw);
    } catch (err) {
      this.refuse(conn, `its first frame is not a message (${(err as Error).message})`);
      return false;
    }
    if (m.type !== 'Hello') {
      this.refuse(conn, `its first frame is ${JSON.stringify(m.type.slice(0, 40))}, not Hello`);
      return false;
    }
    if (typeof m.secret !== 'string' || m.secret === '') {
      this.refuse(conn, 'its Hello carries no secret');
      return false;
    }
    if (!this.secretMatches(m.secret)) {
      this.refuse(conn, 'its Hello carries a wrong or already used secret');
      return false;
    }
    this.expectedSecret = undefined; // one spawn, one connection
    clearTimeout(conn.helloTimer);
    conn.helloTimer = undefined;
    this.unauthenticated.delete(conn);
    conn.authenticated = true;
    // One executor at a time: an authenticated newcomer is the replacement process of a lost one.
    if (this.conn) this.lose(this.conn, 'superseded by a new executor connection');
    this.conn = conn;
    return true;
  }

  /** Constant-time comparison with the current spawn secret (there is none once it has been used). */
  private secretMatches(presented: string): boolean {
    const expected = this.expectedSecret;
    if (expected === undefined) return false;
    const got = Buffer.from(presented, 'utf8');
    return got.length === expected.length && timingSafeEqual(got, expected);
  }

  /**
   * Close a connection that never authenticated: it was never the executor, so nothing is lost and no
   * event is emitted. One warn line (`why` undefined: the link is closing, say nothing). The secret is
   * never logged, neither the expected one nor what the connection sent.
   */
  private refuse(conn: Connection, why: string | undefined): void {
    if (conn.closed) return;
    conn.closed = true;
    clearTimeout(conn.helloTimer);
    conn.helloTimer = undefined;
    this.unauthenticated.delete(conn);
    conn.writer.close();
    conn.socket.destroy();
    // Rate-limited: anyone with access to the socket can cause this line at will (docs/security.md § Logs).
    if (why !== undefined)
      this.refusalLog(Date.now(), (suppressed) =>
        this.opts.log?.(
          'warn',
          `refused a connection to the executor socket: ${why}; only the executor this worker spawned, ` +
            `presenting its secret, is served (docs/security.md)${suppressedSuffix(suppressed)}`,
        ),
      );
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
