// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { BundleCoordinatorServiceClient as _blockx_bundlecoordinator_v1_BundleCoordinatorServiceClient, BundleCoordinatorServiceDefinition as _blockx_bundlecoordinator_v1_BundleCoordinatorServiceDefinition } from './blockx/bundlecoordinator/v1/BundleCoordinatorService.js';
import type { CoordinatorServiceClient as _blockx_coordinator_v1_CoordinatorServiceClient, CoordinatorServiceDefinition as _blockx_coordinator_v1_CoordinatorServiceDefinition } from './blockx/coordinator/v1/CoordinatorService.js';
import type { ReservationError as _blockx_coordinator_v1_ReservationError, ReservationError__Output as _blockx_coordinator_v1_ReservationError__Output } from './blockx/coordinator/v1/ReservationError.js';
import type { ReserveWorkerSlotRequest as _blockx_coordinator_v1_ReserveWorkerSlotRequest, ReserveWorkerSlotRequest__Output as _blockx_coordinator_v1_ReserveWorkerSlotRequest__Output } from './blockx/coordinator/v1/ReserveWorkerSlotRequest.js';
import type { ReserveWorkerSlotResponse as _blockx_coordinator_v1_ReserveWorkerSlotResponse, ReserveWorkerSlotResponse__Output as _blockx_coordinator_v1_ReserveWorkerSlotResponse__Output } from './blockx/coordinator/v1/ReserveWorkerSlotResponse.js';
import type { ReserveWorkerSlotsRequest as _blockx_coordinator_v1_ReserveWorkerSlotsRequest, ReserveWorkerSlotsRequest__Output as _blockx_coordinator_v1_ReserveWorkerSlotsRequest__Output } from './blockx/coordinator/v1/ReserveWorkerSlotsRequest.js';
import type { ReserveWorkerSlotsResponse as _blockx_coordinator_v1_ReserveWorkerSlotsResponse, ReserveWorkerSlotsResponse__Output as _blockx_coordinator_v1_ReserveWorkerSlotsResponse__Output } from './blockx/coordinator/v1/ReserveWorkerSlotsResponse.js';
import type { WorkerSlotReservation as _blockx_coordinator_v1_WorkerSlotReservation, WorkerSlotReservation__Output as _blockx_coordinator_v1_WorkerSlotReservation__Output } from './blockx/coordinator/v1/WorkerSlotReservation.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  blockx: {
    bundlecoordinator: {
      v1: {
        BundleCoordinatorService: SubtypeConstructor<typeof grpc.Client, _blockx_bundlecoordinator_v1_BundleCoordinatorServiceClient> & { service: _blockx_bundlecoordinator_v1_BundleCoordinatorServiceDefinition }
      }
    }
    coordinator: {
      v1: {
        CoordinatorService: SubtypeConstructor<typeof grpc.Client, _blockx_coordinator_v1_CoordinatorServiceClient> & { service: _blockx_coordinator_v1_CoordinatorServiceDefinition }
        ReservationError: MessageTypeDefinition<_blockx_coordinator_v1_ReservationError, _blockx_coordinator_v1_ReservationError__Output>
        ReserveWorkerSlotRequest: MessageTypeDefinition<_blockx_coordinator_v1_ReserveWorkerSlotRequest, _blockx_coordinator_v1_ReserveWorkerSlotRequest__Output>
        ReserveWorkerSlotResponse: MessageTypeDefinition<_blockx_coordinator_v1_ReserveWorkerSlotResponse, _blockx_coordinator_v1_ReserveWorkerSlotResponse__Output>
        ReserveWorkerSlotsRequest: MessageTypeDefinition<_blockx_coordinator_v1_ReserveWorkerSlotsRequest, _blockx_coordinator_v1_ReserveWorkerSlotsRequest__Output>
        ReserveWorkerSlotsResponse: MessageTypeDefinition<_blockx_coordinator_v1_ReserveWorkerSlotsResponse, _blockx_coordinator_v1_ReserveWorkerSlotsResponse__Output>
        WorkerSlotReservation: MessageTypeDefinition<_blockx_coordinator_v1_WorkerSlotReservation, _blockx_coordinator_v1_WorkerSlotReservation__Output>
      }
    }
  }
}

