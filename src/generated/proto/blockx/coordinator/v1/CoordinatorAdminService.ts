// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/coordinator/v1/admin.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { DeployFunctionsRequest as _blockx_coordinator_v1_DeployFunctionsRequest, DeployFunctionsRequest__Output as _blockx_coordinator_v1_DeployFunctionsRequest__Output } from '../../../blockx/coordinator/v1/DeployFunctionsRequest.js';
import type { FunctionsChange as _blockx_coordinator_v1_FunctionsChange, FunctionsChange__Output as _blockx_coordinator_v1_FunctionsChange__Output } from '../../../blockx/coordinator/v1/FunctionsChange.js';
import type { GetClusterStatusRequest as _blockx_coordinator_v1_GetClusterStatusRequest, GetClusterStatusRequest__Output as _blockx_coordinator_v1_GetClusterStatusRequest__Output } from '../../../blockx/coordinator/v1/GetClusterStatusRequest.js';
import type { GetClusterStatusResponse as _blockx_coordinator_v1_GetClusterStatusResponse, GetClusterStatusResponse__Output as _blockx_coordinator_v1_GetClusterStatusResponse__Output } from '../../../blockx/coordinator/v1/GetClusterStatusResponse.js';
import type { ListFunctionsRequest as _blockx_coordinator_v1_ListFunctionsRequest, ListFunctionsRequest__Output as _blockx_coordinator_v1_ListFunctionsRequest__Output } from '../../../blockx/coordinator/v1/ListFunctionsRequest.js';
import type { ListFunctionsResponse as _blockx_coordinator_v1_ListFunctionsResponse, ListFunctionsResponse__Output as _blockx_coordinator_v1_ListFunctionsResponse__Output } from '../../../blockx/coordinator/v1/ListFunctionsResponse.js';
import type { UseFunctionsRequest as _blockx_coordinator_v1_UseFunctionsRequest, UseFunctionsRequest__Output as _blockx_coordinator_v1_UseFunctionsRequest__Output } from '../../../blockx/coordinator/v1/UseFunctionsRequest.js';

export interface CoordinatorAdminServiceClient extends grpc.Client {
  /**
   * Functions deployment (docs/functions-deploy.md) for a cluster whose registry is in-process (`blockx up`
   * without etcd): the Coordinator holds that cluster's functions store. With etcd, `blockx functions`
   * writes etcd itself, and a Coordinator without a store answers FAILED_PRECONDITION. Errors:
   * INVALID_ARGUMENT (an empty, oversized or damaged bundle), NOT_FOUND (an unknown or pruned version),
   * FAILED_PRECONDITION (nothing deployed yet, or no store), ABORTED (concurrent updates, try again).
   */
  DeployFunctions(argument: _blockx_coordinator_v1_DeployFunctionsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_FunctionsChange__Output>): grpc.ClientUnaryCall;
  DeployFunctions(argument: _blockx_coordinator_v1_DeployFunctionsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_blockx_coordinator_v1_FunctionsChange__Output>): grpc.ClientUnaryCall;
  DeployFunctions(argument: _blockx_coordinator_v1_DeployFunctionsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_FunctionsChange__Output>): grpc.ClientUnaryCall;
  DeployFunctions(argument: _blockx_coordinator_v1_DeployFunctionsRequest, callback: grpc.requestCallback<_blockx_coordinator_v1_FunctionsChange__Output>): grpc.ClientUnaryCall;
  /**
   * Functions deployment (docs/functions-deploy.md) for a cluster whose registry is in-process (`blockx up`
   * without etcd): the Coordinator holds that cluster's functions store. With etcd, `blockx functions`
   * writes etcd itself, and a Coordinator without a store answers FAILED_PRECONDITION. Errors:
   * INVALID_ARGUMENT (an empty, oversized or damaged bundle), NOT_FOUND (an unknown or pruned version),
   * FAILED_PRECONDITION (nothing deployed yet, or no store), ABORTED (concurrent updates, try again).
   */
  deployFunctions(argument: _blockx_coordinator_v1_DeployFunctionsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_FunctionsChange__Output>): grpc.ClientUnaryCall;
  deployFunctions(argument: _blockx_coordinator_v1_DeployFunctionsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_blockx_coordinator_v1_FunctionsChange__Output>): grpc.ClientUnaryCall;
  deployFunctions(argument: _blockx_coordinator_v1_DeployFunctionsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_FunctionsChange__Output>): grpc.ClientUnaryCall;
  deployFunctions(argument: _blockx_coordinator_v1_DeployFunctionsRequest, callback: grpc.requestCallback<_blockx_coordinator_v1_FunctionsChange__Output>): grpc.ClientUnaryCall;
  
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
  
