// The cluster status view: CoordinatorAdminService.GetClusterStatus (proto/blockx/coordinator/v1/admin.proto)
// in camelCase with int64 as numbers — what the Coordinator core's status query turns into
// (services/coordinator/core/cluster-status.ts, clusterStatusView), what the Coordinator sends, and what
// the client hands to `blockx status` and every other reader (docs/coordinator.md). One shape for both
// sides; absent optional values are 0 or the empty string, as on the wire. Pure types: no IO.

import type { WorkerHeartbeat } from './heartbeat.js';

/** The Coordinator's view of its Workers. */
export interface ClusterStatusView {
  /** The Coordinator answers ReserveWorkerSlot (first full view built, watch not down beyond the grace). */
  readonly ready: boolean;
  /** Why it is not ready; empty when ready. */
  readonly unavailableReason: string;
  /** The Coordinator's clock when the view was read (UTC ms); ages below are relative to it. */
  readonly nowMs: number;
  /** A full Worker list has been applied at least once. */
  readonly initialized: boolean;
  /** When the registry watch broke (UTC ms), 0 while connected. */
  readonly watchDisconnectedAtMs: number;
  /** The registry prefixes the Coordinator watches. */
  readonly registryPrefixes: readonly string[];
  /** The limits the rows are judged against. */
  readonly limits: CoordinatorLimitsView | null;
  /** One row per Worker, sorted by address. */
  readonly workers: readonly WorkerStatusView[];
}

/** The Coordinator limits a ClusterStatusView judges its Workers against. */
export interface CoordinatorLimitsView {
  readonly heartbeatTimeoutMs: number;
  readonly watchGracePeriodMs: number;
  readonly slotTtlMs: number;
  readonly maxCandidates: number;
  readonly circuitBreakerThreshold: number;
  readonly circuitBreakerCooldownMs: number;
  readonly cpuRedLine: number;
  readonly memoryRedLine: number;
  readonly errorRateRedLine: number;
}

/** What a row reports as the Worker's last heartbeat said it (the fields' meaning: heartbeat.ts). */
export type HeartbeatFigures = Pick<
  WorkerHeartbeat,
  | 'workerAddr'
  | 'taskSlots'
  | 'reservedSlots'
  | 'runningTasks'
  | 'cpuPercent'
  | 'memoryPercent'
  | 'memoryAvailableBytes'
  | 'memoryTotalBytes'
  | 'processRssBytes'
  | 'errorRate'
  | 'lastHeartbeatMs'
>;

/**
 * What the Coordinator judges of a Worker, in the same words on both sides of the wire (the core's row
 * has these too, with its own types for the breaker and the routing verdict).
 */
export interface WorkerJudgement {
  /**
   * taskSlots - reservedSlots - runningTasks by the last heartbeat, net of the Coordinator's own claims
   * not yet shown by a heartbeat (what selection uses); may be negative.
   */
  readonly freeSlots: number;
  /** Age of the last heartbeat by the Coordinator's clock. */
  readonly heartbeatAgeMs: number;
  /** Rejections and timeouts since the last successful reservation; the ranking penalty. */
  readonly consecutiveFailures: number;
  readonly penalty: number;
  /** Would the next ReserveWorkerSlot consider this Worker? */
  readonly routable: boolean;
}

/** One Worker in a ClusterStatusView. */
export interface WorkerStatusView extends HeartbeatFigures, WorkerJudgement {
  /** The registry prefix the Worker's winning heartbeat came from, and its format ("legacy" or "v2"). */
  readonly registryPrefix: string;
  readonly registryFormat: string;
  /** "closed", "open" (until breakerOpenUntilMs, else 0) or "half-open". */
  readonly breakerState: string;
  readonly breakerOpenUntilMs: number;
  /** The first hard filter a Worker that is not routable fails; both empty when routable. */
  readonly notRoutableCode: string;
  readonly notRoutableReason: string;
  /**
   * The code version by the last heartbeat (docs/functions-deploy.md); '' when the Worker sent none.
   * Optional in the type (views from an older Coordinator lack it); this Coordinator always sets it.
   */
  readonly codeVersion?: string;
  /** Why the Worker is not on the deployed version (heartbeat `codeVersionError`); '' when it is. As above. */
  readonly codeVersionError?: string;
}
