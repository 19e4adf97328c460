// Commands: the effects the core asks its driver (the orchestrator adapter) to perform. The core never
// performs IO itself; every input returns the commands it produced, in the order they must be applied.
// A command is a fact about a decision already taken in the core's state: by the time the driver sees
// `ConvergeTask`, the slot is already FREE and the result already retained.

import type { FailureCode } from './errors.js';
import type { AcceptedTaskInput } from './task-table.js';
import type { ActivePhase, CodeEpoch, PluginConfig, TaskResult, TerminalTaskState } from './types.js';

/** Resolve the current code epoch, pin a Function Code View snapshot, then create the task's IO scope.
 *  Answer with `handleTaskActivationPrepared` (epoch pinned) and, if creating the runtime fails later,
 *  `handleTaskActivationFailed`. */
export interface PrepareTaskActivation {
  readonly type: 'PrepareTaskActivation';
  readonly taskId: string;
  readonly slotId: string;
  readonly input: AcceptedTaskInput;
  readonly acceptedAtMs: number;
  /** Effective timeout (ms) and the absolute deadline it gives. */
  readonly timeoutMs: number;
  readonly deadlineMs: number;
  /** The submitter (docs/security.md § Roles): who may see the task in ListRecentTasks. */
  readonly client?: string;
}

/** Run the Call Builder selected by `functionCallConfig.type`; answer with
 *  `handleTaskPhaseFinished(taskId, 'Builder', outcome)`. */
export interface StartBuilderPhase {
  readonly type: 'StartBuilderPhase';
  readonly taskId: string;
  readonly codeEpoch: CodeEpoch;
  readonly functionCallConfig: PluginConfig;
  readonly deadlineMs: number;
}

/** Hand the call list to the dispatcher (an empty list takes no executor slot); answer with
 *  `handleTaskPhaseFinished(taskId, 'Calls', outcome)`. */
export interface StartCallPhase {
  readonly type: 'StartCallPhase';
  readonly taskId: string;
  readonly calls: readonly unknown[];
  readonly deadlineMs: number;
}

/** Run the Writer Plugin on the root-call outputs; with `resultHandler: null` pass straight through with
 *  empty plugin results. Answer with `handleTaskPhaseFinished(taskId, 'Plugin', outcome)`. */
export interface StartWriterPhase {
  readonly type: 'StartWriterPhase';
  readonly taskId: string;
  readonly resultHandler: PluginConfig | null;
  readonly outputs: readonly unknown[];
  readonly deadlineMs: number;
}

/** Cancel the task's calls in flight at the executor (CancelCall). Emitted right before the
 *  `ConvergeTask` of a task forced terminal (TIMED_OUT, WATCH_DISCONNECTED) during its Calls phase. */
export interface CancelTaskCalls {
  readonly type: 'CancelTaskCalls';
  readonly taskId: string;
  readonly reason: FailureCode;
}

/** The task reached a terminal state. Already done in the core: slot released (FREE), task removed
 *  from the active table, result retained until `retainedUntilMs`. The driver cancels the task's context
 *  (late phase results are then ignored), closes its IO scope and drops its runtime. */
export interface ConvergeTask {
  readonly type: 'ConvergeTask';
  readonly taskId: string;
  readonly slotId: string;
  readonly state: TerminalTaskState;
  readonly result: TaskResult;
  /** The phase the task was in when it converged. */
  readonly fromPhase: ActivePhase;
  readonly slotReleased: true;
  readonly retainedUntilMs: number;
}

/** Push the terminal update once to every WatchTasks stream of this task (`OnTaskTerminal`). Always
 *  follows its `ConvergeTask`. */
export interface NotifyTerminal {
  readonly type: 'NotifyTerminal';
  readonly taskId: string;
  readonly state: TerminalTaskState;
  readonly result: TaskResult;
}

/** An ALLOCATED slot whose lease expired without a submission went back to FREE. */
export interface SlotReclaimed {
  readonly type: 'SlotReclaimed';
  readonly slotId: string;
  readonly taskId: string;
}

/** Whether admissions are open (`ready && !draining`) changed: drive grpc.health.v1 SERVING /
 *  NOT_SERVING and the heartbeat from it. */
export interface ServingStatusChanged {
  readonly type: 'ServingStatusChanged';
  readonly serving: boolean;
  readonly ready: boolean;
  readonly draining: boolean;
}

/** Draining and no slot is in use any more: the process may exit. Emitted once. */
export interface Drained {
  readonly type: 'Drained';
}

export type WorkerCommand =
  | PrepareTaskActivation
  | StartBuilderPhase
  | StartCallPhase
  | StartWriterPhase
  | CancelTaskCalls
  | ConvergeTask
  | NotifyTerminal
  | SlotReclaimed
  | ServingStatusChanged
  | Drained;

export type WorkerCommandType = WorkerCommand['type'];
