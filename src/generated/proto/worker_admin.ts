// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { DescribeServingRequest as _blockx_worker_v1_DescribeServingRequest, DescribeServingRequest__Output as _blockx_worker_v1_DescribeServingRequest__Output } from './blockx/worker/v1/DescribeServingRequest.js';
import type { DescribeServingResponse as _blockx_worker_v1_DescribeServingResponse, DescribeServingResponse__Output as _blockx_worker_v1_DescribeServingResponse__Output } from './blockx/worker/v1/DescribeServingResponse.js';
import type { ListRecentTasksRequest as _blockx_worker_v1_ListRecentTasksRequest, ListRecentTasksRequest__Output as _blockx_worker_v1_ListRecentTasksRequest__Output } from './blockx/worker/v1/ListRecentTasksRequest.js';
import type { ListRecentTasksResponse as _blockx_worker_v1_ListRecentTasksResponse, ListRecentTasksResponse__Output as _blockx_worker_v1_ListRecentTasksResponse__Output } from './blockx/worker/v1/ListRecentTasksResponse.js';
import type { RecentTask as _blockx_worker_v1_RecentTask, RecentTask__Output as _blockx_worker_v1_RecentTask__Output } from './blockx/worker/v1/RecentTask.js';
import type { ServedPlugin as _blockx_worker_v1_ServedPlugin, ServedPlugin__Output as _blockx_worker_v1_ServedPlugin__Output } from './blockx/worker/v1/ServedPlugin.js';
import type { WorkerAdminServiceClient as _blockx_worker_v1_WorkerAdminServiceClient, WorkerAdminServiceDefinition as _blockx_worker_v1_WorkerAdminServiceDefinition } from './blockx/worker/v1/WorkerAdminService.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  blockx: {
    worker: {
      v1: {
        DescribeServingRequest: MessageTypeDefinition<_blockx_worker_v1_DescribeServingRequest, _blockx_worker_v1_DescribeServingRequest__Output>
        DescribeServingResponse: MessageTypeDefinition<_blockx_worker_v1_DescribeServingResponse, _blockx_worker_v1_DescribeServingResponse__Output>
        ListRecentTasksRequest: MessageTypeDefinition<_blockx_worker_v1_ListRecentTasksRequest, _blockx_worker_v1_ListRecentTasksRequest__Output>
        ListRecentTasksResponse: MessageTypeDefinition<_blockx_worker_v1_ListRecentTasksResponse, _blockx_worker_v1_ListRecentTasksResponse__Output>
        RecentTask: MessageTypeDefinition<_blockx_worker_v1_RecentTask, _blockx_worker_v1_RecentTask__Output>
        ServedPlugin: MessageTypeDefinition<_blockx_worker_v1_ServedPlugin, _blockx_worker_v1_ServedPlugin__Output>
        WorkerAdminService: SubtypeConstructor<typeof grpc.Client, _blockx_worker_v1_WorkerAdminServiceClient> & { service: _blockx_worker_v1_WorkerAdminServiceDefinition }
      }
    }
  }
}

