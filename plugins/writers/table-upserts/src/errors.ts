// Stable error codes of TableUpsertsResultHandler. Each key equals its code (the tests pin that).
// Duck-typed like every plugin error: an Error with a boolean `retryable` and a string `code`.

export const TableUpsertsErrorCode = {
  /** An output is not an upsert, an array of upserts or null; or it names a table outside the allow-list. */
  BAD_OUTPUT: 'BAD_OUTPUT',
} as const;
export type TableUpsertsErrorCode = (typeof TableUpsertsErrorCode)[keyof typeof TableUpsertsErrorCode];

export class TableUpsertsError extends Error {
  /** The outputs of a rerun are the same outputs: resubmitting cannot help. */
  readonly retryable = false;
  constructor(
    readonly code: TableUpsertsErrorCode,
    message: string,
    /** Which call output (index into the outputs) and, for an array output, which upsert of it. */
    readonly details: {
      readonly outputIndex: number;
      readonly upsertIndex?: number;
      readonly table?: string;
    },
  ) {
    super(message);
    this.name = 'TableUpsertsError';
  }
}
