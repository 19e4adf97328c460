// The executor link's public shapes: the commands the dispatcher adapter issues, the events it gets
// back, and the link's options. Re-exported by executor-link.ts.

import type { EpochSource } from '../../../executor/code-epochs.js';
import type {
  CallBlock,
  CallFailureKind,
  HeartbeatMessage,
  WaitError,
  WaitRequest,
} from '../../../executor/protocol.js';

export interface ExecuteCallCommand {
  readonly taskId: string;
  readonly callId: string;
  readonly attempt: number;
  readonly function: string;
  readonly args: readonly unknown[];
  readonly block?: CallBlock | null;
  readonly codeEpoch: string;
  readonly budgetMs: number;
  /** Read-copy id of the task's Calls phase (ExecuteCall.ioCache); absent: no copies. */
  readonly ioCache?: string;
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

export interface ExecutorLinkOptions {
  /**
   * Where to listen, in a directory the caller made private. Either this or `socketDir`; production
   * (executor-ports.ts) uses `socketDir`.
   */
  readonly socketPath?: string;
  /**
   * Listen in a fresh 0700 directory made under this one (`<socketDir>/bx-XXXXXX/executor.sock`),
   * removed again on close (docs/security.md, "The executor socket").
   */
  readonly socketDir?: string;
  /** How long a new connection may take to present an authenticated Hello. Default 5000 ms. */
  readonly helloTimeoutMs?: number;
  readonly onEvent: (event: ExecutorLinkEvent) => void;
  /** Serve a request (IO reads); return undefined to leave it to whoever handles `callWaiting` events. */
  readonly onWaiting?: (request: WaitingRequest) => Promise<ResumeOutcome> | undefined;
  /** Sources for DefineEpoch / retirements for RetireEpoch (the Worker's FunctionCodeView). */
  readonly epochs?: EpochSource;
  readonly maxFrameBytes?: number;
  /** Hold calls while no executor is ready (default true); false fails them at once, retryably. */
  readonly queueWhileDown?: boolean;
  readonly log?: (level: 'info' | 'warn' | 'error', message: string) => void;
}
