// CoordinatorAdminService (proto/blockx/coordinator/v1/admin.proto): the read-only status view behind
// `blockx status`, and the functions RPCs of an in-process cluster (functions-admin.ts). The core is read under the CoordinatorServer's read lock, like selection, so a reply
// is one consistent snapshot; the pure query is core/cluster-status.ts. Nothing here changes routing.
//
// Which registry prefix a Worker came from is known to the watcher, not the core. Pass `registryEntryOf`
// when it is available; otherwise a Coordinator watching exactly one prefix reports that prefix for every
// Worker, and one watching several leaves the column empty.

import { type ServiceLogger, silentLogger } from '../../../kernel/observability/service-logger.js';
import type { CoordinatorAdminServiceHandlers } from '../../../grpc/proto.js';
import type { GetClusterStatusResponse } from '../../../generated/proto/blockx/coordinator/v1/GetClusterStatusResponse.js';
import { clusterStatus, clusterStatusView } from '../core/cluster-status.js';
import type { ClusterStatus, RegistrySource } from '../core/cluster-status.js';
import type { CoordinatorCore } from '../core/coordinator-core.js';
import type { FunctionsStore } from '../../functions-store/functions-store.js';
import { functionsAdminHandlers } from './functions-admin.js';
import { toServiceError } from './grpc-status.js';

export type { RegistrySource } from '../core/cluster-status.js';

export interface AdminServiceOptions {
  /** The prefixes the Coordinator watches (reported as-is; one prefix also labels every Worker). */
  readonly prefixes?: readonly RegistrySource[];
  /** Where a Worker's winning heartbeat came from, when the watcher can tell. */
  readonly registryEntryOf?: (workerAddr: string) => RegistrySource | undefined;
  /** UTC ms (default: the server's clock, Date.now). */
  readonly clock?: () => number;
  readonly logger?: ServiceLogger;
  /** The functions store of an in-process cluster (functions-admin.ts); absent: those RPCs refuse. */
  readonly functions?: FunctionsStore;
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
    ...functionsAdminHandlers(opts.functions, logger),
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

/** The wire form of a cluster status: the shared view (core clusterStatusView) with mutable arrays. */
export function clusterStatusToWire(
  status: ClusterStatus,
  registryPrefixes: readonly string[],
  sourceOf: (workerAddr: string) => RegistrySource | undefined,
): GetClusterStatusResponse {
  const view = clusterStatusView(status, registryPrefixes, sourceOf);
  return { ...view, registryPrefixes: [...view.registryPrefixes], workers: [...view.workers] };
}
