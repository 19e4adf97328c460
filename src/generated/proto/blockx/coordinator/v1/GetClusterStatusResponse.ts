// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/coordinator/v1/admin.proto

import type { CoordinatorLimits as _blockx_coordinator_v1_CoordinatorLimits, CoordinatorLimits__Output as _blockx_coordinator_v1_CoordinatorLimits__Output } from '../../../blockx/coordinator/v1/CoordinatorLimits.js';
import type { WorkerStatus as _blockx_coordinator_v1_WorkerStatus, WorkerStatus__Output as _blockx_coordinator_v1_WorkerStatus__Output } from '../../../blockx/coordinator/v1/WorkerStatus.js';
import type { Long } from '@grpc/proto-loader';

export interface GetClusterStatusResponse {
  /**
   * The Coordinator answers ReserveWorkerSlot (first full view built, watch not down beyond the grace).
   */
  'ready'?: (boolean);
  /**
   * Why it is not ready; empty when ready.
   */
  'unavailableReason'?: (string);
  /**
   * The Coordinator's clock when the view was read (UTC ms); ages below are relative to it.
   */
  'nowMs'?: (number | string | Long);
  /**
   * A full Worker list has been applied at least once.
   */
  'initialized'?: (boolean);
  /**
   * When the registry watch broke (UTC ms), 0 while connected.
   */
  'watchDisconnectedAtMs'?: (number | string | Long);
  /**
   * The registry prefixes the Coordinator watches.
   */
  'registryPrefixes'?: (string)[];
  /**
   * The limits the rows are judged against.
   */
  'limits'?: (_blockx_coordinator_v1_CoordinatorLimits | null);
  /**
   * One row per Worker, sorted by address.
   */
  'workers'?: (_blockx_coordinator_v1_WorkerStatus)[];
}

export interface GetClusterStatusResponse__Output {
  /**
   * The Coordinator answers ReserveWorkerSlot (first full view built, watch not down beyond the grace).
   */
  'ready': (boolean);
  /**
   * Why it is not ready; empty when ready.
   */
  'unavailableReason': (string);
  /**
   * The Coordinator's clock when the view was read (UTC ms); ages below are relative to it.
   */
  'nowMs': (number);
  /**
   * A full Worker list has been applied at least once.
   */
  'initialized': (boolean);
  /**
   * When the registry watch broke (UTC ms), 0 while connected.
   */
  'watchDisconnectedAtMs': (number);
  /**
   * The registry prefixes the Coordinator watches.
   */
  'registryPrefixes': (string)[];
  /**
   * The limits the rows are judged against.
   */
  'limits': (_blockx_coordinator_v1_CoordinatorLimits__Output | null);
  /**
   * One row per Worker, sorted by address.
   */
  'workers': (_blockx_coordinator_v1_WorkerStatus__Output)[];
}
