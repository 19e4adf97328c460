// Stable error codes of BlockBundleCallConfig. Each key equals its code (the tests pin that).
// The error is blockx/plugin's PluginError (docs/plugins.md § Errors), named for this plugin.
import { PluginError } from 'blockx/plugin';

export const BlockBundleErrorCode = {
  /** build() was called on a config with stream.enabled: the orchestrator must call stream() instead. */
  STREAM_ENABLED: 'STREAM_ENABLED',
  /** The blocks table holds two canonical blocks at one height of the bundle. */
  AMBIGUOUS_BLOCK: 'AMBIGUOUS_BLOCK',
} as const;
export type BlockBundleErrorCode = (typeof BlockBundleErrorCode)[keyof typeof BlockBundleErrorCode];

export interface BlockBundleErrorDetails {
  readonly chainId: number;
  readonly bundle: number;
  readonly blockNumber?: number;
}

/** Both codes describe the task config or the data, which resubmitting does not change: not retryable. */
export class BlockBundleError extends PluginError<BlockBundleErrorCode, BlockBundleErrorDetails> {
  constructor(code: BlockBundleErrorCode, message: string, details: BlockBundleErrorDetails) {
    super(code, message, { retryable: false, details });
  }
}
