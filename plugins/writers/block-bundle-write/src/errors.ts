// Stable error codes of BlockBundleWriteResultHandler. Each key equals its code (the tests pin that).
// The error is blockx/plugin's PluginError (docs/plugins.md § Errors), named for this plugin.
import { PluginError } from 'blockx/plugin';

export const BlockBundleWriteErrorCode = {
  /** An output is not a row, an array of rows or null; or a row's block is missing or outside the bundle. */
  BAD_OUTPUT: 'BAD_OUTPUT',
} as const;
export type BlockBundleWriteErrorCode =
  (typeof BlockBundleWriteErrorCode)[keyof typeof BlockBundleWriteErrorCode];

/** Which call output (index into the outputs) and, for an array output, which row of it. */
export interface BlockBundleWriteErrorDetails {
  readonly outputIndex: number;
  readonly rowIndex?: number;
}

/** The outputs of a rerun are the same outputs: resubmitting cannot help, so not retryable. */
export class BlockBundleWriteError extends PluginError<
  BlockBundleWriteErrorCode,
  BlockBundleWriteErrorDetails
> {
  constructor(code: BlockBundleWriteErrorCode, message: string, details: BlockBundleWriteErrorDetails) {
    super(code, message, { retryable: false, details });
  }
}
