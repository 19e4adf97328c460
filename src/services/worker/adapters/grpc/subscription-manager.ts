// WatchTasks subscriptions (docs/task-lifecycle.md § WatchTasks).
//
// A stream first gets one snapshot per requested id, in request order (duplicates collapse to the first):
//   - unknown id  → `is_terminal=true, error="not_found"`, so one bad id does not fail the batch;
//   - terminal    → its state and result;
//   - ALLOCATED / RUNNING → its state, and the id stays pending on the stream.
// Then exactly one terminal update per pending id, pushed when the core converges the task
// (NotifyTerminal); when no id is pending any more, the stream is ended by the server (status OK).
// An ALLOCATED id whose slot lease runs out without a submission is gone: its watchers get the same
// `not_found` terminal update a new stream would get.
//
// Each pending id of each stream counts as one attached watch in the core (`handleWatchAttached`), and
// is detached exactly once: when its terminal update is sent, or when the client goes away (gRPC
// `cancelled`), which starts the Watch-disconnect grace if that was the task's last watch.
//
// Snapshot and registration happen in one synchronous turn, so no terminal update can slip between them.
//
// A RunTasks stream (docs/batched-protocol.md § Worker) follows its tasks through `attach`: an open-ended
// subscription that ids join as they are admitted, WITHOUT a snapshot (the admission already told the
// client RUNNING), and that the manager never ends (the stream decides when it is done). Each attached
// id counts as an attached watch exactly as above, so when the stream goes away `close()` detaches what
// is still pending and the Watch-disconnect grace applies as for a closed WatchTasks stream. An id that
// turned terminal before it was attached gets its terminal update at once (not_found if it is gone).

import {
  TaskState,
  type TaskResult,
  type TaskSnapshot,
  type TaskState as TaskStateT,
  type TerminalTaskState,
} from '../../core/index.js';
import type { OrchestratorListener } from '../orchestration/orchestrator.js';

/** One update in domain form (the gRPC adapter converts it with `taskUpdateToWire`). */
export interface WatchUpdate {
  readonly taskId: string;
  /** UNSPECIFIED for `not_found`. */
  readonly state: TaskStateT;
  readonly isTerminal: boolean;
  readonly workerAddr: string;
  readonly timestampMs: number;
  readonly result?: TaskResult;
  /** `not_found` for an unknown id; empty otherwise. */
  readonly error: string;
}

/** Where a subscription's updates go: a WatchTasks server stream. */
export interface WatchSink {
  send(update: WatchUpdate): void;
  /** All ids are terminal: finish the stream with status OK. */
  end(): void;
}

/** What the manager needs from the orchestrator. */
export interface SubscriptionHost {
  /** `client`: only that client's task is found (docs/security.md § Roles); omitted: any. */
  taskSnapshot(taskId: string, client?: string): TaskSnapshot;
  watchAttached(taskId: string): void;
  watchDetached(taskId: string): void;
  now(): number;
}

export interface WatchHandle {
  /** The client went away (or the server is shutting down): detach whatever is still pending. */
  close(): void;
  /** Ids still waiting for their terminal update. */
  readonly pending: ReadonlySet<string>;
}

/** Where a RunTasks stream's terminal updates go. The manager never ends such a stream. */
export interface StreamWatchSink {
  send(update: WatchUpdate): void;
}

/** An open-ended subscription (a RunTasks stream): ids join it over time. */
export interface StreamWatch extends WatchHandle {
  /** Follows `taskIds` as well (no snapshot; ids already pending are skipped). */
  attach(taskIds: readonly string[]): void;
}

export const NOT_FOUND_ERROR = 'not_found';

class Subscription implements StreamWatch {
  readonly pending = new Set<string>();
  closed = false;
  constructor(
    readonly sink: WatchSink,
    private readonly manager: SubscriptionManager,
    /** A RunTasks stream: not ended by the manager when nothing is pending. */
    readonly openEnded = false,
    /** Whose stream: another client's ids read as not found (docs/security.md § Roles). */
    readonly client?: string,
  ) {}
  attach(taskIds: readonly string[]): void {
    this.manager.attachTo(this, taskIds);
  }
  close(): void {
    this.manager.release(this);
  }
}

export class SubscriptionManager implements OrchestratorListener {
  private readonly byTask = new Map<string, Set<Subscription>>();
  private readonly open = new Set<Subscription>();

  constructor(
    private readonly host: SubscriptionHost,
    /** The address put into every update (the worker's advertised address). */
    private readonly workerAddr: () => string,
  ) {}

  /** Open streams that still wait for at least one terminal update. */
  get openStreams(): number {
    return this.open.size;
  }

  /** Ids with at least one stream waiting for them. */
  get watchedTasks(): number {
    return this.byTask.size;
  }

