// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/bundlecoordinator/v1/bundle_coordinator.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { ReserveWorkerSlotRequest as _blockx_coordinator_v1_ReserveWorkerSlotRequest, ReserveWorkerSlotRequest__Output as _blockx_coordinator_v1_ReserveWorkerSlotRequest__Output } from '../../../blockx/coordinator/v1/ReserveWorkerSlotRequest.js';
import type { ReserveWorkerSlotResponse as _blockx_coordinator_v1_ReserveWorkerSlotResponse, ReserveWorkerSlotResponse__Output as _blockx_coordinator_v1_ReserveWorkerSlotResponse__Output } from '../../../blockx/coordinator/v1/ReserveWorkerSlotResponse.js';
import type { ReserveWorkerSlotsRequest as _blockx_coordinator_v1_ReserveWorkerSlotsRequest, ReserveWorkerSlotsRequest__Output as _blockx_coordinator_v1_ReserveWorkerSlotsRequest__Output } from '../../../blockx/coordinator/v1/ReserveWorkerSlotsRequest.js';
import type { ReserveWorkerSlotsResponse as _blockx_coordinator_v1_ReserveWorkerSlotsResponse, ReserveWorkerSlotsResponse__Output as _blockx_coordinator_v1_ReserveWorkerSlotsResponse__Output } from '../../../blockx/coordinator/v1/ReserveWorkerSlotsResponse.js';

export interface BundleCoordinatorServiceClient extends grpc.Client {
  /**
   * Reserve a short-lived slot for a task on some Worker of the bundle cluster.
   */
  ReserveWorkerSlot(argument: _blockx_coordinator_v1_ReserveWorkerSlotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_ReserveWorkerSlotResponse__Output>): grpc.ClientUnaryCall;
  ReserveWorkerSlot(argument: _blockx_coordinator_v1_ReserveWorkerSlotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_blockx_coordinator_v1_ReserveWorkerSlotResponse__Output>): grpc.ClientUnaryCall;
  ReserveWorkerSlot(argument: _blockx_coordinator_v1_ReserveWorkerSlotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_ReserveWorkerSlotResponse__Output>): grpc.ClientUnaryCall;
  ReserveWorkerSlot(argument: _blockx_coordinator_v1_ReserveWorkerSlotRequest, callback: grpc.requestCallback<_blockx_coordinator_v1_ReserveWorkerSlotResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Reserve a short-lived slot for a task on some Worker of the bundle cluster.
   */
  reserveWorkerSlot(argument: _blockx_coordinator_v1_ReserveWorkerSlotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_ReserveWorkerSlotResponse__Output>): grpc.ClientUnaryCall;
  reserveWorkerSlot(argument: _blockx_coordinator_v1_ReserveWorkerSlotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_blockx_coordinator_v1_ReserveWorkerSlotResponse__Output>): grpc.ClientUnaryCall;
  reserveWorkerSlot(argument: _blockx_coordinator_v1_ReserveWorkerSlotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_ReserveWorkerSlotResponse__Output>): grpc.ClientUnaryCall;
  reserveWorkerSlot(argument: _blockx_coordinator_v1_ReserveWorkerSlotRequest, callback: grpc.requestCallback<_blockx_coordinator_v1_ReserveWorkerSlotResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * ReserveWorkerSlot for many task ids in one call (docs/batched-protocol.md): the same filters,
   * ranking, breaker and uncertain-outcome rules per task, the batch spread over the candidates by free
   * capacity, one WorkerService.RequestTaskSlots per chosen Worker. One answer per requested id, in
   * request order; a task that could not be placed carries its error and never fails the call. At most
   * 10,000 ids per call.
   */
  ReserveWorkerSlots(argument: _blockx_coordinator_v1_ReserveWorkerSlotsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_ReserveWorkerSlotsResponse__Output>): grpc.ClientUnaryCall;
  ReserveWorkerSlots(argument: _blockx_coordinator_v1_ReserveWorkerSlotsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_blockx_coordinator_v1_ReserveWorkerSlotsResponse__Output>): grpc.ClientUnaryCall;
  ReserveWorkerSlots(argument: _blockx_coordinator_v1_ReserveWorkerSlotsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_ReserveWorkerSlotsResponse__Output>): grpc.ClientUnaryCall;
  ReserveWorkerSlots(argument: _blockx_coordinator_v1_ReserveWorkerSlotsRequest, callback: grpc.requestCallback<_blockx_coordinator_v1_ReserveWorkerSlotsResponse__Output>): grpc.ClientUnaryCall;
  /**
   * ReserveWorkerSlot for many task ids in one call (docs/batched-protocol.md): the same filters,
   * ranking, breaker and uncertain-outcome rules per task, the batch spread over the candidates by free
   * capacity, one WorkerService.RequestTaskSlots per chosen Worker. One answer per requested id, in
   * request order; a task that could not be placed carries its error and never fails the call. At most
   * 10,000 ids per call.
   */
  reserveWorkerSlots(argument: _blockx_coordinator_v1_ReserveWorkerSlotsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_ReserveWorkerSlotsResponse__Output>): grpc.ClientUnaryCall;
  reserveWorkerSlots(argument: _blockx_coordinator_v1_ReserveWorkerSlotsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_blockx_coordinator_v1_ReserveWorkerSlotsResponse__Output>): grpc.ClientUnaryCall;
  reserveWorkerSlots(argument: _blockx_coordinator_v1_ReserveWorkerSlotsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_ReserveWorkerSlotsResponse__Output>): grpc.ClientUnaryCall;
  reserveWorkerSlots(argument: _blockx_coordinator_v1_ReserveWorkerSlotsRequest, callback: grpc.requestCallback<_blockx_coordinator_v1_ReserveWorkerSlotsResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface BundleCoordinatorServiceHandlers extends grpc.UntypedServiceImplementation {
  /**
   * Reserve a short-lived slot for a task on some Worker of the bundle cluster.
   */
  ReserveWorkerSlot: grpc.handleUnaryCall<_blockx_coordinator_v1_ReserveWorkerSlotRequest__Output, _blockx_coordinator_v1_ReserveWorkerSlotResponse>;
  
  /**
   * ReserveWorkerSlot for many task ids in one call (docs/batched-protocol.md): the same filters,
   * ranking, breaker and uncertain-outcome rules per task, the batch spread over the candidates by free
   * capacity, one WorkerService.RequestTaskSlots per chosen Worker. One answer per requested id, in
   * request order; a task that could not be placed carries its error and never fails the call. At most
   * 10,000 ids per call.
   */
  ReserveWorkerSlots: grpc.handleUnaryCall<_blockx_coordinator_v1_ReserveWorkerSlotsRequest__Output, _blockx_coordinator_v1_ReserveWorkerSlotsResponse>;
  
}

export interface BundleCoordinatorServiceDefinition extends grpc.ServiceDefinition {
  ReserveWorkerSlot: MethodDefinition<_blockx_coordinator_v1_ReserveWorkerSlotRequest, _blockx_coordinator_v1_ReserveWorkerSlotResponse, _blockx_coordinator_v1_ReserveWorkerSlotRequest__Output, _blockx_coordinator_v1_ReserveWorkerSlotResponse__Output>
  ReserveWorkerSlots: MethodDefinition<_blockx_coordinator_v1_ReserveWorkerSlotsRequest, _blockx_coordinator_v1_ReserveWorkerSlotsResponse, _blockx_coordinator_v1_ReserveWorkerSlotsRequest__Output, _blockx_coordinator_v1_ReserveWorkerSlotsResponse__Output>
}
