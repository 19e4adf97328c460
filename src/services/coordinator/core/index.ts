// Public surface of the Coordinator's Sans-IO core.
export { CoordinatorCore, capacityReportProblem } from './coordinator-core.js';
export type { CandidateResult } from './coordinator-core.js';
export type { WorkerStatus } from './worker-status.js';
export {
  DEFAULT_COORDINATOR_CORE_CONFIG,
  PLACEMENT_POLICIES,
  validateCoordinatorCoreConfig,
} from './config.js';
export type { CoordinatorCoreConfig, PlacementPolicy } from './config.js';
export {
  CoordinatorConfigError,
  CoordinatorError,
  CoordinatorErrorCode,
  ReservationInputError,
} from './errors.js';
export type { CoordinatorConfigProblem, FilterCounts, FilterDetails } from './errors.js';
export type { CapacityReport, ClaimResult, CoordinatorInput, SlotOutcome } from './inputs.js';
export {
  ALL_CANDIDATES_REJECTED,
  INTERNAL_RESERVATION_ERROR,
  REQUEST_CANCELLED,
  ReservationMachine,
  UNABLE_TO_CONFIRM,
  claimResultOfGrant,
  isTerminalGrant,
  rejectionOutcome,
} from './reservation.js';
export type {
  RequestSlotsCommand,
  ReservationConfig,
  ReservationEvent,
  ReservationInput,
  ReservationStep,
  ReserveResult,
  SlotAnswer,
} from './reservation-types.js';
export { heartbeatFreshness } from './freshness.js';
export type { HeartbeatFreshness } from './freshness.js';
export { MAX_NO_SLOT_MESSAGE, noExecutableSlotMessage } from './no-slot-message.js';
export { fmix32, hashString32, rendezvousScore } from './rendezvous.js';
export { mergeHeartbeats, registryEntryWins } from './prefix-merge.js';
export type { RegistryEntry } from './prefix-merge.js';
export { PrefixMergeView } from './prefix-merge-view.js';
export type { MergeChange } from './prefix-merge-view.js';
export { affinityRanksBefore, candidateRanksBefore, scanCandidates } from './selection.js';
export type { ScanResult } from './selection.js';
export { workerStatus } from './worker-status.js';
export { validateReserveRequest } from './validate.js';
export {
  addLocalReservation,
  addPendingClaim,
  assignCapacityReport,
  assignHeartbeat,
  createWorkerView,
  forgetReflectedReservations,
  freeCapacity,
  freeCapacityAt,
  localReservationsAt,
  releasePendingClaim,
  usedTotal,
} from './worker-view.js';
export type { WorkerLocalState, WorkerView } from './worker-view.js';
export {
  breakerState,
  isBreakerOpen,
  recordBreakerFailure,
  recordBreakerSuccess,
} from './circuit-breaker.js';
export type { BreakerFields, BreakerLimits, BreakerState } from './circuit-breaker.js';
export {
  NotRoutableCode,
  clusterStatus,
  clusterStatusView,
  clusterWorkerStatus,
  routingBlocker,
} from './cluster-status.js';
export type {
  ClusterStatus,
  ClusterStatusSource,
  ClusterWorkerStatus,
  NotRoutable,
  RegistrySource,
} from './cluster-status.js';
