// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker.proto

import type { Long } from '@grpc/proto-loader';

/**
 * A Worker's slot counts at one moment, as its heartbeat carries them, sent with its answers to
 * RequestTaskSlot(s) so a Coordinator sees released and submitted slots without waiting for a heartbeat.
 */
export interface WorkerCapacity {
  /**
   * Total task slots (the heartbeat's taskSlots).
   */
  'taskSlots'?: (number);
  /**
   * Slots reserved and not submitted (the heartbeat's reservedSlots).
   */
  'reservedSlots'?: (number);
  /**
   * Slots running a task (the heartbeat's runningTasks).
   */
  'runningTasks'?: (number);
  /**
   * Reservations a client holding none could reclaim (the heartbeat's reclaimableSlots); 0 when none.
   */
  'reclaimableSlots'?: (number);
  /**
   * When the counts were taken: the Worker's wall clock, ms since the Unix epoch (as lastHeartbeatMs).
   */
  'takenAtMs'?: (number | string | Long);
}

/**
 * A Worker's slot counts at one moment, as its heartbeat carries them, sent with its answers to
 * RequestTaskSlot(s) so a Coordinator sees released and submitted slots without waiting for a heartbeat.
 */
export interface WorkerCapacity__Output {
  /**
   * Total task slots (the heartbeat's taskSlots).
   */
  'taskSlots': (number);
  /**
   * Slots reserved and not submitted (the heartbeat's reservedSlots).
   */
  'reservedSlots': (number);
  /**
   * Slots running a task (the heartbeat's runningTasks).
   */
  'runningTasks': (number);
  /**
   * Reservations a client holding none could reclaim (the heartbeat's reclaimableSlots); 0 when none.
   */
  'reclaimableSlots': (number);
  /**
   * When the counts were taken: the Worker's wall clock, ms since the Unix epoch (as lastHeartbeatMs).
   */
  'takenAtMs': (number);
}
