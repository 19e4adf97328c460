// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { GetTaskResultRequest as _blockx_worker_v1_GetTaskResultRequest, GetTaskResultRequest__Output as _blockx_worker_v1_GetTaskResultRequest__Output } from '../../../blockx/worker/v1/GetTaskResultRequest.js';
import type { GetTaskResultResponse as _blockx_worker_v1_GetTaskResultResponse, GetTaskResultResponse__Output as _blockx_worker_v1_GetTaskResultResponse__Output } from '../../../blockx/worker/v1/GetTaskResultResponse.js';
import type { RequestTaskSlotRequest as _blockx_worker_v1_RequestTaskSlotRequest, RequestTaskSlotRequest__Output as _blockx_worker_v1_RequestTaskSlotRequest__Output } from '../../../blockx/worker/v1/RequestTaskSlotRequest.js';
import type { RequestTaskSlotResponse as _blockx_worker_v1_RequestTaskSlotResponse, RequestTaskSlotResponse__Output as _blockx_worker_v1_RequestTaskSlotResponse__Output } from '../../../blockx/worker/v1/RequestTaskSlotResponse.js';
import type { RequestTaskSlotsRequest as _blockx_worker_v1_RequestTaskSlotsRequest, RequestTaskSlotsRequest__Output as _blockx_worker_v1_RequestTaskSlotsRequest__Output } from '../../../blockx/worker/v1/RequestTaskSlotsRequest.js';
import type { RequestTaskSlotsResponse as _blockx_worker_v1_RequestTaskSlotsResponse, RequestTaskSlotsResponse__Output as _blockx_worker_v1_RequestTaskSlotsResponse__Output } from '../../../blockx/worker/v1/RequestTaskSlotsResponse.js';
import type { RunTasksRequest as _blockx_worker_v1_RunTasksRequest, RunTasksRequest__Output as _blockx_worker_v1_RunTasksRequest__Output } from '../../../blockx/worker/v1/RunTasksRequest.js';
import type { RunTasksResponse as _blockx_worker_v1_RunTasksResponse, RunTasksResponse__Output as _blockx_worker_v1_RunTasksResponse__Output } from '../../../blockx/worker/v1/RunTasksResponse.js';
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
   * RequestTaskSlot for many task ids in one call: one SlotGrant per requested id, in request order,
   * each with its own outcome (a refused id never fails the call). At most 10,000 ids per call.
   */
  RequestTaskSlots(argument: _blockx_worker_v1_RequestTaskSlotsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_worker_v1_RequestTaskSlotsResponse__Output>): grpc.ClientUnaryCall;
  RequestTaskSlots(argument: _blockx_worker_v1_RequestTaskSlotsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_blockx_worker_v1_RequestTaskSlotsResponse__Output>): grpc.ClientUnaryCall;
  RequestTaskSlots(argument: _blockx_worker_v1_RequestTaskSlotsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_worker_v1_RequestTaskSlotsResponse__Output>): grpc.ClientUnaryCall;
  RequestTaskSlots(argument: _blockx_worker_v1_RequestTaskSlotsRequest, callback: grpc.requestCallback<_blockx_worker_v1_RequestTaskSlotsResponse__Output>): grpc.ClientUnaryCall;
  /**
   * RequestTaskSlot for many task ids in one call: one SlotGrant per requested id, in request order,
   * each with its own outcome (a refused id never fails the call). At most 10,000 ids per call.
   */
  requestTaskSlots(argument: _blockx_worker_v1_RequestTaskSlotsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_worker_v1_RequestTaskSlotsResponse__Output>): grpc.ClientUnaryCall;
  requestTaskSlots(argument: _blockx_worker_v1_RequestTaskSlotsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_blockx_worker_v1_RequestTaskSlotsResponse__Output>): grpc.ClientUnaryCall;
  requestTaskSlots(argument: _blockx_worker_v1_RequestTaskSlotsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_blockx_worker_v1_RequestTaskSlotsResponse__Output>): grpc.ClientUnaryCall;
  requestTaskSlots(argument: _blockx_worker_v1_RequestTaskSlotsRequest, callback: grpc.requestCallback<_blockx_worker_v1_RequestTaskSlotsResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Submit and follow many tasks on one bidirectional stream. The client sends batches of
   * {task, slot_id}; the Worker answers each task's admission (the SubmitTask outcome, per task) and
   * later its terminal TaskUpdate, both batched on a short flush window. The Worker grants credits: the
   * client keeps at most that many tasks in flight on the stream (sent and not yet terminal). An open
   * stream counts as a watch of its running tasks; when it closes, the Watch-disconnect grace applies.
   */
  RunTasks(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_blockx_worker_v1_RunTasksRequest, _blockx_worker_v1_RunTasksResponse__Output>;
  RunTasks(options?: grpc.CallOptions): grpc.ClientDuplexStream<_blockx_worker_v1_RunTasksRequest, _blockx_worker_v1_RunTasksResponse__Output>;
  /**
   * Submit and follow many tasks on one bidirectional stream. The client sends batches of
   * {task, slot_id}; the Worker answers each task's admission (the SubmitTask outcome, per task) and
   * later its terminal TaskUpdate, both batched on a short flush window. The Worker grants credits: the
   * client keeps at most that many tasks in flight on the stream (sent and not yet terminal). An open
   * stream counts as a watch of its running tasks; when it closes, the Watch-disconnect grace applies.
   */
  runTasks(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_blockx_worker_v1_RunTasksRequest, _blockx_worker_v1_RunTasksResponse__Output>;
  runTasks(options?: grpc.CallOptions): grpc.ClientDuplexStream<_blockx_worker_v1_RunTasksRequest, _blockx_worker_v1_RunTasksResponse__Output>;
  
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
   * RequestTaskSlot for many task ids in one call: one SlotGrant per requested id, in request order,
   * each with its own outcome (a refused id never fails the call). At most 10,000 ids per call.
   */
  RequestTaskSlots: grpc.handleUnaryCall<_blockx_worker_v1_RequestTaskSlotsRequest__Output, _blockx_worker_v1_RequestTaskSlotsResponse>;
  
  /**
   * Submit and follow many tasks on one bidirectional stream. The client sends batches of
   * {task, slot_id}; the Worker answers each task's admission (the SubmitTask outcome, per task) and
   * later its terminal TaskUpdate, both batched on a short flush window. The Worker grants credits: the
   * client keeps at most that many tasks in flight on the stream (sent and not yet terminal). An open
   * stream counts as a watch of its running tasks; when it closes, the Watch-disconnect grace applies.
   */
  RunTasks: grpc.handleBidiStreamingCall<_blockx_worker_v1_RunTasksRequest__Output, _blockx_worker_v1_RunTasksResponse>;
  
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
  RequestTaskSlots: MethodDefinition<_blockx_worker_v1_RequestTaskSlotsRequest, _blockx_worker_v1_RequestTaskSlotsResponse, _blockx_worker_v1_RequestTaskSlotsRequest__Output, _blockx_worker_v1_RequestTaskSlotsResponse__Output>
  RunTasks: MethodDefinition<_blockx_worker_v1_RunTasksRequest, _blockx_worker_v1_RunTasksResponse, _blockx_worker_v1_RunTasksRequest__Output, _blockx_worker_v1_RunTasksResponse__Output>
  SubmitTask: MethodDefinition<_blockx_worker_v1_SubmitTaskRequest, _blockx_worker_v1_SubmitTaskResponse, _blockx_worker_v1_SubmitTaskRequest__Output, _blockx_worker_v1_SubmitTaskResponse__Output>
  WatchTasks: MethodDefinition<_blockx_worker_v1_WatchTasksRequest, _blockx_worker_v1_TaskUpdate, _blockx_worker_v1_WatchTasksRequest__Output, _blockx_worker_v1_TaskUpdate__Output>
}
