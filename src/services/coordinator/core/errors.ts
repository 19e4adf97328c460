// Business error codes of the Coordinator (docs/coordinator.md § Errors). Each key equals its
// value; test/unit/services/coordinator/core/errors.test.ts pins that, so a code never drifts. The gRPC
// status mapping (InvalidArgument, Unavailable, ResourceExhausted, Aborted) lives in exactly one function
// in adapters/; these codes also travel in the `blockx-error-code` metadata key
// (docs/architecture.md § Protos).

import { BlockxError } from '../../../kernel/errors.js';

export const CoordinatorErrorCode = {
  /** `taskId` is empty. gRPC InvalidArgument. */
  InvalidArgument: 'InvalidArgument',
  /** Not initialized, watch grace exceeded, or no Worker with a fresh heartbeat. gRPC Unavailable. */
  Unavailable: 'Unavailable',
  /** No unfiltered Worker with free capacity in the trusted view. gRPC ResourceExhausted. */
  NoExecutableSlot: 'NoExecutableSlot',
  /** Every candidate tried explicitly rejected the reservation. gRPC ResourceExhausted. */
  AllCandidatesRejected: 'AllCandidatesRejected',
  /** A reservation may have happened but could not be confirmed. gRPC Aborted. */
  SlotUncertain: 'SlotUncertain',
  /** A Worker's slot pool is full (Worker ResourceExhausted); backpressure, not a failure. */
  NoSlot: 'NoSlot',
  /** A Worker refused a slot id (Worker FailedPrecondition). */
  InvalidSlot: 'InvalidSlot',
  /** A Worker does not know the task (Worker NotFound). */
  NotFound: 'NotFound',
  /** An unexpected failure inside the Coordinator. */
  Internal: 'Internal',
  /** The core was given an invalid configuration. */
  InvalidConfig: 'InvalidConfig',
} as const;
export type CoordinatorErrorCode = (typeof CoordinatorErrorCode)[keyof typeof CoordinatorErrorCode];

/** Why CoordinatorJobsService refused a backfill job report (core/backfill-jobs.ts). */
export const BackfillReportErrorCode = {
  /** A field out of its bounds (named in `field`). gRPC InvalidArgument. */
  InvalidArgument: 'InvalidArgument',
  /** The table is full of live running jobs, or the identity holds its most. gRPC ResourceExhausted. */
  TooManyJobs: 'TooManyJobs',
  /** Another identity reported this (job id, run) first (docs/security.md § Roles). gRPC PermissionDenied. */
  NotOwner: 'NotOwner',
} as const;
export type BackfillReportErrorCode = (typeof BackfillReportErrorCode)[keyof typeof BackfillReportErrorCode];

/** Why a report was refused: the field and what is wrong with it. */
export class BackfillReportError extends BlockxError {
  declare readonly code: BackfillReportErrorCode;
  constructor(
    code: BackfillReportErrorCode,
    readonly field: string,
    message: string,
  ) {
    super(code, message);
  }
}

/**
 * How many Workers each hard filter removed during one `selectCandidate`, counted under the *first*
 * filter a Worker failed (the order of docs/coordinator.md § Candidate selection). Carried by
 * NoExecutableSlot / Unavailable for logs.
 */
export interface FilterCounts {
  excluded: number;
  heartbeatTimedOut: number;
  overloaded: number;
  circuitOpen: number;
  noFreeCapacity: number;
}

/**
 * The numbers behind the filter counts of one scan, for the NoExecutableSlot message (no-slot-message.ts):
 * how many Workers were above each red line and the worst value seen, the oldest heartbeat, and the
 * longest remaining breaker cooldown. A Worker above several red lines counts under each of them here
 * (but once, as `overloaded`, in FilterCounts).
 */
export interface FilterDetails {
  cpuOver: number;
  worstCpu: number;
  memoryOver: number;
  worstMemory: number;
  errorRateOver: number;
  worstErrorRate: number;
  /** Largest `now - lastHeartbeatMs` among timed-out Workers. */
  oldestHeartbeatAgeMs: number;
  /** Of the `heartbeatTimedOut` Workers, those whose heartbeat is beyond maxClockSkewMs in the future. */
  aheadOfClock: number;
  /** Largest `lastHeartbeatMs - now` among them. */
  furthestAheadMs: number;
  /** Largest `deadline - now` among Workers with an open breaker. */
  longestBreakerMs: number;
}

export class CoordinatorError extends BlockxError {
  declare readonly code: CoordinatorErrorCode;
  /** Present on errors from `selectCandidate` that looked at the view. */
  readonly filtered: Readonly<FilterCounts> | undefined;
  /** Number of Workers in the view when the error was produced (selectCandidate only). */
  readonly workerCount: number | undefined;
  /** Present on NoExecutableSlot: the worst value behind each filter reason. */
  readonly details: Readonly<FilterDetails> | undefined;
  constructor(
    code: CoordinatorErrorCode,
    message: string,
    fields?: { filtered?: FilterCounts; workerCount?: number; details?: FilterDetails; cause?: unknown },
  ) {
    super(code, message, fields?.cause === undefined ? undefined : { cause: fields.cause });
    this.filtered = fields?.filtered;
    this.workerCount = fields?.workerCount;
    this.details = fields?.details;
  }
}

/** One problem of a core configuration; `field` names the CoordinatorCoreConfig key. */
export interface CoordinatorConfigProblem {
  readonly field: string;
  readonly message: string;
}

/** Thrown by the CoordinatorCore constructor on an invalid config; carries every problem. */
export class CoordinatorConfigError extends CoordinatorError {
  readonly problems: readonly CoordinatorConfigProblem[];
  constructor(problems: readonly CoordinatorConfigProblem[]) {
    super(
      CoordinatorErrorCode.InvalidConfig,
      `invalid coordinator core config: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`,
    );
    this.problems = problems;
  }
}

/**
 * An input the ReservationMachine cannot accept in its state (an unknown request id, a second `start`,
 * a wrong number of answers): a bug in the adapter driving it, never a Client's fault. Code Internal.
 */
export class ReservationInputError extends CoordinatorError {
  constructor(message: string) {
    super(CoordinatorErrorCode.Internal, `reservation machine: ${message}`);
  }
}
