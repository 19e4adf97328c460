// Admission: RequestTaskSlot and SubmitTask, the two steps of the worker protocol (docs/task-lifecycle.md
// § The unary RPCs). Both validate everything before touching state, so a thrown WorkerAdmissionError always
// leaves the core exactly as it was.
//
// Order of checks, for both: arguments (InvalidArgument) → serving (Unavailable) → idempotent answers
// for a known task id → capacity (NoSlot) / slot validity (InvalidSlot) → state change.

import type { WorkerCommand } from './commands.js';
import { ANONYMOUS_CLIENT } from '../../../kernel/client-identity.js';
import { idPreview, idProblem } from '../../../kernel/input-bounds.js';
import { effectiveTaskDeadlineMs } from './config.js';
import { statusOf, type CoreState } from './core-state.js';
import { WorkerAdmissionError } from './errors.js';
import { SlotState, type SlotRecord } from './slot-table.js';
import type { Step, RequestTaskSlotResult, SubmitTaskResult } from './step.js';
import type { AcceptedTaskInput, TaskRecord } from './task-table.js';
import { TaskPhase, TaskState, type PluginConfig, type TaskInput } from './types.js';

/**
 * A task id is a non-empty string of at most MAX_ID_BYTES of UTF-8 (docs/security.md § Input bounds):
 * ids are echoed in statuses, logs and watch updates, so an unbounded one could wedge a connection.
 */
export function requireTaskId(taskId: unknown): asserts taskId is string {
  const problem = idProblem(taskId);
  if (problem !== undefined) {
    // The error carries only a preview: it is logged and mapped to a status message.
    throw WorkerAdmissionError.invalidArgument('', 'taskId', idPreview(taskId), problem);
  }
}

/** A slot id given by the client: absent/empty (inline reservation) or bounded like a task id. */
function requireSlotId(taskId: string, slotId: unknown): asserts slotId is string | undefined {
  if (slotId === undefined || slotId === '') return;
  const problem = idProblem(slotId);
  if (problem !== undefined) {
    const why = typeof slotId === 'string' ? problem : 'must be a string';
    throw WorkerAdmissionError.invalidArgument(taskId, 'slotId', idPreview(slotId), why);
  }
}

/**
 * A RequestTaskSlot TTL: a positive safe integer no larger than `maxSlotTtlMs`. Above the limit the
 * request is refused, not clamped (docs/security.md § Input bounds): a clamp would hand the caller a
 * shorter lease than it asked for without telling it, and a caller that asks for more than the worker
 * allows is misconfigured (e.g. a Coordinator slotTtlMs above the worker's limit) and should hear so.
 */
export function requireTtlMs(
  config: Pick<CoreState['config'], 'maxSlotTtlMs'>,
  taskId: string,
  ttlMs: unknown,
): asserts ttlMs is number {
  if (typeof ttlMs !== 'number' || !Number.isSafeInteger(ttlMs) || ttlMs <= 0) {
    throw WorkerAdmissionError.invalidArgument(taskId, 'ttlMs', ttlMs, 'must be a positive integer');
  }
  const max = config.maxSlotTtlMs;
  if (ttlMs > max) {
    throw WorkerAdmissionError.invalidArgument(taskId, 'ttlMs', ttlMs, `must be <= maxSlotTtlMs (${max})`);
  }
}

function requireServing(s: CoreState, taskId: string): void {
  if (s.draining) throw WorkerAdmissionError.unavailable(taskId, 'Draining');
  if (!s.ready) throw WorkerAdmissionError.unavailable(taskId, 'NotReady');
}

function isPluginConfig(value: unknown): value is PluginConfig {
  return (
    typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string'
  );
}

/**
 * Frees one unsubmitted reservation for `client` on a full worker, when another client holds at least
 * two more unsubmitted reservations than `client` does (max-min fairness over reservations,
 * docs/security.md § Reservations per client): the oldest reservation of the largest holder is
 * reclaimed as if its lease had expired (its later SubmitTask gets InvalidSlot, which a client
 * already answers by reserving again). Running and submitted tasks are never touched, and a client
 * alone on the worker is never reclaimed from. Returns whether a slot was freed.
 */
