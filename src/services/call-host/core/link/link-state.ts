// The link core's state and the primitives its inputs are built from: the connection table, the
// in-flight table and queue, the commands queued for the shell, the queries over them, and the steps
// every input shares (send an attempt, authenticate, refuse, lose). The rules they implement are
// stated at the top of link-core.ts (docs/executor.md); LinkCore adds one method per input.

import { attemptKey } from '../../../../executor/protocol.js';
import type { ConnId, LinkCommand } from './commands.js';
import { failedEvent, firstFrameRefusal, type Conn, type Inflight } from './frames.js';
import type { CompletedCallReport, ExecuteCallCommand, ExecutorLinkEvent } from './types.js';

export interface LinkCoreOptions {
  /** How long a new connection may take to present an authenticated Hello. */
  readonly helloTimeoutMs: number;
  /** Hold calls while no executor is ready (true), or fail them at once, retryably (false). */
  readonly queueWhileDown: boolean;
  /**
   * Report successes as `callsCompleted` events (default false: a CallCompleted frame is a
   * `callCompleted` event). Successes of one task that arrive back to back — CallCompleted frames or
   * CallsCompleted entries, with nothing else decided in between — then join one event.
   */
  readonly bulkResults?: boolean;
}

/** The `callsCompleted` event being built, while it is the last command out (see `emitSuccesses`). */
interface JoiningSuccesses {
  readonly event: {
    readonly type: 'callsCompleted';
    taskId: string;
    results: CompletedCallReport[];
    outputBytesEach: number;
  };
  /** The frames' bytes so far, shared out over the entries. */
  bytes: number;
  /** `results` is the event's own array (a frame's array passed through is copied before it grows). */
  owned: boolean;
}

export abstract class LinkState {
  protected readonly opts: LinkCoreOptions;
  protected readonly inflightCalls = new Map<string, Inflight>();
  protected queued: Inflight[] = [];
  protected readonly conns = new Map<ConnId, Conn>();
  protected current: Conn | undefined;
  protected expectedSecret: string | undefined;
  protected nextConnId = 1;
  protected closedLink = false;
  protected out: LinkCommand[] = [];
  private joining: JoiningSuccesses | undefined;
  /** Connections with a hello deadline (not yet authenticated nor refused): 0 almost always. */
  protected awaitingHello = 0;

  constructor(options: LinkCoreOptions) {
    this.opts = options;
  }

  /** The commands queued since the last call, in order. */
  takeCommands(): LinkCommand[] {
    const out = this.out;
    if (out.length > 0) this.out = [];
    this.joining = undefined;
    return out;
  }

  // ---- queries -----------------------------------------------------------------------------------------

  /** True between the executor's first heartbeat and its loss. */
  get ready(): boolean {
    return this.current?.ready === true;
  }
  /** Attempts accepted and not yet terminal (sent or queued). */
  get inflight(): number {
    return this.inflightCalls.size;
  }
  get queuedCount(): number {
    return this.queued.length;
  }
  get closed(): boolean {
    return this.closedLink;
  }
  get executorPid(): number | undefined {
    return this.current?.pid;
  }
  /** When the current executor last sent a heartbeat (the `now` of that input). */
  get lastHeartbeatAtMs(): number | undefined {
    return this.current?.lastHeartbeatAtMs;
  }
  /** Whether frames of this connection are still read. */
  isOpen(conn: ConnId): boolean {
    return this.conns.get(conn)?.closed === false;
  }
  isAuthenticated(conn: ConnId): boolean {
    return this.conns.get(conn)?.authenticated === true;
  }
  /** The earliest hello deadline of a pending connection (asked after every input: cheap when none). */
  nextDeadline(): number | undefined {
    if (this.awaitingHello === 0) return undefined;
    let next: number | undefined;
    for (const c of this.conns.values())
      if (c.helloDeadline !== undefined && (next === undefined || c.helloDeadline < next))
        next = c.helloDeadline;
    return next;
  }

  // ---- internals ---------------------------------------------------------------------------------------

  protected emit(event: ExecutorLinkEvent): void {
    this.out.push({ type: 'emit', event });
  }

