// The dispatch state of one task's Calls phase. Root calls are an index-based queue over the call
// list (`nextRoot`), so 100,000 pending calls cost one array and one integer; nodes exist only for
// calls that were dispatched or requested as subcalls.

import type { CallNode } from './call-node.js';
import { CallQueue } from './call-queue.js';
import { LiveList } from './live-list.js';
import type { TimerEntry } from './timer-heap.js';
import type { CallSpec, RetrySummary } from './types.js';
import type { WindowState } from './window-policy.js';

export class TaskDispatch implements TimerEntry, WindowState {
  readonly timerKind = 'task' as const;
  heapIndex = -1;
  timerAt = 0;
  timerSeq = 0;

  /** Root calls handed over so far (appended to while streaming). */
  readonly calls: CallSpec[];
  /** Next root call to dispatch; calls[nextRoot..] are pending. */
  nextRoot = 0;
  /** No more calls will be appended. */
  appendingDone: boolean;
  /** Root outputs by call-list index; always as long as `calls`, so out-of-order writes never make it
   *  sparse (a far out-of-bounds write would turn it into a slow dictionary-mode array). */
  readonly outputs: unknown[] = [];
  rootsSucceeded = 0;
  /** The calls the builder handed over (a page counts its calls: README.md § Pages). */
  callRows = 0;
  /** Of those, the ones that succeeded. */
  rowsSucceeded = 0;
  outputBytes = 0;

  /** Calls holding an execution slot (dispatched or running). */
  inflight = 0;
  /** Calls parked on subcalls (suspended or waiting to resume). */
  parked = 0;
  /** IO waits reported by the task's running calls and not finished yet. */
  ioWaits = 0;
  window: number;
  threshold: number;
  growthCredit = 0;
  lastShrinkSeq = 0;
  /** Incremented per attempt sent. */
  dispatchSeq = 0;

  /** Children, retries and resumes: served before new root calls. */
  readonly urgent = new CallQueue<CallNode>();
  /** Every node of the task that has not ended, in creation order (parents before their children). */
  readonly live = new LiveList<CallNode>();

  /** Set by convergence; nothing is dispatched for the task after it. */
  converged = false;
  attempts = 0;
  retries = 0;
  /** Why its calls were retried; undefined while none was. */
  retried: RetrySummary | undefined;
  subcalls = 0;
  /** Subcalls created and not ended yet (the call budget's second bound). */
  pendingSubcalls = 0;

  constructor(
    readonly taskId: string,
    readonly deadlineMs: number,
    readonly streaming: boolean,
    calls: CallSpec[],
    window: WindowState,
  ) {
    this.calls = calls;
    this.reserveOutputs();
    this.appendingDone = !streaming;
    this.window = window.window;
    this.threshold = window.threshold;
  }

  /**
   * The position in the builder's call list of each entry's first call (README.md § Pages); undefined
   * while the task has no page, when an entry's position is its index.
   */
  positions: number[] | undefined;

  /** Appends calls (streaming) and their output slots; `firstPos`: the position of the first one's call. */
  append(calls: readonly CallSpec[], firstPos: number): void {
    const before = this.calls.length;
    for (const call of calls) this.calls.push(call);
    this.reserveOutputs();
    this.notePositions(before, firstPos);
  }

  /** The position of entry `index`'s first call in the builder's call list. */
  positionOf(index: number): number {
    return this.positions === undefined ? index : this.positions[index]!;
  }

  /**
   * Records the positions of the entries from `from` on (the first one's is `pos`), once a page makes
   * them differ from their indexes.
   */
  notePositions(from: number, pos: number): void {
    const calls = this.calls;
    if (this.positions === undefined) {
      let paged = false;
      for (let i = from; i < calls.length && !paged; i++) paged = calls[i]!.page !== undefined;
      if (!paged) return;
      this.positions = [];
      for (let i = 0; i < from; i++) this.positions.push(i);
    }
    for (let i = from; i < calls.length; i++) {
      this.positions.push(pos);
      pos += calls[i]!.page?.args.length ?? 1;
    }
  }

  private reserveOutputs(): void {
    const outputs = this.outputs;
    for (let i = outputs.length; i < this.calls.length; i++) outputs.push(undefined);
  }

  /** All root calls are known and have succeeded. */
  get complete(): boolean {
    return this.appendingDone && this.rootsSucceeded === this.calls.length;
  }
}
