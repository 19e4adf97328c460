// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { CoordinatorAdminServiceClient as _blockx_coordinator_v1_CoordinatorAdminServiceClient, CoordinatorAdminServiceDefinition as _blockx_coordinator_v1_CoordinatorAdminServiceDefinition } from './blockx/coordinator/v1/CoordinatorAdminService.js';
import type { CoordinatorLimits as _blockx_coordinator_v1_CoordinatorLimits, CoordinatorLimits__Output as _blockx_coordinator_v1_CoordinatorLimits__Output } from './blockx/coordinator/v1/CoordinatorLimits.js';
import type { DeployFunctionsRequest as _blockx_coordinator_v1_DeployFunctionsRequest, DeployFunctionsRequest__Output as _blockx_coordinator_v1_DeployFunctionsRequest__Output } from './blockx/coordinator/v1/DeployFunctionsRequest.js';
import type { FunctionsChange as _blockx_coordinator_v1_FunctionsChange, FunctionsChange__Output as _blockx_coordinator_v1_FunctionsChange__Output } from './blockx/coordinator/v1/FunctionsChange.js';
import type { FunctionsVersion as _blockx_coordinator_v1_FunctionsVersion, FunctionsVersion__Output as _blockx_coordinator_v1_FunctionsVersion__Output } from './blockx/coordinator/v1/FunctionsVersion.js';
import type { GetClusterStatusRequest as _blockx_coordinator_v1_GetClusterStatusRequest, GetClusterStatusRequest__Output as _blockx_coordinator_v1_GetClusterStatusRequest__Output } from './blockx/coordinator/v1/GetClusterStatusRequest.js';
import type { GetClusterStatusResponse as _blockx_coordinator_v1_GetClusterStatusResponse, GetClusterStatusResponse__Output as _blockx_coordinator_v1_GetClusterStatusResponse__Output } from './blockx/coordinator/v1/GetClusterStatusResponse.js';
import type { ListFunctionsRequest as _blockx_coordinator_v1_ListFunctionsRequest, ListFunctionsRequest__Output as _blockx_coordinator_v1_ListFunctionsRequest__Output } from './blockx/coordinator/v1/ListFunctionsRequest.js';
import type { ListFunctionsResponse as _blockx_coordinator_v1_ListFunctionsResponse, ListFunctionsResponse__Output as _blockx_coordinator_v1_ListFunctionsResponse__Output } from './blockx/coordinator/v1/ListFunctionsResponse.js';
import type { UseFunctionsRequest as _blockx_coordinator_v1_UseFunctionsRequest, UseFunctionsRequest__Output as _blockx_coordinator_v1_UseFunctionsRequest__Output } from './blockx/coordinator/v1/UseFunctionsRequest.js';
import type { WorkerStatus as _blockx_coordinator_v1_WorkerStatus, WorkerStatus__Output as _blockx_coordinator_v1_WorkerStatus__Output } from './blockx/coordinator/v1/WorkerStatus.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  blockx: {
    coordinator: {
      v1: {
        CoordinatorAdminService: SubtypeConstructor<typeof grpc.Client, _blockx_coordinator_v1_CoordinatorAdminServiceClient> & { service: _blockx_coordinator_v1_CoordinatorAdminServiceDefinition }
        CoordinatorLimits: MessageTypeDefinition<_blockx_coordinator_v1_CoordinatorLimits, _blockx_coordinator_v1_CoordinatorLimits__Output>
        DeployFunctionsRequest: MessageTypeDefinition<_blockx_coordinator_v1_DeployFunctionsRequest, _blockx_coordinator_v1_DeployFunctionsRequest__Output>
        FunctionsChange: MessageTypeDefinition<_blockx_coordinator_v1_FunctionsChange, _blockx_coordinator_v1_FunctionsChange__Output>
        FunctionsVersion: MessageTypeDefinition<_blockx_coordinator_v1_FunctionsVersion, _blockx_coordinator_v1_FunctionsVersion__Output>
        GetClusterStatusRequest: MessageTypeDefinition<_blockx_coordinator_v1_GetClusterStatusRequest, _blockx_coordinator_v1_GetClusterStatusRequest__Output>
        GetClusterStatusResponse: MessageTypeDefinition<_blockx_coordinator_v1_GetClusterStatusResponse, _blockx_coordinator_v1_GetClusterStatusResponse__Output>
        ListFunctionsRequest: MessageTypeDefinition<_blockx_coordinator_v1_ListFunctionsRequest, _blockx_coordinator_v1_ListFunctionsRequest__Output>
        ListFunctionsResponse: MessageTypeDefinition<_blockx_coordinator_v1_ListFunctionsResponse, _blockx_coordinator_v1_ListFunctionsResponse__Output>
        UseFunctionsRequest: MessageTypeDefinition<_blockx_coordinator_v1_UseFunctionsRequest, _blockx_coordinator_v1_UseFunctionsRequest__Output>
        WorkerStatus: MessageTypeDefinition<_blockx_coordinator_v1_WorkerStatus, _blockx_coordinator_v1_WorkerStatus__Output>
      }
    }
  }
}

