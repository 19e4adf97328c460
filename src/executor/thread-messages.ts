// Messages between the executor's main thread and its execution threads. Both directions travel as one
// batch per event-loop turn, laid out as parallel arrays of strings and numbers: structured clone copies
// those much faster than arrays of small objects, and this is the hot path of every call.
//
// Calls reach a thread as the raw ExecuteCall JSON the Worker sent (the thread parses it: that work runs
// in parallel instead of on the single routing thread), and leave it as ready-to-send protocol frames.

import type { WaitError } from './protocol.js';

/** Main → thread. Applied in this order: modules, execs, then controls. */
export interface MainToThreadBatch {
  readonly modules: ThreadModule[];
  /** Raw ExecuteCall frames, and the module each one runs. */
  readonly execRaw: string[];
  readonly execModule: string[];
  readonly controls: ThreadControl[];
}

/** A compiled module, announced once per thread before its first call. */
export interface ThreadModule {
  readonly moduleKey: string;
  readonly url: string;
  readonly code: string;
  readonly path: string;
}

export type ThreadControl =
  | { readonly t: 'cancel'; readonly callId: string; readonly attempt: number; readonly reason: string }
  | {
      readonly t: 'resume';
      readonly callId: string;
      readonly attempt: number;
      readonly requestId: number;
      readonly ok: boolean;
      readonly value?: unknown;
      readonly error?: WaitError;
    };

/** What happened to one attempt, in `ThreadToMainBatch.kinds`. */
export const ThreadEvent = {
  /** A CallWaiting frame. */
  Waiting: 1,
  /** A CallCompleted or CallFailed frame; the attempt is over on this thread. */
  Done: 2,
} as const;
export type ThreadEvent = (typeof ThreadEvent)[keyof typeof ThreadEvent];

/** Thread → main. `keys[i]` is the attempt key of `frames[i]`; order is preserved. */
export interface ThreadToMainBatch {
  /** Set once, when the thread has loaded its runtime and takes calls. */
  readonly ready: boolean;
  readonly kinds: ThreadEvent[];
  readonly keys: string[];
  readonly frames: string[];
  /** JSON log lines for the executor's stderr. */
  readonly logs: string[];
}

export interface ThreadData {
  readonly hooksUrl: string;
  readonly runnerUrl: string;
  readonly maxFrameBytes: number;
  readonly threadIndex: number;
}
