// The rows of `functions.retry.<name>`: how calls of one function are retried, where it differs from the
// deployment's `worker.callRetry` (docs/retries.md § Call level). No defaults: a field left out takes the
// worker's value, so the rows say what may be set, not what is assumed.
import type { ConfigField, ConfigGroup } from './field.js';

/** The failure kinds of a call attempt (the dispatcher's CallFailureKind; docs/retries.md § Call level). */
export const CALL_FAILURE_KINDS = ['executor_crash', 'deadline', 'io', 'user'] as const;

const f = (row: Omit<ConfigField, 'section'>): ConfigField => ({ section: 'functionRetry', ...row });

export const FUNCTION_RETRY_GROUPS: readonly ConfigGroup[] = [
  {
    section: 'functionRetry',
    path: '',
    description:
      "How calls of the function named <name> are retried (docs/retries.md § Call level); a field left out takes the deployment's worker.callRetry.",
    typeName: 'FunctionRetryConfig',
  },
];

export const FUNCTION_RETRY_FIELDS: readonly ConfigField[] = [
  f({
    path: 'maxAttempts',
    type: { t: 'int', min: 1, max: 100 },
    defaultText: "the deployment's worker.callRetry.maxAttempts",
    description: 'Attempts of one call of this function, including the first.',
  }),
  f({
    path: 'retryOn',
    type: { t: 'list', item: 'string', values: CALL_FAILURE_KINDS, uniqueItems: true },
    defaultText: "the deployment's worker.callRetry.retryOn",
    description:
      'The failure kinds after which a call of this function runs again; `io` and `user` only when the error says it is retryable.',
  }),
];
