// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { CoordinatorServiceClient as _blockx_coordinator_v1_CoordinatorServiceClient, CoordinatorServiceDefinition as _blockx_coordinator_v1_CoordinatorServiceDefinition } from './blockx/coordinator/v1/CoordinatorService.js';
import type { ReserveWorkerSlotRequest as _blockx_coordinator_v1_ReserveWorkerSlotRequest, ReserveWorkerSlotRequest__Output as _blockx_coordinator_v1_ReserveWorkerSlotRequest__Output } from './blockx/coordinator/v1/ReserveWorkerSlotRequest.js';
import type { ReserveWorkerSlotResponse as _blockx_coordinator_v1_ReserveWorkerSlotResponse, ReserveWorkerSlotResponse__Output as _blockx_coordinator_v1_ReserveWorkerSlotResponse__Output } from './blockx/coordinator/v1/ReserveWorkerSlotResponse.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  blockx: {
    coordinator: {
      v1: {
        CoordinatorService: SubtypeConstructor<typeof grpc.Client, _blockx_coordinator_v1_CoordinatorServiceClient> & { service: _blockx_coordinator_v1_CoordinatorServiceDefinition }
        ReserveWorkerSlotRequest: MessageTypeDefinition<_blockx_coordinator_v1_ReserveWorkerSlotRequest, _blockx_coordinator_v1_ReserveWorkerSlotRequest__Output>
        ReserveWorkerSlotResponse: MessageTypeDefinition<_blockx_coordinator_v1_ReserveWorkerSlotResponse, _blockx_coordinator_v1_ReserveWorkerSlotResponse__Output>
      }
    }
  }
}

