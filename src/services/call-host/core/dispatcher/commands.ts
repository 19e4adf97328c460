// Commands: the effects the dispatcher asks the executor link and the orchestrator to perform. Every
// input returns the commands it produced, in the order they must be applied. A command is a decision
// already reflected in the core's state: when `CancelCall` leaves, the attempt is already forgotten.

import type { CallArgs } from '../../../../contracts/call-args.js';
import type {
  CallPhaseCounters,
  CallPage,
  CallPhaseFailureCode,
  CancelReason,
  FailedCall,
  RetrySummary,
  SubcallError,
  WaitId,
} from './types.js';

/** One attempt of a call, as an `ExecuteCalls` command carries it. */
export interface ExecuteAttempt {
  /** Stable for the call across attempts: `${taskId}/${index}` for a root, `${parentCallId}.${n}` for a child. */
  readonly callId: string;
  /** 1-based; events for any other attempt of the call are ignored. */
  readonly attempt: number;
  readonly function: string;
  readonly args: CallArgs;
  readonly block: unknown;
  /** Undefined for a root call. */
  readonly parentCallId: string | undefined;
  /** 0 for a root call, parent depth + 1 for a child. */
  readonly depth: number;
  /** Set for a page of calls (README.md § Pages): `args` and `block` are unused, the page has its rows'. */
  readonly page: CallPage | undefined;
}

/**
 * Send attempts of one task's calls to the executor, in order (README.md § Calls in bulk). One command
 * per task per pump: the attempts an input dispatches for a task back to back share it, and a command
 * about anything else in between starts a new one (so a CancelCall never precedes the attempt it names).
 */
export interface ExecuteCalls {
  readonly type: 'ExecuteCalls';
  readonly taskId: string;
  /** Execution budget of each attempt (CPU + IO, from `callStarted`), capped by the task deadline. */
  readonly budgetMs: number;
  /** Never empty. */
  readonly attempts: readonly ExecuteAttempt[];
}

/** Abort an attempt at the executor (`ctx.signal`). The dispatcher has already written it off. */
export interface CancelCall {
  readonly type: 'CancelCall';
  readonly taskId: string;
  readonly callId: string;
  readonly attempt: number;
  readonly reason: CancelReason;
}

interface ResumeCallBase {
  readonly type: 'ResumeCall';
  readonly taskId: string;
  /** The parent being resumed, and its current attempt. */
  readonly callId: string;
  readonly attempt: number;
  /** The `waitId` of the subcall request this answers (undefined if the request had none). */
  readonly waitId: WaitId | undefined;
  readonly childCallId: string;
  /** The parent's remaining budget; its clock runs again from this command on. */
  readonly budgetMs: number;
}

/** Answer a parent's subcall with the child's value or terminal error. */
export type ResumeCall =
  | (ResumeCallBase & { readonly ok: true; readonly value: unknown })
  | (ResumeCallBase & { readonly ok: false; readonly error: SubcallError });

/** The task's Calls phase ended; feed it to WorkerCore as the Calls `PhaseOutcome`. Always the last
 *  command about the task; nothing about it follows. */
export interface ConvergeTaskCalls {
  readonly type: 'ConvergeTaskCalls';
  readonly taskId: string;
  readonly success: boolean;
  /** Undefined on success. */
  readonly failureCode: CallPhaseFailureCode | undefined;
  readonly retryable: boolean;
  /** Undefined on success. */
  readonly message: string | undefined;
  /** Root-call return values in call-list order on success; empty on failure (discarded). */
  readonly outputs: readonly unknown[];
  /** Set for CALL_FAILED. */
  readonly failedCall: FailedCall | undefined;
  readonly counters: CallPhaseCounters;
  /** Why calls of the task ran again; undefined when none did (the Worker logs it once). */
  readonly retried: RetrySummary | undefined;
}

export type DispatcherCommand = ExecuteCalls | CancelCall | ResumeCall | ConvergeTaskCalls;
