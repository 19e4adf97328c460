// Pages (README.md § Pages): consecutive root calls of one function whose arguments a builder handed
// over encoded (rows of a JSON scan) travel as one attempt, so the per-attempt work of the Worker and the
// Executor (a node, a frame entry, a thread claim, a terminal event) is paid once per page instead of once
// per row. What each call is promised does not change:
//
//   - a page that succeeds gives each of its calls its own output, in call-list order;
//   - a page that fails in any way (a row threw, the page used up its budget, the executor was lost, the
//     executor cannot take pages) is split: each of its calls becomes a root of its own, queued first,
//     with its own attempts, budget and retries from attempt 1, exactly as if it had never been paged. The
//     page attempt is not counted as an attempt of its calls (a call may run once more than its
//     attempts say: once in the page, then on its own — the same at-least-once any retry has).
//
// Pure: no IO, no clock.

import { encodedSizeOf, isEncodedArgs, type CallArgs } from '../../../../contracts/call-args.js';
import { CallNode } from './call-node.js';
import { forgetNode, type DispatcherState } from './dispatch-state.js';
import { pump } from './pump.js';
import type { TaskDispatch } from './task-dispatch.js';
import type { CallSpec } from './types.js';

/**
 * A page also closes at this much argument text (UTF-16 units of the calls' encoded literals), so a
 * page of wide rows stays far below the executor's frame limit (executor.maxFrameBytes, 64 MiB by
 * default): 1 MiB.
 */
export const PAGE_MAX_ARG_CHARS = 1 << 20;

/** The outputs of a page's calls, kept in the one output slot of the page until the phase converges. */
export class PageOutputs {
  constructor(readonly values: unknown[]) {}
}

/** Where a call of a split page writes its output. */
export class PageSlot {
  left: number;
  readonly values: unknown[];
  constructor(
    /** The page's position in the task's (paged) call list. */
    readonly index: number,
    /** The position of the page's first call in the call list as the builder handed it over. */
    readonly first: number,
    rows: number,
  ) {
    this.left = rows;
    this.values = new Array<unknown>(rows).fill(null);
  }
}

/**
 * `list` with its runs of consecutive pageable calls (same function, encoded arguments) of two or more
 * made pages of at most `maxRows` calls and PAGE_MAX_ARG_CHARS of argument text. `first` is the position
 * of `list[0]` among the calls the builder handed over. Returns `list` itself when nothing is paged
 * (`maxRows` ≤ 1, or no two neighbours qualify).
 */
export function packPages(list: readonly CallSpec[], maxRows: number, first: number): readonly CallSpec[] {
  if (maxRows <= 1 || list.length < 2) return list;
  let out: CallSpec[] | undefined;
  let i = 0;
  while (i < list.length) {
    const c = list[i]!;
    let end = i + 1;
    if (isEncodedArgs(c.args)) {
      let chars = encodedSizeOf(c.args);
      while (end < list.length && end - i < maxRows) {
        const next = list[end]!;
        if (next.function !== c.function || !isEncodedArgs(next.args)) break;
        chars += encodedSizeOf(next.args);
        if (chars > PAGE_MAX_ARG_CHARS) break;
        end += 1;
      }
    }
    if (end - i >= 2) {
      out ??= list.slice(0, i);
      const args: CallArgs[] = new Array<CallArgs>(end - i);
      const blocks: unknown[] = new Array<unknown>(end - i);
      for (let j = i; j < end; j++) {
        args[j - i] = list[j]!.args;
        blocks[j - i] = list[j]!.block;
      }
      out.push({ function: c.function, args: [], page: { first: first + i, args, blocks } });
    } else {
      out?.push(c);
    }
    i = end;
  }
  return out ?? list;
}

/** The call id of a page: its first and last call's positions (`T/0-255`), never a call's own id. */
export function pageCallId(taskId: string, first: number, rows: number): string {
  return `${taskId}/${first}-${first + rows - 1}`;
}

/** The outputs of a converged task, pages spread back into their calls' outputs (call-list order). */
export function flattenOutputs(outputs: readonly unknown[]): readonly unknown[] {
  let paged = false;
  for (let i = 0; i < outputs.length; i++)
    if (outputs[i] instanceof PageOutputs) {
      paged = true;
      break;
    }
  if (!paged) return outputs;
  const flat: unknown[] = [];
  for (let i = 0; i < outputs.length; i++) {
    const o = outputs[i];
    if (o instanceof PageOutputs) for (const v of o.values) flat.push(v);
    else flat.push(o);
  }
  return flat;
}

/**
 * The page `node` failed, or answered only its first calls' values (`done`, a partial page: the executor
 * stopped starting calls at half its budget); its attempt is already off the executor. Each call without
 * a value becomes a root of its own, queued before new work, writing its output into the page's slot.
 */
export function splitPage(
  s: DispatcherState,
  node: CallNode,
  now: number,
  done: readonly unknown[] = [],
): void {
  const task = node.task;
  const page = node.page!;
  forgetNode(s, node);
  s.counters.pagesSplit += 1;
  const rows = page.args.length;
  const slot = new PageSlot(node.index, page.first, rows);
  for (let j = 0; j < done.length; j++) slot.values[j] = done[j] === undefined ? null : done[j];
  slot.left = rows - done.length;
  s.counters.callsSucceeded += done.length;
  task.rowsSucceeded += done.length;
  for (let j = done.length; j < rows; j++) {
    const row = new CallNode(
      task,
      `${task.taskId}/${page.first + j}`,
      node.index,
      undefined,
      undefined,
      0,
      node.fn,
      page.args[j]!,
      page.blocks[j],
    );
    row.pageSlot = slot;
    row.pageRow = j;
    task.live.add(row);
    s.calls.set(row.callId, row);
    task.urgent.push(row);
  }
  pump(s, task, now);
}

/**
 * A call of a split page succeeded: its output goes into the page's slot; the last one completes the
 * page's root. Returns whether the page's root is now complete.
 */
export function pageRowCompleted(task: TaskDispatch, node: CallNode, value: unknown): boolean {
  const slot = node.pageSlot!;
  slot.values[node.pageRow] = value;
  slot.left -= 1;
  if (slot.left > 0) return false;
  task.outputs[slot.index] = new PageOutputs(slot.values);
  return true;
}
