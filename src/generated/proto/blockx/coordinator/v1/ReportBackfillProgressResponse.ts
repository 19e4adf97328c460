// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/coordinator/v1/jobs.proto

import type { Long } from '@grpc/proto-loader';

export interface ReportBackfillProgressResponse {
  /**
   * How long the Coordinator keeps the job after this report (ms).
   */
  'retainMs'?: (number | string | Long);
}

export interface ReportBackfillProgressResponse__Output {
  /**
   * How long the Coordinator keeps the job after this report (ms).
   */
  'retainMs': (number);
}
