// Stable error codes of TableUpsertsResultHandler. Each key equals its code (the tests pin that).
// The error is blockx/plugin's PluginError (docs/plugins.md § Errors), named for this plugin.
import { PluginError } from 'blockx/plugin';

export const TableUpsertsErrorCode = {
  /** An output is not an upsert, an array of upserts or null; or it names a table outside the allow-list. */
  BAD_OUTPUT: 'BAD_OUTPUT',
} as const;
export type TableUpsertsErrorCode = (typeof TableUpsertsErrorCode)[keyof typeof TableUpsertsErrorCode];

/** Which call output (index into the outputs) and, for an array output, which upsert of it. */
export interface TableUpsertsErrorDetails {
  readonly outputIndex: number;
  readonly upsertIndex?: number;
  readonly table?: string;
}

/** The outputs of a rerun are the same outputs: resubmitting cannot help, so not retryable. */
export class TableUpsertsError extends PluginError<TableUpsertsErrorCode, TableUpsertsErrorDetails> {
  constructor(code: TableUpsertsErrorCode, message: string, details: TableUpsertsErrorDetails) {
    super(code, message, { retryable: false, details });
  }
}
