// Every input of the dispatcher as one discriminated union, for drivers that queue inputs as values
// (`DispatcherCore.apply`) and for property tests. Each variant mirrors a method of `DispatcherCore`.

import type {
  CallFailure,
  CallPhaseOptions,
  CallSpec,
  CompletedAttempt,
  TaskCancelReason,
  WaitRequest,
} from './types.js';

export type DispatcherInput =
  | {
      readonly type: 'startCallPhase';
      readonly taskId: string;
      readonly calls: readonly CallSpec[];
      readonly opts: CallPhaseOptions;
      readonly now: number;
    }
  | {
      readonly type: 'appendCalls';
      readonly taskId: string;
      readonly calls: readonly CallSpec[];
      readonly now: number;
    }
  | { readonly type: 'finishAppending'; readonly taskId: string; readonly now: number }
  | { readonly type: 'callStarted'; readonly callId: string; readonly attempt: number; readonly now: number }
  | {
      readonly type: 'callCompleted';
      readonly callId: string;
      readonly attempt: number;
      readonly value: unknown;
      readonly outputBytes: number;
      readonly now: number;
    }
  | {
      readonly type: 'callsCompleted';
      readonly results: readonly CompletedAttempt[];
      readonly outputBytesEach: number;
      readonly now: number;
    }
  | {
      readonly type: 'callFailed';
      readonly callId: string;
      readonly attempt: number;
      readonly failure: CallFailure;
      readonly now: number;
    }
  | {
      readonly type: 'callWaiting';
      readonly callId: string;
      readonly attempt: number;
      readonly wait: WaitRequest;
      readonly now: number;
    }
  | { readonly type: 'ioFinished'; readonly callId: string; readonly attempt: number; readonly now: number }
  | {
      readonly type: 'cancelTask';
      readonly taskId: string;
      readonly reason: TaskCancelReason;
      readonly now: number;
    }
  | { readonly type: 'executorReady'; readonly now: number }
  | { readonly type: 'executorLost'; readonly now: number }
  | { readonly type: 'tick'; readonly now: number };
