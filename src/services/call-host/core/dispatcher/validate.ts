// Validation of call lists handed over by a builder: a malformed call is a programming error of the
// builder and is refused before any state changes.

import { DispatcherError, DispatcherErrorCode } from './errors.js';
import { isCallArgs } from '../../../../contracts/call-args.js';
import type { CallSpec } from './types.js';

/** Throws INVALID_CALL naming the first malformed call; `offset` is the index of `list[0]` in the task. */
export function validateCalls(taskId: string, list: readonly CallSpec[], offset: number): void {
  if (!Array.isArray(list)) {
    throw new DispatcherError(DispatcherErrorCode.INVALID_CALL, 'calls must be an array', { taskId });
  }
  for (let i = 0; i < list.length; i++) {
    const c = list[i];
    if (
      c === null ||
      typeof c !== 'object' ||
      typeof c.function !== 'string' ||
      c.function === '' ||
      !isCallArgs(c.args)
    ) {
      throw new DispatcherError(
        DispatcherErrorCode.INVALID_CALL,
        `call ${offset + i} must be {function: non-empty string, args: array or encoded arguments, block?}`,
        { taskId, callIndex: offset + i },
      );
    }
  }
}
