// The CoordinatorCore's input alphabet as data. Every input carries `now` (UTC ms by the Coordinator's
// clock). Adapters may call the matching methods directly; `CoordinatorCore.apply` accepts these values,
// which is what replay logs and property tests use.

import type { WorkerHeartbeat } from '../../../contracts/heartbeat.js';

/** What a Worker's `RequestTaskSlot` came to, as the handler classified it. */
export type SlotOutcome =
  /** A slot id came back. Clears the Worker's failure state. */
  | 'success'
  /** An explicit rejection other than a full pool (InvalidArgument, FailedPrecondition, NotFound, ...). */
  | 'rejection'
  /** Still uncertain after the same-Worker retries. Counts like a rejection. */
  | 'timeout'
  /** The Worker's slot pool is full (ResourceExhausted / NoSlot): healthy but busy, counts for nothing. */
  | 'backpressure';

/**
 * How a claim (claimCandidate) ended, for the local capacity adjustment (worker-view.ts):
 *  - `slot`: the Worker granted a new slot;
 *  - `noSlot`: nothing new is held — a rejection, a full pool, a transport failure, a re-grant of a task
 *    already running there, a retained terminal result, or a request cancelled before it was sent;
 *  - `maybeSlot`: the outcome stayed uncertain; the Worker may hold a slot until its TTL.
 */
export type ClaimResult = 'slot' | 'noSlot' | 'maybeSlot';

/**
 * A Worker's slot counts as it sent them with an answer to RequestTaskSlot(s), read right after the call's
 * grants (docs/placement.md § Capacity from the Workers' answers). Counts are non-negative integers;
 * `takenAtMs` is the Worker's clock, like a heartbeat's lastHeartbeatMs.
 */
export interface CapacityReport {
  readonly taskSlots: number;
  readonly reservedSlots: number;
  readonly runningTasks: number;
  readonly reclaimableSlots: number;
  readonly takenAtMs: number;
}

export type CoordinatorInput =
  | { readonly type: 'fullWorkerList'; readonly workers: readonly WorkerHeartbeat[]; readonly now: number }
  | { readonly type: 'workerUpdate'; readonly heartbeat: WorkerHeartbeat; readonly now: number }
  | { readonly type: 'workerRemoval'; readonly workerAddr: string; readonly now: number }
  | { readonly type: 'watchDisconnected'; readonly now: number }
  | { readonly type: 'watchReconnected'; readonly now: number }
  | {
      readonly type: 'slotOutcome';
      readonly workerAddr: string;
      readonly outcome: SlotOutcome;
      readonly now: number;
    }
  | {
      readonly type: 'capacityReported';
      readonly workerAddr: string;
      readonly report: CapacityReport;
      readonly now: number;
    }
  | {
      readonly type: 'claimSettled';
      readonly workerAddr: string;
      readonly result: ClaimResult;
      readonly now: number;
    };
