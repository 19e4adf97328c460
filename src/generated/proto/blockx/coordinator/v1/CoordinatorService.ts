// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/coordinator/v1/coordinator.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { ReserveWorkerSlotRequest as _blockx_coordinator_v1_ReserveWorkerSlotRequest, ReserveWorkerSlotRequest__Output as _blockx_coordinator_v1_ReserveWorkerSlotRequest__Output } from '../../../blockx/coordinator/v1/ReserveWorkerSlotRequest.js';
import type { ReserveWorkerSlotResponse as _blockx_coordinator_v1_ReserveWorkerSlotResponse, ReserveWorkerSlotResponse__Output as _blockx_coordinator_v1_ReserveWorkerSlotResponse__Output } from '../../../blockx/coordinator/v1/ReserveWorkerSlotResponse.js';

export interface CoordinatorServiceClient extends grpc.Client {
  /**
   * Reserve a short-lived slot for a task on some Worker of the block cluster.
   */
  ReserveWorkerSlot(argument: _blockx_coordinator_v1_ReserveWorkerSlotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_ReserveWorkerSlotResponse__Output>): grpc.ClientUnaryCall;
  ReserveWorkerSlot(argument: _blockx_coordinator_v1_ReserveWorkerSlotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_blockx_coordinator_v1_ReserveWorkerSlotResponse__Output>): grpc.ClientUnaryCall;
  ReserveWorkerSlot(argument: _blockx_coordinator_v1_ReserveWorkerSlotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_ReserveWorkerSlotResponse__Output>): grpc.ClientUnaryCall;
  ReserveWorkerSlot(argument: _blockx_coordinator_v1_ReserveWorkerSlotRequest, callback: grpc.requestCallback<_blockx_coordinator_v1_ReserveWorkerSlotResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Reserve a short-lived slot for a task on some Worker of the block cluster.
   */
  reserveWorkerSlot(argument: _blockx_coordinator_v1_ReserveWorkerSlotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_ReserveWorkerSlotResponse__Output>): grpc.ClientUnaryCall;
  reserveWorkerSlot(argument: _blockx_coordinator_v1_ReserveWorkerSlotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_blockx_coordinator_v1_ReserveWorkerSlotResponse__Output>): grpc.ClientUnaryCall;
  reserveWorkerSlot(argument: _blockx_coordinator_v1_ReserveWorkerSlotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_ReserveWorkerSlotResponse__Output>): grpc.ClientUnaryCall;
  reserveWorkerSlot(argument: _blockx_coordinator_v1_ReserveWorkerSlotRequest, callback: grpc.requestCallback<_blockx_coordinator_v1_ReserveWorkerSlotResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface CoordinatorServiceHandlers extends grpc.UntypedServiceImplementation {
  /**
   * Reserve a short-lived slot for a task on some Worker of the block cluster.
   */
  ReserveWorkerSlot: grpc.handleUnaryCall<_blockx_coordinator_v1_ReserveWorkerSlotRequest__Output, _blockx_coordinator_v1_ReserveWorkerSlotResponse>;
  
}

export interface CoordinatorServiceDefinition extends grpc.ServiceDefinition {
  ReserveWorkerSlot: MethodDefinition<_blockx_coordinator_v1_ReserveWorkerSlotRequest, _blockx_coordinator_v1_ReserveWorkerSlotResponse, _blockx_coordinator_v1_ReserveWorkerSlotRequest__Output, _blockx_coordinator_v1_ReserveWorkerSlotResponse__Output>
}
