// Stable codes of the dispatcher core. These are programming errors of its driver (illegal input), not
// call failures: a failing call never throws, it converges its task. Each key equals its value;
// test/unit/services/call-host/core/dispatcher/errors.test.ts pins that.

import { BlockxError } from '../../../../kernel/errors.js';

export const DispatcherErrorCode = {
  /** `startCallPhase` for a task whose Calls phase is already running. */
  TASK_ALREADY_DISPATCHING: 'TASK_ALREADY_DISPATCHING',
  /** `appendCalls` / `finishAppending` on a task that is not streaming, or after `finishAppending`. */
  NOT_APPENDING: 'NOT_APPENDING',
  /** A call spec or option is malformed (function not a string, args not an array, bad deadline). */
  INVALID_CALL: 'INVALID_CALL',
  /** The dispatcher config is invalid. */
  INVALID_CONFIG: 'INVALID_CONFIG',
} as const;
export type DispatcherErrorCode = (typeof DispatcherErrorCode)[keyof typeof DispatcherErrorCode];

export class DispatcherError extends BlockxError {
  declare readonly code: DispatcherErrorCode;
  /** The task the input was about, when there was one. */
  readonly taskId: string | undefined;
  /** Index of the offending call in the list handed over, for INVALID_CALL. */
  readonly callIndex: number | undefined;
  constructor(
    code: DispatcherErrorCode,
    message: string,
    fields: { taskId?: string; callIndex?: number } = {},
  ) {
    super(code, `${code}: ${message}`);
    this.taskId = fields.taskId;
    this.callIndex = fields.callIndex;
  }
}

/** One problem of a `DispatcherConfig`; `path` is the config key (dotted for `callRetry.*`). */
export interface DispatcherConfigIssue {
  readonly path: string;
  readonly message: string;
}

export class DispatcherConfigError extends DispatcherError {
  readonly issues: readonly DispatcherConfigIssue[];
  constructor(issues: readonly DispatcherConfigIssue[]) {
    super(
      DispatcherErrorCode.INVALID_CONFIG,
      `invalid dispatcher config: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`,
    );
    this.issues = issues;
  }
}
