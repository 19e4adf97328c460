// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/coordinator/v1/admin.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { GetClusterStatusRequest as _blockx_coordinator_v1_GetClusterStatusRequest, GetClusterStatusRequest__Output as _blockx_coordinator_v1_GetClusterStatusRequest__Output } from '../../../blockx/coordinator/v1/GetClusterStatusRequest.js';
import type { GetClusterStatusResponse as _blockx_coordinator_v1_GetClusterStatusResponse, GetClusterStatusResponse__Output as _blockx_coordinator_v1_GetClusterStatusResponse__Output } from '../../../blockx/coordinator/v1/GetClusterStatusResponse.js';

export interface CoordinatorAdminServiceClient extends grpc.Client {
  /**
   * The Coordinator's current view: readiness and one row per Worker it knows.
   */
  GetClusterStatus(argument: _blockx_coordinator_v1_GetClusterStatusRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_GetClusterStatusResponse__Output>): grpc.ClientUnaryCall;
  GetClusterStatus(argument: _blockx_coordinator_v1_GetClusterStatusRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_blockx_coordinator_v1_GetClusterStatusResponse__Output>): grpc.ClientUnaryCall;
  GetClusterStatus(argument: _blockx_coordinator_v1_GetClusterStatusRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_GetClusterStatusResponse__Output>): grpc.ClientUnaryCall;
  GetClusterStatus(argument: _blockx_coordinator_v1_GetClusterStatusRequest, callback: grpc.requestCallback<_blockx_coordinator_v1_GetClusterStatusResponse__Output>): grpc.ClientUnaryCall;
  /**
   * The Coordinator's current view: readiness and one row per Worker it knows.
   */
  getClusterStatus(argument: _blockx_coordinator_v1_GetClusterStatusRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_GetClusterStatusResponse__Output>): grpc.ClientUnaryCall;
  getClusterStatus(argument: _blockx_coordinator_v1_GetClusterStatusRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_blockx_coordinator_v1_GetClusterStatusResponse__Output>): grpc.ClientUnaryCall;
  getClusterStatus(argument: _blockx_coordinator_v1_GetClusterStatusRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_GetClusterStatusResponse__Output>): grpc.ClientUnaryCall;
  getClusterStatus(argument: _blockx_coordinator_v1_GetClusterStatusRequest, callback: grpc.requestCallback<_blockx_coordinator_v1_GetClusterStatusResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface CoordinatorAdminServiceHandlers extends grpc.UntypedServiceImplementation {
  /**
   * The Coordinator's current view: readiness and one row per Worker it knows.
   */
  GetClusterStatus: grpc.handleUnaryCall<_blockx_coordinator_v1_GetClusterStatusRequest__Output, _blockx_coordinator_v1_GetClusterStatusResponse>;
  
}

export interface CoordinatorAdminServiceDefinition extends grpc.ServiceDefinition {
  GetClusterStatus: MethodDefinition<_blockx_coordinator_v1_GetClusterStatusRequest, _blockx_coordinator_v1_GetClusterStatusResponse, _blockx_coordinator_v1_GetClusterStatusRequest__Output, _blockx_coordinator_v1_GetClusterStatusResponse__Output>
}