  ListFunctions(argument: _blockx_coordinator_v1_ListFunctionsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_ListFunctionsResponse__Output>): grpc.ClientUnaryCall;
  ListFunctions(argument: _blockx_coordinator_v1_ListFunctionsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_blockx_coordinator_v1_ListFunctionsResponse__Output>): grpc.ClientUnaryCall;
  ListFunctions(argument: _blockx_coordinator_v1_ListFunctionsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_ListFunctionsResponse__Output>): grpc.ClientUnaryCall;
  ListFunctions(argument: _blockx_coordinator_v1_ListFunctionsRequest, callback: grpc.requestCallback<_blockx_coordinator_v1_ListFunctionsResponse__Output>): grpc.ClientUnaryCall;
  listFunctions(argument: _blockx_coordinator_v1_ListFunctionsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_ListFunctionsResponse__Output>): grpc.ClientUnaryCall;
  listFunctions(argument: _blockx_coordinator_v1_ListFunctionsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_blockx_coordinator_v1_ListFunctionsResponse__Output>): grpc.ClientUnaryCall;
  listFunctions(argument: _blockx_coordinator_v1_ListFunctionsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_ListFunctionsResponse__Output>): grpc.ClientUnaryCall;
  listFunctions(argument: _blockx_coordinator_v1_ListFunctionsRequest, callback: grpc.requestCallback<_blockx_coordinator_v1_ListFunctionsResponse__Output>): grpc.ClientUnaryCall;
  
  UseFunctions(argument: _blockx_coordinator_v1_UseFunctionsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_FunctionsChange__Output>): grpc.ClientUnaryCall;
  UseFunctions(argument: _blockx_coordinator_v1_UseFunctionsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_blockx_coordinator_v1_FunctionsChange__Output>): grpc.ClientUnaryCall;
  UseFunctions(argument: _blockx_coordinator_v1_UseFunctionsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_FunctionsChange__Output>): grpc.ClientUnaryCall;
  UseFunctions(argument: _blockx_coordinator_v1_UseFunctionsRequest, callback: grpc.requestCallback<_blockx_coordinator_v1_FunctionsChange__Output>): grpc.ClientUnaryCall;
  useFunctions(argument: _blockx_coordinator_v1_UseFunctionsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_FunctionsChange__Output>): grpc.ClientUnaryCall;
  useFunctions(argument: _blockx_coordinator_v1_UseFunctionsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_blockx_coordinator_v1_FunctionsChange__Output>): grpc.ClientUnaryCall;
  useFunctions(argument: _blockx_coordinator_v1_UseFunctionsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_FunctionsChange__Output>): grpc.ClientUnaryCall;
  useFunctions(argument: _blockx_coordinator_v1_UseFunctionsRequest, callback: grpc.requestCallback<_blockx_coordinator_v1_FunctionsChange__Output>): grpc.ClientUnaryCall;
  
}

export interface CoordinatorAdminServiceHandlers extends grpc.UntypedServiceImplementation {
  /**
   * Functions deployment (docs/functions-deploy.md) for a cluster whose registry is in-process (`blockx up`
   * without etcd): the Coordinator holds that cluster's functions store. With etcd, `blockx functions`
   * writes etcd itself, and a Coordinator without a store answers FAILED_PRECONDITION. Errors:
   * INVALID_ARGUMENT (an empty, oversized or damaged bundle), NOT_FOUND (an unknown or pruned version),
   * FAILED_PRECONDITION (nothing deployed yet, or no store), ABORTED (concurrent updates, try again).
   */
  DeployFunctions: grpc.handleUnaryCall<_blockx_coordinator_v1_DeployFunctionsRequest__Output, _blockx_coordinator_v1_FunctionsChange>;
  
  /**
   * The Coordinator's current view: readiness and one row per Worker it knows.
   */
  GetClusterStatus: grpc.handleUnaryCall<_blockx_coordinator_v1_GetClusterStatusRequest__Output, _blockx_coordinator_v1_GetClusterStatusResponse>;
  
  ListFunctions: grpc.handleUnaryCall<_blockx_coordinator_v1_ListFunctionsRequest__Output, _blockx_coordinator_v1_ListFunctionsResponse>;
  
  UseFunctions: grpc.handleUnaryCall<_blockx_coordinator_v1_UseFunctionsRequest__Output, _blockx_coordinator_v1_FunctionsChange>;
  
}

export interface CoordinatorAdminServiceDefinition extends grpc.ServiceDefinition {
  DeployFunctions: MethodDefinition<_blockx_coordinator_v1_DeployFunctionsRequest, _blockx_coordinator_v1_FunctionsChange, _blockx_coordinator_v1_DeployFunctionsRequest__Output, _blockx_coordinator_v1_FunctionsChange__Output>
  GetClusterStatus: MethodDefinition<_blockx_coordinator_v1_GetClusterStatusRequest, _blockx_coordinator_v1_GetClusterStatusResponse, _blockx_coordinator_v1_GetClusterStatusRequest__Output, _blockx_coordinator_v1_GetClusterStatusResponse__Output>
  ListFunctions: MethodDefinition<_blockx_coordinator_v1_ListFunctionsRequest, _blockx_coordinator_v1_ListFunctionsResponse, _blockx_coordinator_v1_ListFunctionsRequest__Output, _blockx_coordinator_v1_ListFunctionsResponse__Output>
  UseFunctions: MethodDefinition<_blockx_coordinator_v1_UseFunctionsRequest, _blockx_coordinator_v1_FunctionsChange, _blockx_coordinator_v1_UseFunctionsRequest__Output, _blockx_coordinator_v1_FunctionsChange__Output>
}
