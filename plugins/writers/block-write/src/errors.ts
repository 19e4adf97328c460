// Stable error codes of BlockWriteResultHandler. Each key equals its code (the tests pin that).
// Duck-typed like every plugin error: an Error with a boolean `retryable` and a string `code`.

export const BlockWriteErrorCode = {
  /** A call output is not a row, an array of rows or null, or a row belongs to another block or chain. */
  BAD_OUTPUT: 'BAD_OUTPUT',
} as const;
export type BlockWriteErrorCode = (typeof BlockWriteErrorCode)[keyof typeof BlockWriteErrorCode];

export class BlockWriteError extends Error {
  /** The outputs of a rerun are the same outputs: resubmitting cannot help. */
  readonly retryable = false;
  constructor(
    readonly code: BlockWriteErrorCode,
    message: string,
    /** Which call output (index into the outputs) and, for an array output, which row of it. */
    readonly details: { readonly outputIndex: number; readonly rowIndex?: number },
  ) {
    super(message);
    this.name = 'BlockWriteError';
  }
}
