// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { CoordinatorJobsServiceClient as _blockx_coordinator_v1_CoordinatorJobsServiceClient, CoordinatorJobsServiceDefinition as _blockx_coordinator_v1_CoordinatorJobsServiceDefinition } from './blockx/coordinator/v1/CoordinatorJobsService.js';
import type { ReportBackfillProgressRequest as _blockx_coordinator_v1_ReportBackfillProgressRequest, ReportBackfillProgressRequest__Output as _blockx_coordinator_v1_ReportBackfillProgressRequest__Output } from './blockx/coordinator/v1/ReportBackfillProgressRequest.js';
import type { ReportBackfillProgressResponse as _blockx_coordinator_v1_ReportBackfillProgressResponse, ReportBackfillProgressResponse__Output as _blockx_coordinator_v1_ReportBackfillProgressResponse__Output } from './blockx/coordinator/v1/ReportBackfillProgressResponse.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  blockx: {
    coordinator: {
      v1: {
        CoordinatorJobsService: SubtypeConstructor<typeof grpc.Client, _blockx_coordinator_v1_CoordinatorJobsServiceClient> & { service: _blockx_coordinator_v1_CoordinatorJobsServiceDefinition }
        ReportBackfillProgressRequest: MessageTypeDefinition<_blockx_coordinator_v1_ReportBackfillProgressRequest, _blockx_coordinator_v1_ReportBackfillProgressRequest__Output>
        ReportBackfillProgressResponse: MessageTypeDefinition<_blockx_coordinator_v1_ReportBackfillProgressResponse, _blockx_coordinator_v1_ReportBackfillProgressResponse__Output>
      }
    }
  }
}

