// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { GetTaskResultRequest as _blockx_worker_v1_GetTaskResultRequest, GetTaskResultRequest__Output as _blockx_worker_v1_GetTaskResultRequest__Output } from '../../../blockx/worker/v1/GetTaskResultRequest.js';
import type { GetTaskResultResponse as _blockx_worker_v1_GetTaskResultResponse, GetTaskResultResponse__Output as _blockx_worker_v1_GetTaskResultResponse__Output } from '../../../blockx/worker/v1/GetTaskResultResponse.js';
import type { RequestTaskSlotRequest as _blockx_worker_v1_RequestTaskSlotRequest, RequestTaskSlotRequest__Output as _blockx_worker_v1_RequestTaskSlotRequest__Output } from '../../../blockx/worker/v1/RequestTaskSlotRequest.js';
import type { RequestTaskSlotResponse as _blockx_worker_v1_RequestTaskSlotResponse, RequestTaskSlotResponse__Output as _blockx_worker_v1_RequestTaskSlotResponse__Output } from '../../../blockx/worker/v1/RequestTaskSlotResponse.js';
import type { SubmitTaskRequest as _blockx_worker_v1_SubmitTaskRequest, SubmitTaskRequest__Output as _blockx_worker_v1_SubmitTaskRequest__Output } from '../../../blockx/worker/v1/SubmitTaskRequest.js';
import type { SubmitTaskResponse as _blockx_worker_v1_SubmitTaskResponse, SubmitTaskResponse__Output as _blockx_worker_v1_SubmitTaskResponse__Output } from '../../../blockx/worker/v1/SubmitTaskResponse.js';
import type { TaskUpdate as _blockx_worker_v1_TaskUpdate, TaskUpdate__Output as _blockx_worker_v1_TaskUpdate__Output } from '../../../blockx/worker/v1/TaskUpdate.js';
import type { WatchTasksRequest as _blockx_worker_v1_WatchTasksRequest, WatchTasksRequest__Output as _blockx_worker_v1_WatchTasksRequest__Output } from '../../../blockx/worker/v1/WatchTasksRequest.js';

