// LinkCore: the Worker's end of the executor protocol, without the socket (docs/executor.md).
//
// Theory of operation. Connections to the executor socket come and go; at most one of them is *the*
// executor (`current`). A connection becomes it only through the handshake: its FIRST frame must be a
// Hello carrying the secret the supervisor handed the process it spawned (one secret per spawn, used
// once). Until then it is kept apart: it is sent nothing, displaces nothing, and is refused (closed, one
// log line, never the secret) when its first frame is anything else or it stays silent past its hello
// deadline. An authenticated newcomer supersedes the old executor, which is then lost.
//
// The executor is ready from its first Heartbeat until it is lost. Every accepted `executeCall` is an
// entry of the in-flight table, keyed by (callId, attempt), until exactly one terminal event leaves for
// it: `callCompleted` / `callFailed` from the executor that ran it, or a failure the link decides:
//  - queued while no executor is ready (unless `queueWhileDown` is false: then it fails at once);
//  - cancelled while queued → `deadline`; its arguments cannot be encoded → `user`;
//  - its executor is lost → `executorLost`, then `executor_crash` (retryable) for every attempt sent to it;
//  - the link closes → `executor_crash` for whatever is left.
// A CallsCompleted frame (docs/executor.md § Calls in bulk) is the terminal of each attempt it names that
// is in flight on that connection, all in one `callsCompleted` event; the others are dropped like any late
// frame, so a duplicate entry cannot answer an attempt twice. With `bulkResults` every success is reported
// so, and successes of one task arriving back to back (frames of one read) join one event.
// Frames of a connection that is no longer the executor are dropped, so a late terminal frame can never
// answer an attempt twice.
//
// Inputs are the methods below; each takes what happened (and `now` where time matters) and queues
// commands (commands.ts) the shell drains with `takeCommands()`. No IO, no clock, no timers: the only
// deadline, each pending connection's Hello bound, is data (`nextDeadline()`, `tick(now)`).
// The state, the queries and the steps the inputs share (send, authenticate, refuse, lose) are
// link-state.ts; this file is one method per input.

import { CallAlreadyInFlightError } from '../../../../executor/errors.js';
import {
  PROTOCOL_VERSION,
  attemptKey,
  type CallsCompletedMessage,
  type ExecutorToWorker,
} from '../../../../executor/protocol.js';
import type { ConnId } from './commands.js';
import { failedEvent, newConn, startedEvent, terminalEvent, type Conn, type Inflight } from './frames.js';
import { LinkState } from './link-state.js';
import type { CompletedCallReport, ExecuteCallCommand, ResumeOutcome } from './types.js';

export type { LinkCoreOptions } from './link-state.js';

export class LinkCore extends LinkState {
  // ---- handshake inputs --------------------------------------------------------------------------------

  /** The secret of the executor about to be spawned; replaces any earlier one, opens one connection. */
  expectSecret(secret: string): void {
    this.expectedSecret = secret;
  }

  /** A connection was accepted. Returns its id; a closed link refuses it silently. */
  connectionOpened(now: number): ConnId {
    const id = this.nextConnId++;
    const conn = newConn(id, now);
    this.setHelloDeadline(conn, now + this.opts.helloTimeoutMs);
    this.conns.set(id, conn);
    if (this.closedLink) this.refuse(conn, undefined);
    return id;
  }

  /** Hello deadlines that passed. */
  tick(now: number): void {
    if (this.awaitingHello === 0) return;
    for (const c of [...this.conns.values()])
      if (c.helloDeadline !== undefined && c.helloDeadline <= now)
        this.refuse(c, `no Hello within ${this.opts.helloTimeoutMs} ms`);
  }

  /** The socket closed or failed (`error`: its message). */
  connectionClosed(id: ConnId, error?: string): void {
    const conn = this.conns.get(id);
    if (!conn) return;
    if (conn.authenticated)
      this.lose(
        conn,
        error === undefined ? 'executor connection closed' : `executor connection error: ${error}`,
      );
    else
      this.refuse(
        conn,
        error === undefined ? 'closed before sending a Hello' : `connection error before a Hello: ${error}`,
      );
  }

  /** The framing failed (length too large, bad bytes). */
  decodeFailed(id: ConnId, message: string): void {
    const conn = this.conns.get(id);
    if (!conn) return;
    if (conn.authenticated) this.lose(conn, `protocol error: ${message}`);
    else this.refuse(conn, `protocol error before a Hello: ${message}`);
  }

  /** A frame is not a protocol message. */
  frameUnparsable(id: ConnId, message: string): void {
    const conn = this.conns.get(id);
    if (!conn) return;
    if (conn.authenticated) this.lose(conn, `protocol error: ${message}`);
    else this.refuse(conn, `its first frame is not a message (${message})`);
  }

  /** A connection that has not authenticated sent (or is buffering) a first frame too large for a Hello. */
  firstFrameTooLarge(id: ConnId): void {
    const conn = this.conns.get(id);
    if (conn && !conn.authenticated) this.refuse(conn, 'its first frame is too large');
  }

