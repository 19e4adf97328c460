// The executor link's public shapes: the commands the dispatcher adapter issues and the events it gets
// back (defined with the link core, core/link/types.ts), and the socket shell's options. Re-exported by
// executor-link.ts.

import type { EpochSource } from '../../../executor/code-epochs.js';
import type { ExecutorLinkEvent, ResumeOutcome, WaitingRequest } from '../core/link/types.js';

export type * from '../core/link/types.js';

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
