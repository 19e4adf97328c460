// Stable error codes of BlockTableCallConfig. Each key equals its code (the tests pin that).
// Plugins do not import kernel classes, so the error is duck-typed the way the kernel reads writer and
// builder failures: an Error with a boolean `retryable` and a string `code`.

export const BlockTableErrorCode = {
  /** No block matches the selector (no canonical block at that height, or no block with that hash). */
  BLOCK_NOT_FOUND: 'BLOCK_NOT_FOUND',
  /** The blocks table holds two candidates for the selector (e.g. two canonical blocks at one height). */
  AMBIGUOUS_BLOCK: 'AMBIGUOUS_BLOCK',
} as const;
export type BlockTableErrorCode = (typeof BlockTableErrorCode)[keyof typeof BlockTableErrorCode];

export class BlockTableError extends Error {
  /** Both codes describe the data, which resubmitting the same task does not change. */
  readonly retryable = false;
  constructor(
    readonly code: BlockTableErrorCode,
    message: string,
    readonly details: {
      readonly blocksTable: string;
      readonly chainId: number;
      readonly block: { readonly number: number } | { readonly hash: string };
    },
  ) {
    super(message);
    this.name = 'BlockTableError';
  }
}