function reclaimForFairness(s: CoreState, client: string, commands: WorkerCommand[]): boolean {
  const holder = s.slots.largestReservationHolder();
  if (holder === undefined || holder.client === client) return false;
  if (holder.count < s.slots.unsubmittedBy(client) + 2) return false;
  const victim = s.slots.release(holder.oldestSlotId);
  commands.push({ type: 'SlotReclaimed', slotId: victim.slotId, taskId: victim.taskId });
  return true;
}

/**
 * The slot of `taskId`: the one it already holds (lease renewed to at least `now + ttlMs`), none when
 * the id answers with a retained result, or a newly allocated one for `client`. Throws NoSlot (the
 * worker is full and nothing can be reclaimed, or `client` is at `maxReservedSlotsPerClient`) before
 * any change; a fair-share reclaim adds its SlotReclaimed to `commands`.
 */
function reserve(
  s: CoreState,
  taskId: string,
  ttlMs: number,
  now: number,
  client: string,
  commands: WorkerCommand[],
): RequestTaskSlotResult {
  // Task ids belong to their client (docs/security.md § Roles): nobody reserves, reuses or reads the
  // result of another client's id.
  const holder = statusOf(s, taskId, now)?.client;
  if (holder !== undefined && holder !== client) throw WorkerAdmissionError.taskIdTaken(taskId);
  const held = s.slots.byTask(taskId);
  if (held !== undefined) {
    // A repeated request (e.g. the Coordinator retrying after an RPC timeout) keeps the reservation
    // alive for the client that is about to submit.
    s.slots.renewLease(held, now + ttlMs);
    const state = s.tasks.get(taskId) !== undefined ? TaskState.RUNNING : TaskState.ALLOCATED;
    return { taskId, slotId: held.slotId, state, leaseDeadlineMs: held.leaseDeadlineMs };
  }
  const retained = s.results.get(taskId, now);
  if (retained !== undefined) {
    return { taskId, slotId: undefined, state: retained.state, leaseDeadlineMs: undefined };
  }
  const limit = s.config.maxReservedSlotsPerClient;
  const reserved = s.slots.unsubmittedBy(client);
  if (limit > 0 && reserved >= limit) throw WorkerAdmissionError.clientQuota(taskId, client, reserved, limit);
  if (s.slots.free <= 0 && !reclaimForFairness(s, client, commands)) {
    throw WorkerAdmissionError.noSlot(taskId, s.slots.capacity, s.slots.inUse);
  }
  const slot = s.slots.allocate(taskId, ttlMs, now, client);
  return { taskId, slotId: slot.slotId, state: TaskState.ALLOCATED, leaseDeadlineMs: slot.leaseDeadlineMs };
}

export function requestTaskSlot(
  s: CoreState,
  taskId: string,
  ttlMs: number,
  now: number,
  client: string = ANONYMOUS_CLIENT,
): Step<RequestTaskSlotResult> {
  requireTaskId(taskId);
  requireTtlMs(s.config, taskId, ttlMs);
  requireServing(s, taskId);
  const commands: WorkerCommand[] = [];
  return { result: reserve(s, taskId, ttlMs, now, client, commands), commands };
}

