// Stable error codes of BlockWriteResultHandler. Each key equals its code (the tests pin that).
// The error is blockx/plugin's PluginError (docs/plugins.md § Errors), named for this plugin.
import { PluginError } from 'blockx/plugin';

export const BlockWriteErrorCode = {
  /** A call output is not a row, an array of rows or null, or a row belongs to another block or chain. */
  BAD_OUTPUT: 'BAD_OUTPUT',
} as const;
export type BlockWriteErrorCode = (typeof BlockWriteErrorCode)[keyof typeof BlockWriteErrorCode];

/** Which call output (index into the outputs) and, for an array output, which row of it. */
export interface BlockWriteErrorDetails {
  readonly outputIndex: number;
  readonly rowIndex?: number;
}

/** The outputs of a rerun are the same outputs: resubmitting cannot help, so not retryable. */
export class BlockWriteError extends PluginError<BlockWriteErrorCode, BlockWriteErrorDetails> {
  constructor(code: BlockWriteErrorCode, message: string, details: BlockWriteErrorDetails) {
    super(code, message, { retryable: false, details });
  }
}
