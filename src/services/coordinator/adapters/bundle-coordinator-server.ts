// BundleCoordinatorServer: serves blockx.bundlecoordinator.v1.BundleCoordinatorService for a bundle
// cluster. The bundle service has its own identity (so a Client can never reserve a bundle Worker through
// a block Coordinator by mistake) but the same request and response fields, so this is a thin translation
// onto the one CoordinatorServer: same orchestration, same lock, same error mapping — for
// ReserveWorkerSlot and for the batched ReserveWorkerSlots (docs/batched-protocol.md).

import type { BundleCoordinatorServiceHandlers } from '../../../grpc/proto.js';
import type { CoordinatorServer } from './coordinator-server.js';

export class BundleCoordinatorServer {
  constructor(readonly server: CoordinatorServer) {}

  handlers(): BundleCoordinatorServiceHandlers {
    return {
      ReserveWorkerSlot: this.server.unaryHandler(),
      ReserveWorkerSlots: this.server.batchHandler(),
    };
  }
}
