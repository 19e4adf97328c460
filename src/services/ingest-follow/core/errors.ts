// Stable codes of the ingest-follow core (docs/ingest.md § Following the head). Each key equals its value;
// test/unit/services/ingest-follow/core/ingest-follow-core.test.ts pins that.
import { BlockxError } from '../../../kernel/errors.js';

export const IngestFollowErrorCode = {
  /** A block the follower had stored as final differs from the node's: a reorg deeper than finality. */
  REORG_BEYOND_FINALITY: 'REORG_BEYOND_FINALITY',
  /** An input the core cannot accept (a bad option, an answer to nothing it asked). */
  INVALID_INPUT: 'INVALID_INPUT',
} as const;
export type IngestFollowErrorCode = (typeof IngestFollowErrorCode)[keyof typeof IngestFollowErrorCode];

/**
 * The node replaced a block at or below head − finality that the follower had stored. It never guesses
 * which side is right: it stops before writing anything, naming the height and both hashes.
 */
export class IngestReorgBeyondFinalityError extends BlockxError {
  constructor(
    readonly height: number,
    readonly storedHash: string,
    readonly nodeHash: string,
    readonly finality: number,
    readonly head: number,
  ) {
    super(
      IngestFollowErrorCode.REORG_BEYOND_FINALITY,
      `reorg deeper than finality (${finality} blocks): block ${height} is stored as ${storedHash}, ` +
        `final since the follower caught up with head ${head}, but the node now says ${nodeHash}; ` +
        `stopped without writing`,
    );
  }
}

/** Input the core refuses; it changes nothing. */
export class IngestFollowInputError extends BlockxError {
  constructor(
    message: string,
    readonly field: string,
  ) {
    super(IngestFollowErrorCode.INVALID_INPUT, message);
  }
}
