// Stable error codes of ChainIngestResultHandler. Each key equals its code (the tests pin that). Errors of
// the RPC access layer (src/services/chain-rpc/errors.ts) pass through with their own codes and `retryable`.
import { PluginError } from 'blockx/plugin';

export const ChainIngestErrorCode = {
  /** A field of the node's answer is missing or malformed (the message names its path). */
  BAD_BLOCK_DATA: 'BAD_BLOCK_DATA',
  /** Two answers about one block disagree (a receipt or trace of another block: a reorg in between). */
  INCONSISTENT_ANSWERS: 'INCONSISTENT_ANSWERS',
  /**
   * A follow write (docs/ingest.md § Following the head): the node's block has another parent than the
   * stored canonical block below it. The chain moved; nothing was written, and the follower walks back.
   */
  CHAIN_MOVED: 'CHAIN_MOVED',
} as const;
export type ChainIngestErrorCode = (typeof ChainIngestErrorCode)[keyof typeof ChainIngestErrorCode];

export class ChainIngestError extends PluginError<ChainIngestErrorCode, undefined> {
  constructor(code: ChainIngestErrorCode, message: string, options: { readonly retryable: boolean }) {
    super(code, message, { retryable: options.retryable });
  }
}
