// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/coordinator/v1/admin.proto

import type { Long } from '@grpc/proto-loader';

export interface CoordinatorLimits {
  'heartbeatTimeoutMs'?: (number | string | Long);
  'watchGracePeriodMs'?: (number | string | Long);
  'slotTtlMs'?: (number | string | Long);
  'maxCandidates'?: (number);
  'circuitBreakerThreshold'?: (number);
  'circuitBreakerCooldownMs'?: (number | string | Long);
  'cpuRedLine'?: (number | string);
  'memoryRedLine'?: (number | string);
  'errorRateRedLine'?: (number | string);
}

export interface CoordinatorLimits__Output {
  'heartbeatTimeoutMs': (number);
  'watchGracePeriodMs': (number);
  'slotTtlMs': (number);
  'maxCandidates': (number);
  'circuitBreakerThreshold': (number);
  'circuitBreakerCooldownMs': (number);
  'cpuRedLine': (number);
  'memoryRedLine': (number);
  'errorRateRedLine': (number);
}
