// Stable codes of the follow core (docs/follow.md § When the follower stops). Each key equals its value;
// test/unit/services/follow/core/follow-core.test.ts pins that.
import { BlockxError } from '../../../kernel/errors.js';

export const FollowErrorCode = {
  /** A block the follower had seen final changed: a reorg deeper than the finality depth. */
  REORG_BEYOND_FINALITY: 'REORG_BEYOND_FINALITY',
  /** An input the core cannot accept (a bad option, a read it did not ask for, an unknown run). */
  INVALID_INPUT: 'INVALID_INPUT',
} as const;
export type FollowErrorCode = (typeof FollowErrorCode)[keyof typeof FollowErrorCode];

/**
 * The chain tables changed a block the follower had already seen final. It never guesses which side is
 * right: it stops, naming the height and both hashes (`newHash` null when the height vanished).
 */
export class ReorgBeyondFinalityError extends BlockxError {
  constructor(
    readonly height: number,
    readonly finalHash: string | null,
    readonly newHash: string | null,
    readonly finality: number,
    readonly head: number,
  ) {
    super(
      FollowErrorCode.REORG_BEYOND_FINALITY,
      `reorg deeper than finality (${finality} blocks): block ${height} was final with hash ` +
        `${finalHash ?? '(none)'}, the chain tables now say ${newHash ?? '(no canonical block)'} ` +
        `(head ${head}); stopped without writing`,
    );
  }
}

/** Input the core refuses; it changes nothing. */
export class FollowInputError extends BlockxError {
  constructor(
    message: string,
    readonly field: string,
  ) {
    super(FollowErrorCode.INVALID_INPUT, message);
  }
}
