// CoordinatorAdminService (proto/blockx/coordinator/v1/admin.proto): the read-only status view behind
// `blockx status`. The core is read under the CoordinatorServer's read lock, like selection, so a reply
// is one consistent snapshot; the pure query is core/cluster-status.ts. Nothing here changes routing.
//
// Which registry prefix a Worker came from is known to the watcher, not the core. Pass `registryEntryOf`
// when it is available; otherwise a Coordinator watching exactly one prefix reports that prefix for every
// Worker, and one watching several leaves the column empty.

import type { CoordinatorAdminServiceHandlers } from '../../../grpc/proto.js';
import type { GetClusterStatusResponse } from '../../../generated/proto/blockx/coordinator/v1/GetClusterStatusResponse.js';
import type { WorkerStatus as WorkerStatusWire } from '../../../generated/proto/blockx/coordinator/v1/WorkerStatus.js';
import type { RegistryPrefixFormat } from '../../../contracts/registry-prefix.js';
import { silentLogger } from '../../registry/registry-port.js';
import type { Logger } from '../../registry/registry-port.js';
import { clusterStatus } from '../core/cluster-status.js';
import type { ClusterStatus, ClusterWorkerStatus } from '../core/cluster-status.js';
import type { CoordinatorCore } from '../core/coordinator-core.js';
import { toServiceError } from './grpc-status.js';

export interface RegistrySource {
  readonly prefix: string;
  readonly format: RegistryPrefixFormat;
}

export interface AdminServiceOptions {
  /** The prefixes the Coordinator watches (reported as-is; one prefix also labels every Worker). */
  readonly prefixes?: readonly RegistrySource[];
  /** Where a Worker's winning heartbeat came from, when the watcher can tell. */
  readonly registryEntryOf?: (workerAddr: string) => RegistrySource | undefined;
  /** UTC ms (default: the server's clock, Date.now). */
  readonly clock?: () => number;
  readonly logger?: Logger;
}

/** What the handlers need of CoordinatorServer: its read lock around the core. */
export interface CoreReader {
  withCoreRead<T>(fn: (core: CoordinatorCore) => T): Promise<T>;
}

export function adminServiceHandlers(
  server: CoreReader,
  opts: AdminServiceOptions = {},
): CoordinatorAdminServiceHandlers {
  const clock = opts.clock ?? Date.now;
  const logger = opts.logger ?? silentLogger;
  const prefixes = opts.prefixes ?? [];
  const sourceOf =
    opts.registryEntryOf ?? (prefixes.length === 1 ? () => prefixes[0] : (): undefined => undefined);

  return {
    GetClusterStatus(_call, callback) {
      server
        .withCoreRead((core) => clusterStatus(core, clock()))
        .then(
          (status) => {
            let wire: GetClusterStatusResponse;
            try {
              wire = clusterStatusToWire(
                status,
                prefixes.map((p) => p.prefix),
                sourceOf,
              );
            } catch (err) {
              logger.error({ err: String(err) }, 'GetClusterStatus failed unexpectedly');
              callback(toServiceError(err));
              return;
            }
            callback(null, wire);
          },
          (err: unknown) => {
            logger.error({ err: String(err) }, 'GetClusterStatus failed unexpectedly');
            callback(toServiceError(err));
          },
        );
    },
  };
}

/** The wire form of a cluster status (absent optional times are 0, absent strings empty). */
export function clusterStatusToWire(
  status: ClusterStatus,
  registryPrefixes: readonly string[],
  sourceOf: (workerAddr: string) => RegistrySource | undefined,
): GetClusterStatusResponse {
  const l = status.limits;
  return {
    ready: status.ready,
    unavailableReason: status.unavailableReason ?? '',
    nowMs: status.nowMs,
    initialized: status.initialized,
    watchDisconnectedAtMs: status.watchDisconnectedAtMs ?? 0,
    registryPrefixes: [...registryPrefixes],
    limits: {
      heartbeatTimeoutMs: l.heartbeatTimeoutMs,
      watchGracePeriodMs: l.watchGracePeriodMs,
      slotTtlMs: l.slotTtlMs,
      maxCandidates: l.maxCandidates,
      circuitBreakerThreshold: l.circuitBreakerThreshold,
      circuitBreakerCooldownMs: l.circuitBreakerCooldownMs,
      cpuRedLine: l.cpuRedLine,
      memoryRedLine: l.memoryRedLine,
      errorRateRedLine: l.errorRateRedLine,
    },
    workers: status.workers.map((w) => workerStatusToWire(w, sourceOf(w.workerAddr))),
  };
}

function workerStatusToWire(w: ClusterWorkerStatus, source: RegistrySource | undefined): WorkerStatusWire {
  return {
    workerAddr: w.workerAddr,
    registryPrefix: source?.prefix ?? '',
    registryFormat: source?.format ?? '',
    taskSlots: w.taskSlots,
    reservedSlots: w.reservedSlots,
    runningTasks: w.runningTasks,
    freeSlots: w.freeSlots,
    cpuPercent: w.cpuPercent,
    memoryPercent: w.memoryPercent,
    memoryAvailableBytes: w.memoryAvailableBytes,
    memoryTotalBytes: w.memoryTotalBytes,
    processRssBytes: w.processRssBytes,
    errorRate: w.errorRate,
    lastHeartbeatMs: w.lastHeartbeatMs,
    heartbeatAgeMs: w.heartbeatAgeMs,
    breakerState: w.breakerState,
    breakerOpenUntilMs: w.breakerOpenUntilMs ?? 0,
    consecutiveFailures: w.consecutiveFailures,
    penalty: w.penalty,
    routable: w.routable,
    notRoutableCode: w.notRoutable?.code ?? '',
    notRoutableReason: w.notRoutable?.reason ?? '',
  };
}
