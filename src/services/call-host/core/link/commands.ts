// What the link core asks its shell to do (link-core.ts). The shell drains them after every input, in
// order, and carries each out; a command that turns out impossible (a frame too large) is reported back
// as an input (`epochNotDefined`, `executeUnsendable`).

import type {
  CancelCallMessage,
  DropIoCacheMessage,
  RetireEpochMessage,
  ShutdownMessage,
} from '../../../../executor/protocol.js';
import type { ExecuteCallCommand, ExecutorLinkEvent, ResumeOutcome, WaitingRequest } from './types.js';

/** A connection to the executor socket, numbered by the core in the order they were opened. */
export type ConnId = number;

export type LinkCommand =
  /** Hand the event to `onEvent` now. */
  | { readonly type: 'emit'; readonly event: ExecutorLinkEvent }
  /** Hand the event to `onEvent` on a microtask: a failure the link decided inside a command. */
  | { readonly type: 'emitLater'; readonly event: ExecutorLinkEvent }
  /**
   * Write these attempts, in order (the shell joins those of one task in ExecuteCalls frames); one that
   * cannot be encoded is reported with `executeUnsendable`. Attempts sent back to back share a command.
   */
  | { readonly type: 'sendExecutes'; readonly conn: ConnId; readonly calls: readonly ExecuteCallCommand[] }
  /** Write DefineEpoch with the code view's sources; if there are none or too many, `epochNotDefined`. */
  | { readonly type: 'defineEpoch'; readonly conn: ConnId; readonly epoch: string }
  /** Write a small control frame; `flush`: at once, not at the end of the turn. */
  | {
      readonly type: 'send';
      readonly conn: ConnId;
      readonly frame: CancelCallMessage | DropIoCacheMessage | RetireEpochMessage | ShutdownMessage;
      readonly flush: boolean;
    }
  /** Write ResumeCall; an answer that cannot be encoded travels as an error answer instead. */
  | {
      readonly type: 'sendResume';
      readonly conn: ConnId;
      readonly callId: string;
      readonly attempt: number;
      readonly requestId: number;
      readonly outcome: ResumeOutcome;
    }
  /** Offer the request to the `onWaiting` port; a promise it returns is answered with `resumeCall`. */
  | { readonly type: 'serveWaiting'; readonly request: WaitingRequest }
  /** Continue with `flushQueued(conn)`: after `executorReady` reached its handler, as it always did. */
  | { readonly type: 'flushQueued'; readonly conn: ConnId }
  /**
   * Close the socket. `refusal`: it never authenticated, log this (rate-limited; the secret is never in
   * it); absent: nothing to log.
   */
  | { readonly type: 'closeConnection'; readonly conn: ConnId; readonly refusal?: string }
  | { readonly type: 'log'; readonly level: 'info' | 'warn' | 'error'; readonly message: string };

export type LinkCommandType = LinkCommand['type'];
