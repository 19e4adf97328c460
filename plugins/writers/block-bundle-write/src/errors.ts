// Stable error codes of BlockBundleWriteResultHandler. Each key equals its code (the tests pin that).
// Duck-typed like every plugin error: an Error with a boolean `retryable` and a string `code`.

export const BlockBundleWriteErrorCode = {
  /** An output is not a row, an array of rows or null; or a row's block is missing or outside the bundle. */
  BAD_OUTPUT: 'BAD_OUTPUT',
} as const;
export type BlockBundleWriteErrorCode =
  (typeof BlockBundleWriteErrorCode)[keyof typeof BlockBundleWriteErrorCode];

export class BlockBundleWriteError extends Error {
  /** The outputs of a rerun are the same outputs: resubmitting cannot help. */
  readonly retryable = false;
  constructor(
    readonly code: BlockBundleWriteErrorCode,
    message: string,
    /** Which call output (index into the outputs) and, for an array output, which row of it. */
    readonly details: { readonly outputIndex: number; readonly rowIndex?: number },
  ) {
    super(message);
    this.name = 'BlockBundleWriteError';
  }
}