  /** One frame. `frameBytes`: its size, needed for CallCompleted(s) only (the values' size stand-in). */
  messageReceived(id: ConnId, now: number, m: ExecutorToWorker, frameBytes: number): void {
    const conn = this.conns.get(id);
    if (!conn || conn.closed) return;
    if (!conn.authenticated && !this.authenticate(conn, m)) return;
    switch (m.type) {
      case 'Hello':
        if (conn.hello) return; // said already, on the frame that authenticated this connection
        if (m.protocolVersion !== PROTOCOL_VERSION) {
          this.out.push({
            type: 'log',
            level: 'error',
            message: `executor speaks protocol ${m.protocolVersion}, expected ${PROTOCOL_VERSION}`,
          });
          const frame = { type: 'Shutdown', reason: 'protocol version mismatch', graceMs: 0 } as const;
          this.out.push({ type: 'send', conn: conn.id, frame, flush: true });
          this.lose(conn, `protocol version mismatch (${m.protocolVersion} != ${PROTOCOL_VERSION})`);
          return;
        }
        conn.hello = true;
        conn.pid = m.pid;
        conn.executorVersion = m.executorVersion;
        conn.threads = m.threads;
        return;
      case 'Heartbeat': {
        conn.lastHeartbeatAtMs = now;
        if (!conn.ready) {
          if (!conn.hello) {
            this.lose(conn, 'protocol error: Heartbeat before Hello');
            return;
          }
          conn.ready = true;
          const { pid, executorVersion, threads } = conn;
          this.emit({ type: 'executorReady', pid: pid!, executorVersion, threads });
          this.out.push({ type: 'flushQueued', conn: conn.id });
        }
        const { type: _type, ...stats } = m;
        this.emit({ type: 'heartbeat', ...stats });
        return;
      }
      case 'CallStarted': {
        const entry = this.entryOn(conn, m.callId, m.attempt);
        if (entry) this.emit(startedEvent(entry, m));
        return;
      }
      case 'CallWaiting': {
        const entry = this.entryOn(conn, m.callId, m.attempt);
        if (!entry) return;
        (entry.waits ??= []).push(m.requestId);
        const { callId, attempt, requestId, request } = m;
        const req = { taskId: entry.taskId, callId, attempt, requestId, request };
        this.emit({ type: 'callWaiting', ...req });
        this.out.push({ type: 'serveWaiting', request: req });
        return;
      }
      case 'CallsCompleted':
        this.callsCompleted(conn, m, frameBytes);
        return;
      case 'CallCompleted':
      case 'CallFailed': {
        const entry = this.entryOn(conn, m.callId, m.attempt);
        if (!entry) return;
        this.inflightCalls.delete(attemptKey(m.callId, m.attempt));
        // With bulkResults a success joins its task's callsCompleted event (the frame is its own entry).
        if (m.type === 'CallCompleted' && this.opts.bulkResults === true)
          this.emitSuccesses(entry.taskId, [m], frameBytes);
        else this.emit(terminalEvent(entry, m, frameBytes));
        return;
      }
      default: {
        const unknown: never = m;
        const type = (unknown as { type: string }).type;
        this.out.push({ type: 'log', level: 'warn', message: `ignoring unknown executor frame ${type}` });
      }
    }
  }

  private callsCompleted(conn: Conn, m: CallsCompletedMessage, frameBytes: number): void {
    const results = m.results as readonly CompletedCallReport[] | undefined;
    if (!Array.isArray(results)) {
      this.lose(conn, 'protocol error: a CallsCompleted frame without results');
      return;
    }
    // Copied only when an entry is left out (not in flight here, a duplicate, not an entry at all).
    let kept: CompletedCallReport[] | undefined;
    for (let i = 0; i < results.length; i++) {
      const r = results[i]!;
      const entry = typeof r === 'object' && r !== null ? this.entryOn(conn, r.callId, r.attempt) : undefined;
      if (entry !== undefined) {
        this.inflightCalls.delete(attemptKey(r.callId, r.attempt));
        kept?.push(r);
      } else if (kept === undefined) kept = results.slice(0, i);
    }
    const reported = kept ?? results;
    // Each entry's size stand-in is its frame's bytes shared out over the frame's entries.
    const bytes = Math.ceil((frameBytes * reported.length) / results.length);
    if (reported.length > 0) this.emitSuccesses(m.taskId, reported, bytes);
  }

  // ---- call inputs -------------------------------------------------------------------------------------

  /**
   * Many attempts, in order, each as `executeCall`, except that one whose attempt is already in flight is
   * refused with a retryable `executor_crash` failure on a microtask instead of a throw (the others go on).
   */
  executeCalls(commands: readonly ExecuteCallCommand[]): void {
    for (let i = 0; i < commands.length; i++) {
      const command = commands[i]!;
      if (this.inflightCalls.has(attemptKey(command.callId, command.attempt))) {
        const why = `the executor link refused the call: ${new CallAlreadyInFlightError(command.callId, command.attempt).message}`;
        this.out.push({ type: 'emitLater', event: failedEvent(command, 'executor_crash', true, why) });
      } else this.executeCall(command);
    }
  }

