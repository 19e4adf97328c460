// The executor link's public shapes: the commands the dispatcher adapter issues, and the events it gets
// back. Shared by the link core (link-core.ts) and its socket shell (adapters/executor-link.ts), which
// re-exports them. docs/executor.md describes the protocol they travel over.

import type { CallArgs } from '../../../../contracts/call-args.js';
import type {
  CallBlock,
  CallFailureKind,
  CallPageInfo,
  HeartbeatMessage,
  WaitError,
  WaitRequest,
} from '../../../../executor/protocol.js';

export interface ExecuteCallCommand {
  readonly taskId: string;
  readonly callId: string;
  readonly attempt: number;
  readonly function: string;
  /** Values, or their JSON text (src/contracts/call-args.ts), written into the frame as it is. */
  readonly args: CallArgs;
  readonly block?: CallBlock | null;
  readonly codeEpoch: string;
  readonly budgetMs: number;
  /** Read-copy id of the task's Calls phase (ExecuteCall.ioCache); absent: no copies. */
  readonly ioCache?: string;
  /** The task's tenant (ExecuteCalls.tenant, tenantKey); sent only to an executor that announced Tenants. */
  readonly tenant?: string;
  /**
   * Set for a page of calls (docs/executor.md § Pages): `args` is the list of the calls' argument
   * arrays. Only an executor that announced Pages takes it; for any other the attempt is unsendable.
   */
  readonly page?: CallPageInfo;
}

/** One success of a CallsCompleted frame, as the executor reported it (docs/executor.md § Calls in bulk). */
export interface CompletedCallReport {
  readonly callId: string;
  readonly attempt: number;
  /** Absent reads as null. */
  readonly value?: unknown;
  readonly durationMs: number;
  /** Reads the executor answered from its read copies (counted as read-cache hits). */
  readonly ioHits?: number;
}

export interface AttemptFields {
  readonly taskId: string;
  readonly callId: string;
  readonly attempt: number;
}

export type ExecutorLinkEvent =
  | ({ readonly type: 'callStarted'; readonly elapsedMs: number } & AttemptFields)
  | ({
      readonly type: 'callCompleted';
      readonly value: unknown;
      readonly durationMs: number;
      /**
       * Bytes of the CallCompleted frame that carried the value (the value's JSON plus an envelope of
       * ~100 bytes), counted against maxCollectedOutputBytes; absent → the value is measured.
       */
      readonly outputBytes?: number;
      /** Reads the executor answered from its read copies (counted as read-cache hits). */
      readonly ioHits?: number;
    } & AttemptFields)
  | {
      /**
       * The terminal events of many attempts at once: each entry is the one terminal of its attempt
       * (entries of attempts not in flight on that connection are left out; never empty).
       */
      readonly type: 'callsCompleted';
      /** The task the frame named. */
      readonly taskId: string;
      readonly results: readonly CompletedCallReport[];
      /** The frame's bytes shared out over its entries: each one's stand-in for its value's size. */
      readonly outputBytesEach: number;
    }
  | ({
      readonly type: 'callFailed';
      readonly kind: CallFailureKind;
      readonly retryable: boolean;
      readonly message: string;
      readonly stack?: string;
      readonly code?: string;
      readonly ioHits?: number;
    } & AttemptFields)
  | ({
      readonly type: 'callWaiting';
      readonly requestId: number;
      readonly request: WaitRequest;
    } & AttemptFields)
  | {
      readonly type: 'executorReady';
      readonly pid: number;
      readonly executorVersion: string;
      readonly threads: number;
    }
  | {
      readonly type: 'executorLost';
      readonly reason: string;
      readonly pid: number | undefined;
      readonly failedAttempts: number;
    }
  | ({ readonly type: 'heartbeat' } & Omit<HeartbeatMessage, 'type'>);

export type ExecutorLinkEventType = ExecutorLinkEvent['type'];

/** A request from a running call, as handed to `onWaiting`. */
export interface WaitingRequest extends AttemptFields {
  readonly requestId: number;
  readonly request: WaitRequest;
}

/** The answer to a waiting request. `requestId` may be omitted: the attempt's oldest open request. */
export type ResumeOutcome =
  | { readonly requestId?: number; readonly ok: true; readonly value?: unknown }
  | { readonly requestId?: number; readonly ok: false; readonly error: WaitError };
