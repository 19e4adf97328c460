// Stable codes of the follow core (docs/follow.md § When the follower stops). Each key equals its value;
// test/unit/services/follow/core/follow-core.test.ts pins that.
import { BlockxError } from '../../../kernel/errors.js';

export const FollowErrorCode = {
  /** A block the follower had seen final changed: a reorg deeper than the finality depth. */
  REORG_BEYOND_FINALITY: 'REORG_BEYOND_FINALITY',
  /** An input the core cannot accept (a bad option, a read it did not ask for, an unknown run). */
  INVALID_INPUT: 'INVALID_INPUT',
  /** A runner's write of the job's state was refused: a newer runner holds the job (a greater term). */
  JOB_FENCED: 'JOB_FENCED',
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

/**
 * A runner that lost its lease tried to write the job's state: the job store holds a newer term, so the
 * write was refused and nothing of it committed (docs/follow.md § One runner per job).
 */
export class JobFencedError extends BlockxError {
  constructor(
    readonly jobId: string,
    readonly term: number,
    /** The newer term, when known (a claim reads it; a fenced write only sees that ours is gone). */
    readonly newerTerm?: number,
  ) {
    super(
      FollowErrorCode.JOB_FENCED,
      `job ${jobId}: a newer runner holds it (term ${newerTerm ?? 'newer'} > ours ${term}); ` +
        `this runner's write was refused`,
    );
  }
}
