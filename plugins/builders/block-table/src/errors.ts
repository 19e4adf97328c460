// Stable error codes of BlockTableCallConfig. Each key equals its code (the tests pin that).
// The error is blockx/plugin's PluginError (docs/plugins.md § Errors), named for this plugin.
import { PluginError } from 'blockx/plugin';

export const BlockTableErrorCode = {
  /** No block matches the selector (no canonical block at that height, or no block with that hash). */
  BLOCK_NOT_FOUND: 'BLOCK_NOT_FOUND',
  /** The blocks table holds two candidates for the selector (e.g. two canonical blocks at one height). */
  AMBIGUOUS_BLOCK: 'AMBIGUOUS_BLOCK',
} as const;
export type BlockTableErrorCode = (typeof BlockTableErrorCode)[keyof typeof BlockTableErrorCode];

export interface BlockTableErrorDetails {
  readonly blocksTable: string;
  readonly chainId: number;
  readonly block: { readonly number: number } | { readonly hash: string };
}

/** Both codes describe the data, which resubmitting the same task does not change: not retryable. */
export class BlockTableError extends PluginError<BlockTableErrorCode, BlockTableErrorDetails> {
  constructor(code: BlockTableErrorCode, message: string, details: BlockTableErrorDetails) {
    super(code, message, { retryable: false, details });
  }
}
