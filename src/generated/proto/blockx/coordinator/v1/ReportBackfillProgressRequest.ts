// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/coordinator/v1/jobs.proto

import type { Long } from '@grpc/proto-loader';

export interface ReportBackfillProgressRequest {
  /**
   * The job id (docs/backfill.md); 1 to 128 characters.
   */
  'jobId'?: (string);
  /**
   * The run of the job; 1 to 64 characters.
   */
  'run'?: (string);
  /**
   * "block" or "bundle".
   */
  'per'?: (string);
  'fromBlock'?: (number | string | Long);
  'toBlock'?: (number | string | Long);
  /**
   * Units (blocks or bundles) in the job.
   */
  'units'?: (number | string | Long);
  /**
   * Units done so far, by outcome; none may exceed `units`.
   */
  'succeeded'?: (number | string | Long);
  'failed'?: (number | string | Long);
  'skipped'?: (number | string | Long);
  'inFlight'?: (number | string | Long);
  /**
   * When the run started (UTC ms, the client's clock).
   */
  'startedAtMs'?: (number | string | Long);
  /**
   * This is the last report of the run.
   */
  'finished'?: (boolean);
}

export interface ReportBackfillProgressRequest__Output {
  /**
   * The job id (docs/backfill.md); 1 to 128 characters.
   */
  'jobId': (string);
  /**
   * The run of the job; 1 to 64 characters.
   */
  'run': (string);
  /**
   * "block" or "bundle".
   */
  'per': (string);
  'fromBlock': (number);
  'toBlock': (number);
  /**
   * Units (blocks or bundles) in the job.
   */
  'units': (number);
  /**
   * Units done so far, by outcome; none may exceed `units`.
   */
  'succeeded': (number);
  'failed': (number);
  'skipped': (number);
  'inFlight': (number);
  /**
   * When the run started (UTC ms, the client's clock).
   */
  'startedAtMs': (number);
  /**
   * This is the last report of the run.
   */
  'finished': (boolean);
}
