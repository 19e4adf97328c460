// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { ExecuteResult as _blockx_worker_v1_ExecuteResult, ExecuteResult__Output as _blockx_worker_v1_ExecuteResult__Output } from './blockx/worker/v1/ExecuteResult.js';
import type { GetTaskResultRequest as _blockx_worker_v1_GetTaskResultRequest, GetTaskResultRequest__Output as _blockx_worker_v1_GetTaskResultRequest__Output } from './blockx/worker/v1/GetTaskResultRequest.js';
import type { GetTaskResultResponse as _blockx_worker_v1_GetTaskResultResponse, GetTaskResultResponse__Output as _blockx_worker_v1_GetTaskResultResponse__Output } from './blockx/worker/v1/GetTaskResultResponse.js';
import type { PluginConfig as _blockx_worker_v1_PluginConfig, PluginConfig__Output as _blockx_worker_v1_PluginConfig__Output } from './blockx/worker/v1/PluginConfig.js';
import type { PluginResult as _blockx_worker_v1_PluginResult, PluginResult__Output as _blockx_worker_v1_PluginResult__Output } from './blockx/worker/v1/PluginResult.js';
import type { RequestTaskSlotRequest as _blockx_worker_v1_RequestTaskSlotRequest, RequestTaskSlotRequest__Output as _blockx_worker_v1_RequestTaskSlotRequest__Output } from './blockx/worker/v1/RequestTaskSlotRequest.js';
import type { RequestTaskSlotResponse as _blockx_worker_v1_RequestTaskSlotResponse, RequestTaskSlotResponse__Output as _blockx_worker_v1_RequestTaskSlotResponse__Output } from './blockx/worker/v1/RequestTaskSlotResponse.js';
import type { RequestTaskSlotsRequest as _blockx_worker_v1_RequestTaskSlotsRequest, RequestTaskSlotsRequest__Output as _blockx_worker_v1_RequestTaskSlotsRequest__Output } from './blockx/worker/v1/RequestTaskSlotsRequest.js';
import type { RequestTaskSlotsResponse as _blockx_worker_v1_RequestTaskSlotsResponse, RequestTaskSlotsResponse__Output as _blockx_worker_v1_RequestTaskSlotsResponse__Output } from './blockx/worker/v1/RequestTaskSlotsResponse.js';
import type { RunTasksRequest as _blockx_worker_v1_RunTasksRequest, RunTasksRequest__Output as _blockx_worker_v1_RunTasksRequest__Output } from './blockx/worker/v1/RunTasksRequest.js';
import type { RunTasksResponse as _blockx_worker_v1_RunTasksResponse, RunTasksResponse__Output as _blockx_worker_v1_RunTasksResponse__Output } from './blockx/worker/v1/RunTasksResponse.js';
import type { SlotGrant as _blockx_worker_v1_SlotGrant, SlotGrant__Output as _blockx_worker_v1_SlotGrant__Output } from './blockx/worker/v1/SlotGrant.js';
import type { SubmitTaskRequest as _blockx_worker_v1_SubmitTaskRequest, SubmitTaskRequest__Output as _blockx_worker_v1_SubmitTaskRequest__Output } from './blockx/worker/v1/SubmitTaskRequest.js';
import type { SubmitTaskResponse as _blockx_worker_v1_SubmitTaskResponse, SubmitTaskResponse__Output as _blockx_worker_v1_SubmitTaskResponse__Output } from './blockx/worker/v1/SubmitTaskResponse.js';
import type { TaskAdmission as _blockx_worker_v1_TaskAdmission, TaskAdmission__Output as _blockx_worker_v1_TaskAdmission__Output } from './blockx/worker/v1/TaskAdmission.js';
import type { TaskError as _blockx_worker_v1_TaskError, TaskError__Output as _blockx_worker_v1_TaskError__Output } from './blockx/worker/v1/TaskError.js';
import type { TaskInput as _blockx_worker_v1_TaskInput, TaskInput__Output as _blockx_worker_v1_TaskInput__Output } from './blockx/worker/v1/TaskInput.js';
import type { TaskResult as _blockx_worker_v1_TaskResult, TaskResult__Output as _blockx_worker_v1_TaskResult__Output } from './blockx/worker/v1/TaskResult.js';
import type { TaskSubmission as _blockx_worker_v1_TaskSubmission, TaskSubmission__Output as _blockx_worker_v1_TaskSubmission__Output } from './blockx/worker/v1/TaskSubmission.js';
import type { TaskUpdate as _blockx_worker_v1_TaskUpdate, TaskUpdate__Output as _blockx_worker_v1_TaskUpdate__Output } from './blockx/worker/v1/TaskUpdate.js';
import type { WatchTasksRequest as _blockx_worker_v1_WatchTasksRequest, WatchTasksRequest__Output as _blockx_worker_v1_WatchTasksRequest__Output } from './blockx/worker/v1/WatchTasksRequest.js';
import type { WorkerCapacity as _blockx_worker_v1_WorkerCapacity, WorkerCapacity__Output as _blockx_worker_v1_WorkerCapacity__Output } from './blockx/worker/v1/WorkerCapacity.js';
import type { WorkerServiceClient as _blockx_worker_v1_WorkerServiceClient, WorkerServiceDefinition as _blockx_worker_v1_WorkerServiceDefinition } from './blockx/worker/v1/WorkerService.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  blockx: {
    worker: {
      v1: {
        ExecuteResult: MessageTypeDefinition<_blockx_worker_v1_ExecuteResult, _blockx_worker_v1_ExecuteResult__Output>
        GetTaskResultRequest: MessageTypeDefinition<_blockx_worker_v1_GetTaskResultRequest, _blockx_worker_v1_GetTaskResultRequest__Output>
        GetTaskResultResponse: MessageTypeDefinition<_blockx_worker_v1_GetTaskResultResponse, _blockx_worker_v1_GetTaskResultResponse__Output>
        PluginConfig: MessageTypeDefinition<_blockx_worker_v1_PluginConfig, _blockx_worker_v1_PluginConfig__Output>
        PluginResult: MessageTypeDefinition<_blockx_worker_v1_PluginResult, _blockx_worker_v1_PluginResult__Output>
        RequestTaskSlotRequest: MessageTypeDefinition<_blockx_worker_v1_RequestTaskSlotRequest, _blockx_worker_v1_RequestTaskSlotRequest__Output>
        RequestTaskSlotResponse: MessageTypeDefinition<_blockx_worker_v1_RequestTaskSlotResponse, _blockx_worker_v1_RequestTaskSlotResponse__Output>
        RequestTaskSlotsRequest: MessageTypeDefinition<_blockx_worker_v1_RequestTaskSlotsRequest, _blockx_worker_v1_RequestTaskSlotsRequest__Output>
        RequestTaskSlotsResponse: MessageTypeDefinition<_blockx_worker_v1_RequestTaskSlotsResponse, _blockx_worker_v1_RequestTaskSlotsResponse__Output>
        RunTasksRequest: MessageTypeDefinition<_blockx_worker_v1_RunTasksRequest, _blockx_worker_v1_RunTasksRequest__Output>
        RunTasksResponse: MessageTypeDefinition<_blockx_worker_v1_RunTasksResponse, _blockx_worker_v1_RunTasksResponse__Output>
        SlotGrant: MessageTypeDefinition<_blockx_worker_v1_SlotGrant, _blockx_worker_v1_SlotGrant__Output>
        SubmitTaskRequest: MessageTypeDefinition<_blockx_worker_v1_SubmitTaskRequest, _blockx_worker_v1_SubmitTaskRequest__Output>
        SubmitTaskResponse: MessageTypeDefinition<_blockx_worker_v1_SubmitTaskResponse, _blockx_worker_v1_SubmitTaskResponse__Output>
        TaskAdmission: MessageTypeDefinition<_blockx_worker_v1_TaskAdmission, _blockx_worker_v1_TaskAdmission__Output>
        TaskError: MessageTypeDefinition<_blockx_worker_v1_TaskError, _blockx_worker_v1_TaskError__Output>
        TaskInput: MessageTypeDefinition<_blockx_worker_v1_TaskInput, _blockx_worker_v1_TaskInput__Output>
        TaskResult: MessageTypeDefinition<_blockx_worker_v1_TaskResult, _blockx_worker_v1_TaskResult__Output>
        TaskState: EnumTypeDefinition
        TaskSubmission: MessageTypeDefinition<_blockx_worker_v1_TaskSubmission, _blockx_worker_v1_TaskSubmission__Output>
        TaskUpdate: MessageTypeDefinition<_blockx_worker_v1_TaskUpdate, _blockx_worker_v1_TaskUpdate__Output>
        WatchTasksRequest: MessageTypeDefinition<_blockx_worker_v1_WatchTasksRequest, _blockx_worker_v1_WatchTasksRequest__Output>
        WorkerCapacity: MessageTypeDefinition<_blockx_worker_v1_WorkerCapacity, _blockx_worker_v1_WorkerCapacity__Output>
        WorkerService: SubtypeConstructor<typeof grpc.Client, _blockx_worker_v1_WorkerServiceClient> & { service: _blockx_worker_v1_WorkerServiceDefinition }
      }
    }
  }
}