/** Validates the shape of a submitted task; returns it with the result handler normalised. */
function acceptInput(input: TaskInput): AcceptedTaskInput {
  if (typeof input !== 'object' || input === null) {
    throw WorkerAdmissionError.invalidArgument('', 'task', input, 'must be an object');
  }
  requireTaskId(input.taskId);
  const { taskId, functionCallConfig, resultHandler } = input;
  if (!isPluginConfig(functionCallConfig) || functionCallConfig.type === '') {
    const value = isPluginConfig(functionCallConfig) ? functionCallConfig.type : functionCallConfig;
    throw WorkerAdmissionError.invalidArgument(
      taskId,
      'functionCallConfig.type',
      value,
      'must be a non-empty string',
    );
  }
  if (resultHandler !== undefined && resultHandler !== null && !isPluginConfig(resultHandler)) {
    throw WorkerAdmissionError.invalidArgument(
      taskId,
      'resultHandler.type',
      resultHandler,
      'must be a string',
    );
  }
  return {
    taskId,
    functionCallConfig: { type: functionCallConfig.type, config: functionCallConfig.config },
    resultHandler:
      resultHandler === undefined || resultHandler === null || resultHandler.type === ''
        ? null
        : { type: resultHandler.type, config: resultHandler.config },
    taskTimeoutMs: input.taskTimeoutMs,
  };
}

/** The ALLOCATED slot `slotId`, bound to `taskId`, or InvalidSlot. */
function requireOwnSlot(s: CoreState, taskId: string, slotId: string): SlotRecord {
  const slot = s.slots.get(slotId);
  if (slot === undefined) throw WorkerAdmissionError.invalidSlot(taskId, slotId, 'SlotUnknown');
  if (slot.state !== SlotState.ALLOCATED)
    throw WorkerAdmissionError.invalidSlot(taskId, slotId, 'SlotNotAllocated');
  if (slot.taskId !== taskId) throw WorkerAdmissionError.invalidSlot(taskId, slotId, 'SlotBoundToOtherTask');
  return slot;
}

export function submitTask(
  s: CoreState,
  input: TaskInput,
  slotId: string | undefined,
  now: number,
  client: string = ANONYMOUS_CLIENT,
): Step<SubmitTaskResult> {
  const accepted = acceptInput(input);
  const { taskId } = accepted;
  const timeoutMs = effectiveTaskDeadlineMs(s.config, accepted.taskTimeoutMs, taskId);
  requireSlotId(taskId, slotId);
  requireServing(s, taskId);

  const holder = statusOf(s, taskId, now)?.client;
  if (holder !== undefined && holder !== client) throw WorkerAdmissionError.taskIdTaken(taskId);
  // Idempotency: a running task or a retained result answers with its current state, never re-runs.
  if (s.tasks.get(taskId) !== undefined) {
    return { result: { taskId, state: TaskState.RUNNING, result: undefined, accepted: false }, commands: [] };
  }
  const retained = s.results.get(taskId, now);
  if (retained !== undefined) {
    return {
      result: { taskId, state: retained.state, result: retained.result, accepted: false },
      commands: [],
    };
  }

  let slot: SlotRecord;
  const commands: WorkerCommand[] = [];
  if (slotId === undefined || slotId === '') {
    // Inline request with the default TTL (or the task's own existing reservation).
    reserve(s, taskId, s.config.defaultTtlMs, now, client, commands);
    const own = s.slots.byTask(taskId);
    if (own === undefined) throw new Error(`submitTask: inline reservation of ${taskId} left no slot`);
    slot = own;
  } else {
    slot = requireOwnSlot(s, taskId, slotId);
  }

  // From here nothing can fail. Activation gets a full lease counted from acceptance: a client that
  // submits late in its reservation must not lose the task to SLOT_LOST a moment later.
  s.slots.renewLease(slot, now + slot.ttlMs);
  s.slots.markSubmitted(slot);
  const task: TaskRecord = {
    taskId,
    slotId: slot.slotId,
    input: accepted,
    phase: TaskPhase.Preparing,
    acceptedAtMs: now,
    timeoutMs,
    deadlineMs: now + timeoutMs,
    codeEpoch: undefined,
    client,
  };
  s.tasks.add(task);
  commands.push({
    type: 'PrepareTaskActivation',
    taskId,
    slotId: slot.slotId,
    input: accepted,
    acceptedAtMs: now,
    timeoutMs,
    deadlineMs: task.deadlineMs,
    client,
  });
  return { result: { taskId, state: TaskState.RUNNING, result: undefined, accepted: true }, commands };
}
