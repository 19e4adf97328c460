// A client's task as the Worker's TaskInput: a fresh UUID when it has no id, no timeout = the Worker's
// default (0), no writer = none. The one place both the unary and the batched path build it.
import { randomUUID } from 'node:crypto';
import type { TaskInput } from '../grpc/domain-types.js';
import type { ClientTaskInput } from './types.js';

export function taskInputOf(task: ClientTaskInput): TaskInput {
  return {
    taskId: task.taskId ?? randomUUID(),
    functionCallConfig: task.functionCallConfig,
    ...(task.resultHandler ? { resultHandler: task.resultHandler } : {}),
    taskTimeoutMs: task.taskTimeoutMs ?? 0,
  };
}
