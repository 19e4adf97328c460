// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker_admin.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { ListRecentTasksRequest as _blockx_worker_v1_ListRecentTasksRequest, ListRecentTasksRequest__Output as _blockx_worker_v1_ListRecentTasksRequest__Output } from '../../../blockx/worker/v1/ListRecentTasksRequest.js';
import type { ListRecentTasksResponse as _blockx_worker_v1_ListRecentTasksResponse, ListRecentTasksResponse__Output as _blockx_worker_v1_ListRecentTasksResponse__Output } from '../../../blockx/worker/v1/ListRecentTasksResponse.js';

export interface WorkerAdminServiceClient extends grpc.Client {
  /**
   * The Worker's recent tasks changed after `after_seq`, and its cumulative counters.
   */
  ListRecentTasks(argument: _blockx_worker_v1_ListRecentTasksRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_worker_v1_ListRecentTasksResponse__Output>): grpc.ClientUnaryCall;
  ListRecentTasks(argument: _blockx_worker_v1_ListRecentTasksRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_blockx_worker_v1_ListRecentTasksResponse__Output>): grpc.ClientUnaryCall;
  ListRecentTasks(argument: _blockx_worker_v1_ListRecentTasksRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_worker_v1_ListRecentTasksResponse__Output>): grpc.ClientUnaryCall;
  ListRecentTasks(argument: _blockx_worker_v1_ListRecentTasksRequest, callback: grpc.requestCallback<_blockx_worker_v1_ListRecentTasksResponse__Output>): grpc.ClientUnaryCall;
  /**
   * The Worker's recent tasks changed after `after_seq`, and its cumulative counters.
   */
  listRecentTasks(argument: _blockx_worker_v1_ListRecentTasksRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_worker_v1_ListRecentTasksResponse__Output>): grpc.ClientUnaryCall;
  listRecentTasks(argument: _blockx_worker_v1_ListRecentTasksRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_blockx_worker_v1_ListRecentTasksResponse__Output>): grpc.ClientUnaryCall;
  listRecentTasks(argument: _blockx_worker_v1_ListRecentTasksRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_worker_v1_ListRecentTasksResponse__Output>): grpc.ClientUnaryCall;
  listRecentTasks(argument: _blockx_worker_v1_ListRecentTasksRequest, callback: grpc.requestCallback<_blockx_worker_v1_ListRecentTasksResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface WorkerAdminServiceHandlers extends grpc.UntypedServiceImplementation {
  /**
   * The Worker's recent tasks changed after `after_seq`, and its cumulative counters.
   */
  ListRecentTasks: grpc.handleUnaryCall<_blockx_worker_v1_ListRecentTasksRequest__Output, _blockx_worker_v1_ListRecentTasksResponse>;
  
}

export interface WorkerAdminServiceDefinition extends grpc.ServiceDefinition {
  ListRecentTasks: MethodDefinition<_blockx_worker_v1_ListRecentTasksRequest, _blockx_worker_v1_ListRecentTasksResponse, _blockx_worker_v1_ListRecentTasksRequest__Output, _blockx_worker_v1_ListRecentTasksResponse__Output>
}