  /** Follows `taskIds` for `client` (omitted: any client's tasks are found). */
  watch(taskIds: readonly string[], sink: WatchSink, client?: string): WatchHandle {
    const sub = new Subscription(sink, this, false, client);
    for (const taskId of new Set(taskIds)) {
      const snapshot = this.host.taskSnapshot(taskId, client);
      if (!snapshot.found) {
        this.send(sub, this.notFound(taskId));
        continue;
      }
      this.send(sub, this.update(taskId, snapshot.state, snapshot.terminal, snapshot.result));
      if (snapshot.terminal || sub.closed) continue;
      this.register(sub, taskId);
    }
    if (sub.pending.size === 0 && !sub.closed) this.finish(sub);
    return sub;
  }

  /**
   * Opens a RunTasks stream's subscription following `taskIds` (more join with `attach`). Nothing is
   * sent for an id still active; a terminal id gets its terminal update at once, a gone one not_found.
   */
  attach(taskIds: readonly string[], sink: StreamWatchSink, client?: string): StreamWatch {
    const sub = new Subscription({ send: (u) => sink.send(u), end: () => undefined }, this, true, client);
    this.attachTo(sub, taskIds);
    return sub;
  }

  /** `Subscription.attach`: registers ids on an open-ended subscription. */
  attachTo(sub: Subscription, taskIds: readonly string[]): void {
    for (const taskId of taskIds) {
      if (sub.closed) return;
      if (sub.pending.has(taskId)) continue;
      const snapshot = this.host.taskSnapshot(taskId, sub.client);
      if (!snapshot.found) this.send(sub, this.notFound(taskId));
      else if (snapshot.terminal) this.send(sub, this.update(taskId, snapshot.state, true, snapshot.result));
      else this.register(sub, taskId);
    }
  }

  onTerminal(taskId: string, state: TerminalTaskState, result: TaskResult): void {
    this.deliver(taskId, () => this.update(taskId, state, true, result));
  }

  onSlotReclaimed(taskId: string): void {
    this.deliver(taskId, () => this.notFound(taskId));
  }

  /** Detaches a subscription's pending ids (the client is gone). Idempotent. */
  release(sub: Subscription): void {
    if (sub.closed) return;
    sub.closed = true;
    this.open.delete(sub);
    for (const taskId of sub.pending) {
      this.forget(taskId, sub);
      this.host.watchDetached(taskId);
    }
    sub.pending.clear();
  }

  private deliver(taskId: string, makeUpdate: () => WatchUpdate): void {
    const subs = this.byTask.get(taskId);
    if (subs === undefined) return;
    this.byTask.delete(taskId);
    const update = makeUpdate();
    for (const sub of subs) {
      if (sub.closed || !sub.pending.delete(taskId)) continue;
      this.send(sub, update);
      this.host.watchDetached(taskId);
      if (sub.pending.size === 0 && !sub.closed) this.finish(sub);
    }
  }

  private register(sub: Subscription, taskId: string): void {
    sub.pending.add(taskId);
    this.open.add(sub);
    let subs = this.byTask.get(taskId);
    if (subs === undefined) this.byTask.set(taskId, (subs = new Set()));
    subs.add(sub);
    this.host.watchAttached(taskId);
  }

  private forget(taskId: string, sub: Subscription): void {
    const subs = this.byTask.get(taskId);
    if (subs === undefined) return;
    subs.delete(sub);
    if (subs.size === 0) this.byTask.delete(taskId);
  }

  /** Sends one update; a sink that throws (stream already gone) closes the subscription. */
  private send(sub: Subscription, update: WatchUpdate): void {
    if (sub.closed) return;
    try {
      sub.sink.send(update);
    } catch {
      this.release(sub);
    }
  }

  private finish(sub: Subscription): void {
    if (sub.openEnded) {
      // Nothing pending right now; the stream may still attach more ids.
      this.open.delete(sub);
      return;
    }
    sub.closed = true;
    this.open.delete(sub);
    try {
      sub.sink.end();
    } catch {
      // the stream is already gone; nothing to finish
    }
  }

  private update(
    taskId: string,
    state: TaskStateT,
    isTerminal: boolean,
    result: TaskResult | undefined,
  ): WatchUpdate {
    const base = {
      taskId,
      state,
      isTerminal,
      workerAddr: this.workerAddr(),
      timestampMs: this.host.now(),
      error: '',
    };
    return result === undefined ? base : { ...base, result };
  }

  private notFound(taskId: string): WatchUpdate {
    return {
      taskId,
      state: TaskState.UNSPECIFIED,
      isTerminal: true,
      workerAddr: this.workerAddr(),
      timestampMs: this.host.now(),
      error: NOT_FOUND_ERROR,
    };
  }
}