  executeCall(command: ExecuteCallCommand): void {
    const key = attemptKey(command.callId, command.attempt);
    if (this.inflightCalls.has(key)) throw new CallAlreadyInFlightError(command.callId, command.attempt);
    const { taskId, callId, attempt } = command;
    const entry: Inflight = { taskId, callId, attempt, conn: undefined, command, waits: undefined };
    if (this.current?.ready) {
      this.inflightCalls.set(key, entry);
      this.send(this.current, entry);
    } else if (this.opts.queueWhileDown && !this.closedLink) {
      this.inflightCalls.set(key, entry);
      this.queued.push(entry);
    } else {
      const why = this.closedLink ? 'executor link is closed' : 'no executor is ready';
      this.out.push({ type: 'emitLater', event: failedEvent(entry, 'executor_crash', true, why) });
    }
  }

  /** Cancel an attempt: a sent one gets CancelCall; a queued one fails at once (kind `deadline`). */
  cancelCall(callId: string, attempt: number, reason: string): void {
    const key = attemptKey(callId, attempt);
    const entry = this.inflightCalls.get(key);
    if (!entry) return;
    if (entry.conn === undefined) {
      this.inflightCalls.delete(key);
      this.queued = this.queued.filter((q) => q !== entry);
      const message = `cancelled before it was sent (${reason})`;
      this.out.push({ type: 'emitLater', event: failedEvent(entry, 'deadline', true, message) });
      return;
    }
    if (!entry.conn.closed)
      this.out.push({
        type: 'send',
        conn: entry.conn.id,
        frame: { type: 'CancelCall', callId, attempt, reason },
        flush: false,
      });
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
    this.out.push({ type: 'sendResume', conn: entry.conn.id, callId, attempt, requestId, outcome });
  }

  /** The Calls phase `ioCache` ended. A new executor starts without copies: nothing to say to it. */
  dropIoCache(ioCache: string): void {
    const conn = this.current;
    if (!conn?.ready || conn.closed) return;
    this.out.push({ type: 'send', conn: conn.id, frame: { type: 'DropIoCache', ioCache }, flush: false });
  }

  /** No task uses `epoch` any more: tell the executor, if it was defined on this connection. */
  retireEpoch(epoch: string): void {
    const conn = this.current;
    if (!conn || conn.closed || !conn.sentEpochs.delete(epoch)) return;
    this.out.push({ type: 'send', conn: conn.id, frame: { type: 'RetireEpoch', epoch }, flush: false });
  }

  /** Ask the executor to stop after at most `graceMs`. */
  shutdownExecutor(reason: string, graceMs: number): void {
    const conn = this.current;
    if (!conn || conn.closed) return;
    this.out.push({ type: 'send', conn: conn.id, frame: { type: 'Shutdown', reason, graceMs }, flush: true });
  }

  /** Treat the current executor as lost (e.g. missed heartbeats). */
  dropConnection(reason: string): void {
    if (this.current) this.lose(this.current, reason);
  }

  /** The link closes: refuse pending connections, lose the executor, fail everything left. */
  close(): void {
    if (this.closedLink) return;
    this.closedLink = true;
    this.expectedSecret = undefined;
    for (const c of [...this.conns.values()]) if (!c.authenticated) this.refuse(c, undefined);
    if (this.current) this.lose(this.current, 'executor link closed');
    const pending = [...this.inflightCalls.values()];
    this.inflightCalls.clear();
    this.queued = [];
    for (const entry of pending)
      this.emit(failedEvent(entry, 'executor_crash', true, 'executor link closed'));
  }

  // ---- continuations and reports from the shell --------------------------------------------------------

  /** After `executorReady`: send the calls held while no executor was ready. */
  flushQueued(id: ConnId): void {
    const conn = this.conns.get(id);
    const queued = this.queued;
    this.queued = [];
    for (const entry of queued) {
      const live = this.inflightCalls.get(attemptKey(entry.callId, entry.attempt)) === entry;
      if (!live) continue;
      if (conn && conn === this.current && conn.ready && !conn.closed) this.send(conn, entry);
      else this.queued.push(entry); // lost meanwhile: hold them for the next executor
    }
  }

  /** The DefineEpoch of `epoch` could not be sent: the executor falls back to its own directory. */
  epochNotDefined(id: ConnId, epoch: string): void {
    this.conns.get(id)?.sentEpochs.delete(epoch);
  }

  /** The ExecuteCall could not be encoded (too large, not JSON): this attempt can never run. */
  executeUnsendable(callId: string, attempt: number, message: string): void {
    const key = attemptKey(callId, attempt);
    const entry = this.inflightCalls.get(key);
    if (!entry) return;
    this.inflightCalls.delete(key);
    const why = `cannot send the call to the executor: ${message}`;
    this.out.push({ type: 'emitLater', event: failedEvent(entry, 'user', false, why) });
  }
}
