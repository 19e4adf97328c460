// Stable error codes of BlockBundleCallConfig. Each key equals its code (the tests pin that).
// Duck-typed like every plugin error: an Error with a boolean `retryable` and a string `code`.

export const BlockBundleErrorCode = {
  /** build() was called on a config with stream.enabled: the orchestrator must call stream() instead. */
  STREAM_ENABLED: 'STREAM_ENABLED',
  /** The blocks table holds two canonical blocks at one height of the bundle. */
  AMBIGUOUS_BLOCK: 'AMBIGUOUS_BLOCK',
} as const;
export type BlockBundleErrorCode = (typeof BlockBundleErrorCode)[keyof typeof BlockBundleErrorCode];

export class BlockBundleError extends Error {
  /** Both codes describe the task config or the data, which resubmitting does not change. */
  readonly retryable = false;
  constructor(
    readonly code: BlockBundleErrorCode,
    message: string,
    readonly details: { readonly chainId: number; readonly bundle: number; readonly blockNumber?: number },
  ) {
    super(message);
    this.name = 'BlockBundleError';
  }
}