  /**
   * Successes of `taskId` whose frames took `frameBytes`: they join the `callsCompleted` event of the
   * same task if that is still the last command out (not taken by the shell, nothing queued after it),
   * else open one. `results` may be kept as it is (never mutated: copied before it would grow).
   */
  protected emitSuccesses(taskId: string, results: readonly CompletedCallReport[], frameBytes: number): void {
    const out = this.out;
    const j = this.joining;
    const last = out.length > 0 ? out[out.length - 1] : undefined;
    if (j !== undefined && last?.type === 'emit' && last.event === j.event && j.event.taskId === taskId) {
      if (!j.owned) {
        j.event.results = j.event.results.slice();
        j.owned = true;
      }
      for (let i = 0; i < results.length; i++) j.event.results.push(results[i]!);
      j.bytes += frameBytes;
      j.event.outputBytesEach = Math.ceil(j.bytes / j.event.results.length);
      return;
    }
    const event = {
      type: 'callsCompleted' as const,
      taskId,
      results: results as CompletedCallReport[],
      outputBytesEach: Math.ceil(frameBytes / results.length),
    };
    this.joining = { event, bytes: frameBytes, owned: false };
    out.push({ type: 'emit', event });
  }

  /** The attempt, if it is in flight on this connection (late frames of a lost connection are dropped). */
  protected entryOn(conn: Conn, callId: string, attempt: number): Inflight | undefined {
    const entry = this.inflightCalls.get(attemptKey(callId, attempt));
    return entry?.conn === conn ? entry : undefined;
  }

  protected send(conn: Conn, entry: Inflight): void {
    const epoch = entry.command.codeEpoch;
    if (!conn.sentEpochs.has(epoch)) {
      conn.sentEpochs.add(epoch); // undone by epochNotDefined
      this.out.push({ type: 'defineEpoch', conn: conn.id, epoch });
    }
    entry.conn = conn;
    // Attempts sent back to back travel in one command (and the shell's frames join them by task).
    const out = this.out;
    const last = out.length > 0 ? out[out.length - 1]! : undefined;
    if (last?.type === 'sendExecutes' && last.conn === conn.id)
      (last.calls as ExecuteCallCommand[]).push(entry.command);
    else out.push({ type: 'sendExecutes', conn: conn.id, calls: [entry.command] });
  }

  /** A new connection waits for its Hello until `deadline`. */
  protected setHelloDeadline(conn: Conn, deadline: number): void {
    if (conn.helloDeadline === undefined) this.awaitingHello += 1;
    conn.helloDeadline = deadline;
  }

  protected clearHelloDeadline(conn: Conn): void {
    if (conn.helloDeadline === undefined) return;
    conn.helloDeadline = undefined;
    this.awaitingHello -= 1;
  }

  /**
   * The first frame of a connection decides whether it may speak for the executor: a Hello carrying the
   * current spawn secret. Anything else refuses it and leaves the live executor alone.
   */
  protected authenticate(conn: Conn, m: { readonly type: string; readonly secret?: unknown }): boolean {
    const why = firstFrameRefusal(m, this.expectedSecret);
    if (why !== undefined) {
      this.refuse(conn, why);
      return false;
    }
    this.expectedSecret = undefined; // one spawn, one connection
    this.clearHelloDeadline(conn);
    conn.authenticated = true;
    // One executor at a time: an authenticated newcomer is the replacement process of a lost one.
    if (this.current) this.lose(this.current, 'superseded by a new executor connection');
    this.current = conn;
    return true;
  }

  /** Close a connection that never authenticated: it was never the executor, nothing is lost. */
  protected refuse(conn: Conn, why: string | undefined): void {
    if (conn.closed) return;
    conn.closed = true;
    this.clearHelloDeadline(conn);
    this.conns.delete(conn.id);
    this.out.push(
      why === undefined
        ? { type: 'closeConnection', conn: conn.id }
        : { type: 'closeConnection', conn: conn.id, refusal: why },
    );
  }

  protected lose(conn: Conn, reason: string): void {
    if (conn.closed) return;
    conn.closed = true;
    this.conns.delete(conn.id);
    this.out.push({ type: 'closeConnection', conn: conn.id });
    if (this.current !== conn) return;
    this.current = undefined;
    const failed: Inflight[] = [];
    for (const [key, entry] of this.inflightCalls) {
      if (entry.conn === conn) {
        this.inflightCalls.delete(key);
        failed.push(entry);
      }
    }
    if (!conn.hello && failed.length === 0) return; // never introduced itself: nothing was lost
    this.emit({ type: 'executorLost', reason, pid: conn.pid, failedAttempts: failed.length });
    for (const entry of failed)
      this.emit(failedEvent(entry, 'executor_crash', true, `executor lost: ${reason}`));
  }
}
