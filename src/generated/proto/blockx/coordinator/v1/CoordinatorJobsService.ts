// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/coordinator/v1/jobs.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { ReportBackfillProgressRequest as _blockx_coordinator_v1_ReportBackfillProgressRequest, ReportBackfillProgressRequest__Output as _blockx_coordinator_v1_ReportBackfillProgressRequest__Output } from '../../../blockx/coordinator/v1/ReportBackfillProgressRequest.js';
import type { ReportBackfillProgressResponse as _blockx_coordinator_v1_ReportBackfillProgressResponse, ReportBackfillProgressResponse__Output as _blockx_coordinator_v1_ReportBackfillProgressResponse__Output } from '../../../blockx/coordinator/v1/ReportBackfillProgressResponse.js';

export interface CoordinatorJobsServiceClient extends grpc.Client {
  /**
   * One job's progress, sent by its client about once a second and once at the end. Refused with
   * INVALID_ARGUMENT when a field is out of bounds, RESOURCE_EXHAUSTED when the Coordinator already
   * tracks its maximum number of jobs (256) and this one is new.
   */
  ReportBackfillProgress(argument: _blockx_coordinator_v1_ReportBackfillProgressRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_ReportBackfillProgressResponse__Output>): grpc.ClientUnaryCall;
  ReportBackfillProgress(argument: _blockx_coordinator_v1_ReportBackfillProgressRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_blockx_coordinator_v1_ReportBackfillProgressResponse__Output>): grpc.ClientUnaryCall;
  ReportBackfillProgress(argument: _blockx_coordinator_v1_ReportBackfillProgressRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_ReportBackfillProgressResponse__Output>): grpc.ClientUnaryCall;
  ReportBackfillProgress(argument: _blockx_coordinator_v1_ReportBackfillProgressRequest, callback: grpc.requestCallback<_blockx_coordinator_v1_ReportBackfillProgressResponse__Output>): grpc.ClientUnaryCall;
  /**
   * One job's progress, sent by its client about once a second and once at the end. Refused with
   * INVALID_ARGUMENT when a field is out of bounds, RESOURCE_EXHAUSTED when the Coordinator already
   * tracks its maximum number of jobs (256) and this one is new.
   */
  reportBackfillProgress(argument: _blockx_coordinator_v1_ReportBackfillProgressRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_ReportBackfillProgressResponse__Output>): grpc.ClientUnaryCall;
  reportBackfillProgress(argument: _blockx_coordinator_v1_ReportBackfillProgressRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_blockx_coordinator_v1_ReportBackfillProgressResponse__Output>): grpc.ClientUnaryCall;
  reportBackfillProgress(argument: _blockx_coordinator_v1_ReportBackfillProgressRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_coordinator_v1_ReportBackfillProgressResponse__Output>): grpc.ClientUnaryCall;
  reportBackfillProgress(argument: _blockx_coordinator_v1_ReportBackfillProgressRequest, callback: grpc.requestCallback<_blockx_coordinator_v1_ReportBackfillProgressResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface CoordinatorJobsServiceHandlers extends grpc.UntypedServiceImplementation {
  /**
   * One job's progress, sent by its client about once a second and once at the end. Refused with
   * INVALID_ARGUMENT when a field is out of bounds, RESOURCE_EXHAUSTED when the Coordinator already
   * tracks its maximum number of jobs (256) and this one is new.
   */
  ReportBackfillProgress: grpc.handleUnaryCall<_blockx_coordinator_v1_ReportBackfillProgressRequest__Output, _blockx_coordinator_v1_ReportBackfillProgressResponse>;
  
}

export interface CoordinatorJobsServiceDefinition extends grpc.ServiceDefinition {
  ReportBackfillProgress: MethodDefinition<_blockx_coordinator_v1_ReportBackfillProgressRequest, _blockx_coordinator_v1_ReportBackfillProgressResponse, _blockx_coordinator_v1_ReportBackfillProgressRequest__Output, _blockx_coordinator_v1_ReportBackfillProgressResponse__Output>
}
