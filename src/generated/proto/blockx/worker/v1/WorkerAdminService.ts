// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker_admin.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { DescribeServingRequest as _blockx_worker_v1_DescribeServingRequest, DescribeServingRequest__Output as _blockx_worker_v1_DescribeServingRequest__Output } from '../../../blockx/worker/v1/DescribeServingRequest.js';
import type { DescribeServingResponse as _blockx_worker_v1_DescribeServingResponse, DescribeServingResponse__Output as _blockx_worker_v1_DescribeServingResponse__Output } from '../../../blockx/worker/v1/DescribeServingResponse.js';
import type { ListRecentTasksRequest as _blockx_worker_v1_ListRecentTasksRequest, ListRecentTasksRequest__Output as _blockx_worker_v1_ListRecentTasksRequest__Output } from '../../../blockx/worker/v1/ListRecentTasksRequest.js';
import type { ListRecentTasksResponse as _blockx_worker_v1_ListRecentTasksResponse, ListRecentTasksResponse__Output as _blockx_worker_v1_ListRecentTasksResponse__Output } from '../../../blockx/worker/v1/ListRecentTasksResponse.js';

export interface WorkerAdminServiceClient extends grpc.Client {
  /**
   * What the Worker checks a submitted task against now: its plugins with their config schemas and the
   * tables it serves (after any config reload). Nothing of any task; config only.
   */
  DescribeServing(argument: _blockx_worker_v1_DescribeServingRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_worker_v1_DescribeServingResponse__Output>): grpc.ClientUnaryCall;
  DescribeServing(argument: _blockx_worker_v1_DescribeServingRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_blockx_worker_v1_DescribeServingResponse__Output>): grpc.ClientUnaryCall;
  DescribeServing(argument: _blockx_worker_v1_DescribeServingRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_worker_v1_DescribeServingResponse__Output>): grpc.ClientUnaryCall;
  DescribeServing(argument: _blockx_worker_v1_DescribeServingRequest, callback: grpc.requestCallback<_blockx_worker_v1_DescribeServingResponse__Output>): grpc.ClientUnaryCall;
  /**
   * What the Worker checks a submitted task against now: its plugins with their config schemas and the
   * tables it serves (after any config reload). Nothing of any task; config only.
   */
  describeServing(argument: _blockx_worker_v1_DescribeServingRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_worker_v1_DescribeServingResponse__Output>): grpc.ClientUnaryCall;
  describeServing(argument: _blockx_worker_v1_DescribeServingRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_blockx_worker_v1_DescribeServingResponse__Output>): grpc.ClientUnaryCall;
  describeServing(argument: _blockx_worker_v1_DescribeServingRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_worker_v1_DescribeServingResponse__Output>): grpc.ClientUnaryCall;
  describeServing(argument: _blockx_worker_v1_DescribeServingRequest, callback: grpc.requestCallback<_blockx_worker_v1_DescribeServingResponse__Output>): grpc.ClientUnaryCall;
  
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
   * What the Worker checks a submitted task against now: its plugins with their config schemas and the
   * tables it serves (after any config reload). Nothing of any task; config only.
   */
  DescribeServing: grpc.handleUnaryCall<_blockx_worker_v1_DescribeServingRequest__Output, _blockx_worker_v1_DescribeServingResponse>;
  
  /**
   * The Worker's recent tasks changed after `after_seq`, and its cumulative counters.
   */
  ListRecentTasks: grpc.handleUnaryCall<_blockx_worker_v1_ListRecentTasksRequest__Output, _blockx_worker_v1_ListRecentTasksResponse>;
  
}

export interface WorkerAdminServiceDefinition extends grpc.ServiceDefinition {
  DescribeServing: MethodDefinition<_blockx_worker_v1_DescribeServingRequest, _blockx_worker_v1_DescribeServingResponse, _blockx_worker_v1_DescribeServingRequest__Output, _blockx_worker_v1_DescribeServingResponse__Output>
  ListRecentTasks: MethodDefinition<_blockx_worker_v1_ListRecentTasksRequest, _blockx_worker_v1_ListRecentTasksResponse, _blockx_worker_v1_ListRecentTasksRequest__Output, _blockx_worker_v1_ListRecentTasksResponse__Output>
}