export interface WorkerServiceClient extends grpc.Client {
  /**
   * Read the current state of a task and, once terminal and still retained, its result.
   */
  GetTaskResult(argument: _blockx_worker_v1_GetTaskResultRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_worker_v1_GetTaskResultResponse__Output>): grpc.ClientUnaryCall;
  GetTaskResult(argument: _blockx_worker_v1_GetTaskResultRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_blockx_worker_v1_GetTaskResultResponse__Output>): grpc.ClientUnaryCall;
  GetTaskResult(argument: _blockx_worker_v1_GetTaskResultRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_worker_v1_GetTaskResultResponse__Output>): grpc.ClientUnaryCall;
  GetTaskResult(argument: _blockx_worker_v1_GetTaskResultRequest, callback: grpc.requestCallback<_blockx_worker_v1_GetTaskResultResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Read the current state of a task and, once terminal and still retained, its result.
   */
  getTaskResult(argument: _blockx_worker_v1_GetTaskResultRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_worker_v1_GetTaskResultResponse__Output>): grpc.ClientUnaryCall;
  getTaskResult(argument: _blockx_worker_v1_GetTaskResultRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_blockx_worker_v1_GetTaskResultResponse__Output>): grpc.ClientUnaryCall;
  getTaskResult(argument: _blockx_worker_v1_GetTaskResultRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_worker_v1_GetTaskResultResponse__Output>): grpc.ClientUnaryCall;
  getTaskResult(argument: _blockx_worker_v1_GetTaskResultRequest, callback: grpc.requestCallback<_blockx_worker_v1_GetTaskResultResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Reserve a slot for a task without running it; idempotent per task_id while the slot is held.
   */
  RequestTaskSlot(argument: _blockx_worker_v1_RequestTaskSlotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_worker_v1_RequestTaskSlotResponse__Output>): grpc.ClientUnaryCall;
  RequestTaskSlot(argument: _blockx_worker_v1_RequestTaskSlotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_blockx_worker_v1_RequestTaskSlotResponse__Output>): grpc.ClientUnaryCall;
  RequestTaskSlot(argument: _blockx_worker_v1_RequestTaskSlotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_worker_v1_RequestTaskSlotResponse__Output>): grpc.ClientUnaryCall;
  RequestTaskSlot(argument: _blockx_worker_v1_RequestTaskSlotRequest, callback: grpc.requestCallback<_blockx_worker_v1_RequestTaskSlotResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Reserve a slot for a task without running it; idempotent per task_id while the slot is held.
   */
  requestTaskSlot(argument: _blockx_worker_v1_RequestTaskSlotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_worker_v1_RequestTaskSlotResponse__Output>): grpc.ClientUnaryCall;
  requestTaskSlot(argument: _blockx_worker_v1_RequestTaskSlotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_blockx_worker_v1_RequestTaskSlotResponse__Output>): grpc.ClientUnaryCall;
  requestTaskSlot(argument: _blockx_worker_v1_RequestTaskSlotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_worker_v1_RequestTaskSlotResponse__Output>): grpc.ClientUnaryCall;
  requestTaskSlot(argument: _blockx_worker_v1_RequestTaskSlotRequest, callback: grpc.requestCallback<_blockx_worker_v1_RequestTaskSlotResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Submit a task into a reserved slot (or reserve one inline when slot_id is empty) and start it.
   */
  SubmitTask(argument: _blockx_worker_v1_SubmitTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_worker_v1_SubmitTaskResponse__Output>): grpc.ClientUnaryCall;
  SubmitTask(argument: _blockx_worker_v1_SubmitTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_blockx_worker_v1_SubmitTaskResponse__Output>): grpc.ClientUnaryCall;
  SubmitTask(argument: _blockx_worker_v1_SubmitTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_worker_v1_SubmitTaskResponse__Output>): grpc.ClientUnaryCall;
  SubmitTask(argument: _blockx_worker_v1_SubmitTaskRequest, callback: grpc.requestCallback<_blockx_worker_v1_SubmitTaskResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Submit a task into a reserved slot (or reserve one inline when slot_id is empty) and start it.
   */
  submitTask(argument: _blockx_worker_v1_SubmitTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_worker_v1_SubmitTaskResponse__Output>): grpc.ClientUnaryCall;
  submitTask(argument: _blockx_worker_v1_SubmitTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_blockx_worker_v1_SubmitTaskResponse__Output>): grpc.ClientUnaryCall;
  submitTask(argument: _blockx_worker_v1_SubmitTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_worker_v1_SubmitTaskResponse__Output>): grpc.ClientUnaryCall;
  submitTask(argument: _blockx_worker_v1_SubmitTaskRequest, callback: grpc.requestCallback<_blockx_worker_v1_SubmitTaskResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Stream a snapshot per task, then one terminal update per task; closes when all are terminal.
   */
  WatchTasks(argument: _blockx_worker_v1_WatchTasksRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_blockx_worker_v1_TaskUpdate__Output>;
  WatchTasks(argument: _blockx_worker_v1_WatchTasksRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_blockx_worker_v1_TaskUpdate__Output>;
  /**
   * Stream a snapshot per task, then one terminal update per task; closes when all are terminal.
   */
  watchTasks(argument: _blockx_worker_v1_WatchTasksRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_blockx_worker_v1_TaskUpdate__Output>;
  watchTasks(argument: _blockx_worker_v1_WatchTasksRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_blockx_worker_v1_TaskUpdate__Output>;
  
}

export interface WorkerServiceHandlers extends grpc.UntypedServiceImplementation {
  /**
   * Read the current state of a task and, once terminal and still retained, its result.
   */
  GetTaskResult: grpc.handleUnaryCall<_blockx_worker_v1_GetTaskResultRequest__Output, _blockx_worker_v1_GetTaskResultResponse>;
  
  /**
   * Reserve a slot for a task without running it; idempotent per task_id while the slot is held.
   */
  RequestTaskSlot: grpc.handleUnaryCall<_blockx_worker_v1_RequestTaskSlotRequest__Output, _blockx_worker_v1_RequestTaskSlotResponse>;
  
  /**
   * Submit a task into a reserved slot (or reserve one inline when slot_id is empty) and start it.
   */
  SubmitTask: grpc.handleUnaryCall<_blockx_worker_v1_SubmitTaskRequest__Output, _blockx_worker_v1_SubmitTaskResponse>;
  
  /**
   * Stream a snapshot per task, then one terminal update per task; closes when all are terminal.
   */
  WatchTasks: grpc.handleServerStreamingCall<_blockx_worker_v1_WatchTasksRequest__Output, _blockx_worker_v1_TaskUpdate>;
  
}

export interface WorkerServiceDefinition extends grpc.ServiceDefinition {
  GetTaskResult: MethodDefinition<_blockx_worker_v1_GetTaskResultRequest, _blockx_worker_v1_GetTaskResultResponse, _blockx_worker_v1_GetTaskResultRequest__Output, _blockx_worker_v1_GetTaskResultResponse__Output>
  RequestTaskSlot: MethodDefinition<_blockx_worker_v1_RequestTaskSlotRequest, _blockx_worker_v1_RequestTaskSlotResponse, _blockx_worker_v1_RequestTaskSlotRequest__Output, _blockx_worker_v1_RequestTaskSlotResponse__Output>
  SubmitTask: MethodDefinition<_blockx_worker_v1_SubmitTaskRequest, _blockx_worker_v1_SubmitTaskResponse, _blockx_worker_v1_SubmitTaskRequest__Output, _blockx_worker_v1_SubmitTaskResponse__Output>
  WatchTasks: MethodDefinition<_blockx_worker_v1_WatchTasksRequest, _blockx_worker_v1_TaskUpdate, _blockx_worker_v1_WatchTasksRequest__Output, _blockx_worker_v1_TaskUpdate__Output>
}
