// Stable error codes of the app layer (process assembly and teardown).
// Each key equals its code; test/unit/app/errors.test.ts pins that, so a code never drifts.
import { BlockxError } from '../kernel/errors.js';

export const AppErrorCode = {
  TEARDOWN_FAILED: 'TEARDOWN_FAILED',
} as const;
export type AppErrorCode = (typeof AppErrorCode)[keyof typeof AppErrorCode];

/** One teardown step that threw or rejected. */
export interface TeardownFailure {
  /** The name the step was registered under, e.g. `worker`, `storage`, `metrics server`. */
  readonly step: string;
  readonly error: unknown;
}

/** Some steps of a TeardownStack failed; every other step still ran. `failures` in the order they ran. */
export class TeardownError extends BlockxError {
  declare readonly code: 'TEARDOWN_FAILED';
  readonly failures: readonly TeardownFailure[];
  constructor(failures: readonly TeardownFailure[]) {
    const steps = failures.map((f) => f.step).join(', ');
    super(
      AppErrorCode.TEARDOWN_FAILED,
      `teardown failed in ${failures.length} step(s): ${steps}`,
      failures.length === 1 ? { cause: failures[0]?.error } : {},
    );
    this.failures = failures;
  }
}
