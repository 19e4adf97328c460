// The work behind the core's commands: activation, then Builder → Calls → Plugin (docs/task-lifecycle.md
// § The three phases). Each function runs one command to its end and feeds exactly one result back to the
// core. They never decide what comes next; the core does.
//
// Admission per phase (docs/task-lifecycle.md § The three phases): builderSem, executorSem (an empty call
// list takes none; an expired deadline is checked before it), pluginSem. A phase waiting for admission when
// its task's signal aborts (the task converged, or the worker shuts down) fails with CANCELLED; if the task
// already converged the core ignores that result, which is the point: the waiter leaves the queue and
// never runs.
//
// Every result is computed after an `await`, then fed in one synchronous call, so the core always sees
// the state it is told about (single-threaded JS: no await between reading state and feeding the core).

import {
  FailureCode,
  type PhaseFailure,
  type PhaseOutcome,
  type PluginResult,
  type PrepareTaskActivation,
  type StartBuilderPhase,
  type StartCallPhase,
  type StartWriterPhase,
  type Step,
  type Applied,
  type WorkerCore,
} from '../../core/index.js';
import type { PluginRegistry } from '../../../../kernel/plugin-registry.js';
import {
  isRetryableWriterFailure,
  type CallSpec,
  type WriterResult,
  type TaskCtx,
  type TaskStage,
} from '../../../../kernel/plugin-types.js';
import type {
  CallPhaseOutcome,
  CallPhaseRunner,
  CallPhaseTask,
  CodeEpochPin,
  CodeEpochSource,
} from '../../../call-host/index.js';
import type { TaskIoScope, TaskIoScopeFactory } from './ports.js';
import { callListProblem, failure, toCorePluginResult } from './phase-results.js';
import { describeError, reportedRetryable } from '../../../../kernel/errors.js';
import type { AdmissionSemaphores, Release, Semaphore } from './semaphore.js';
import type { TaskRuntime } from './task-runtimes.js';

/** What the phase functions need from the orchestrator. */
export interface PhaseContext {
  readonly core: WorkerCore;
  readonly plugins: Pick<PluginRegistry, 'builders' | 'writers'>;
  readonly callRunner: CallPhaseRunner;
  readonly codeEpochs: CodeEpochSource;
  readonly ioScopes: TaskIoScopeFactory;
  readonly sems: AdmissionSemaphores;
  now(): number;
  /** Runs one core input at the current time and applies its commands. */
  feed(input: (now: number) => Step<Applied>): Applied;
  /** The runtime of an active task (undefined once it converged). */
  runtime(taskId: string): TaskRuntime | undefined;
  /** Closes a scope, logging (never throwing) a failure. */
  closeScope(taskId: string, scope: TaskIoScope): Promise<void>;
}

export function taskCtx(rt: TaskRuntime, stage: TaskStage): TaskCtx {
  return { taskId: rt.taskId, stage, deadlineMs: rt.deadlineMs, signal: rt.controller.signal };
}

export function requireIo(rt: TaskRuntime): TaskIoScope {
  if (rt.io === undefined) throw new Error(`task ${rt.taskId} has no IO scope (activation incomplete)`);
  return rt.io;
}

/** A permit of `sem`, or undefined when the task's signal aborted while waiting. */
async function admit(sem: Semaphore, rt: TaskRuntime): Promise<Release | undefined> {
  return admitOn(sem, rt.controller.signal);
}

/** A permit of `sem`, or undefined when `signal` aborted while waiting. */
export async function admitOn(sem: Semaphore, signal: AbortSignal): Promise<Release | undefined> {
  try {
    const release = await sem.acquire(signal);
    // The permit may have been granted in the same turn the task converged.
    if (signal.aborted) {
      release();
      return undefined;
    }
    return release;
  } catch {
    return undefined;
  }
}

export function cancelled(sem: Semaphore): PhaseFailure {
  return failure(FailureCode.CANCELLED, `task cancelled while waiting for ${sem.name}`);
}

// ---- Activation ---------------------------------------------------------------------------------------

/** Pin the code epoch, open the IO scope, then HandleTaskActivationPrepared (or ...Failed). */
export async function activateTask(
  ctx: PhaseContext,
  cmd: PrepareTaskActivation,
  rt: TaskRuntime,
): Promise<void> {
  const { core } = ctx;
  const { taskId } = cmd;
  let pin: CodeEpochPin;
  try {
    pin = await ctx.codeEpochs.pin();
  } catch (err) {
    const message = `cannot pin the code epoch: ${describeError(err)}`;
    ctx.feed((now) => core.handleTaskActivationFailed(taskId, FailureCode.ACTIVATION_FAILED, message, now));
    return;
  }
  if (rt.converged) {
    pin.release();
    return;
  }
  rt.epoch = pin;
  let scope: TaskIoScope;
  try {
    scope = await ctx.ioScopes.open(taskId);
  } catch (err) {
    const message = `cannot open the task IO scope: ${describeError(err)}`;
    ctx.feed((now) => core.handleTaskActivationFailed(taskId, FailureCode.IO_SCOPE_FAILED, message, now));
    return;
  }
  if (rt.converged) {
    await ctx.closeScope(taskId, scope);
    return;
  }
  rt.io = scope;
  ctx.feed((now) => core.handleTaskActivationPrepared(taskId, pin.epoch, now));
}

// ---- Builder ------------------------------------------------------------------------------------------

async function builderOutcome(
  ctx: PhaseContext,
  rt: TaskRuntime,
  cmd: StartBuilderPhase,
): Promise<PhaseOutcome<'Builder'>> {
  const sem = ctx.sems.builderSem;
  const release = await admit(sem, rt);
  if (release === undefined) return cancelled(sem);
  try {
    const { type, config } = cmd.functionCallConfig;
    const builder = rt.plugins.builders.get(type);
    if (builder === undefined) {
      const known = rt.plugins.builders.types().join(', ') || '(none)';
      return failure(
        FailureCode.BUILDER_NOT_FOUND,
        `no builder registered for type "${type}" (known: ${known})`,
      );
    }
    const impl = builder.impl;
    const io = requireIo(rt).io('builder');
    // A streaming build runs in the Calls phase (under scanSem), its calls dispatched as they come.
    if (impl.stream !== undefined && impl.streams?.(config) === true) {
      const stream = impl.stream.bind(impl);
      rt.callStream = () => stream(taskCtx(rt, 'builder'), config, io);
      return { ok: true, calls: [] };
    }
    return builderReturned(type, await impl.build(taskCtx(rt, 'builder'), config, io));
  } catch (err) {
    return builderThrew(err);
  } finally {
    release();
  }
}

/** The outcome of a builder that returned `list` (a call list, or a BUILDER_FAILED naming what is wrong). */
export function builderReturned(type: string, list: unknown): PhaseOutcome<'Builder'> {
  const problem = callListProblem(list);
  if (problem !== undefined)
    return failure(FailureCode.BUILDER_FAILED, `${type}: ${problem}`, { retryable: false });
  return { ok: true, calls: (list as { calls: readonly CallSpec[] }).calls };
}

/** The outcome of a builder that threw `err`. */
export function builderThrew(err: unknown): PhaseFailure {
  return failure(FailureCode.BUILDER_FAILED, describeError(err), { retryable: reportedRetryable(err) });
}

export async function runBuilderPhase(ctx: PhaseContext, cmd: StartBuilderPhase): Promise<void> {
  const rt = ctx.runtime(cmd.taskId);
  if (rt === undefined) return;
  const outcome = await builderOutcome(ctx, rt, cmd);
  ctx.feed((now) => ctx.core.handleTaskPhaseFinished(cmd.taskId, 'Builder', outcome, now));
}

// ---- Calls --------------------------------------------------------------------------------------------

async function callsOutcome(
  ctx: PhaseContext,
  rt: TaskRuntime,
  cmd: StartCallPhase,
): Promise<PhaseOutcome<'Calls'>> {
  // The deadline is checked before entering Calls; expired → TIMED_OUT, no executor slot taken
  // (docs/task-lifecycle.md § The three phases).
  if (ctx.now() >= cmd.deadlineMs) {
    return failure(FailureCode.TIMED_OUT, 'task deadline passed before the Calls phase');
  }
  const stream = rt.callStream;
  if (cmd.calls.length === 0 && stream === undefined) return { ok: true, outputs: [] };
  const sem = ctx.sems.executorSem;
  const release = await admit(sem, rt);
  if (release === undefined) return cancelled(sem);
  let releaseScan: Release | undefined;
  try {
    if (stream !== undefined) {
      releaseScan = await admit(ctx.sems.scanSem, rt);
      if (releaseScan === undefined) return cancelled(ctx.sems.scanSem);
    }
    const epoch = rt.epoch?.epoch;
    if (epoch === undefined) throw new Error(`task ${rt.taskId} has no pinned code epoch`);
    const task = {
      taskId: rt.taskId,
      codeEpoch: epoch,
      deadlineMs: cmd.deadlineMs,
      signal: rt.controller.signal,
      ...(rt.client === undefined ? {} : { client: rt.client }),
    };
    const runner = ctx.callRunner;
    const outcome =
      stream === undefined
        ? await runner.run(task, cmd.calls as readonly CallSpec[])
        : runner.runStream !== undefined
          ? await runner.runStream(task, stream())
          : await runCollected(runner, task, stream());
    if (outcome.success) return { ok: true, outputs: outcome.outputs };
    return failure(outcome.failureCode ?? FailureCode.CALL_FAILED, outcome.message ?? 'a call failed', {
      retryable: outcome.retryable,
    });
  } catch (err) {
    return failure(FailureCode.CALL_FAILED, `the call runner failed: ${describeError(err)}`, {
      retryable: reportedRetryable(err),
    });
  } finally {
    releaseScan?.();
    release();
  }
}

/** For runners without `runStream`: the whole stream as one list (a scan error fails BUILDER_FAILED). */
async function runCollected(
  runner: CallPhaseRunner,
  task: CallPhaseTask,
  stream: AsyncIterable<CallSpec>,
): Promise<CallPhaseOutcome> {
  const calls: CallSpec[] = [];
  try {
    for await (const call of stream) calls.push(call);
  } catch (err) {
    return {
      success: false,
      failureCode: FailureCode.BUILDER_FAILED,
      retryable: reportedRetryable(err) ?? false,
      message: `the streaming builder failed: ${describeError(err)}`,
      outputs: [],
    };
  }
  return runner.run(task, calls);
}

export async function runCallPhase(ctx: PhaseContext, cmd: StartCallPhase): Promise<void> {
  const rt = ctx.runtime(cmd.taskId);
  if (rt === undefined) return;
  const outcome = await callsOutcome(ctx, rt, cmd);
  ctx.feed((now) => ctx.core.handleTaskPhaseFinished(cmd.taskId, 'Calls', outcome, now));
}

// ---- Plugin -------------------------------------------------------------------------------------------

async function writerOutcome(
  ctx: PhaseContext,
  rt: TaskRuntime,
  cmd: StartWriterPhase,
): Promise<PhaseOutcome<'Plugin'>> {
  const sem = ctx.sems.pluginSem;
  const release = await admit(sem, rt);
  if (release === undefined) return cancelled(sem);
  try {
    // Without a result handler the phase still takes pluginSem, runs nothing, and succeeds
    // (docs/task-lifecycle.md § The three phases).
    if (cmd.resultHandler === null) return { ok: true, pluginResults: [] };
    const { type, config } = cmd.resultHandler;
    const writer = rt.plugins.writers.get(type);
    if (writer === undefined) {
      const known = rt.plugins.writers.types().join(', ') || '(none)';
      return failure(
        FailureCode.PLUGIN_NOT_FOUND,
        `no writer plugin registered for type "${type}" (known: ${known})`,
      );
    }
    try {
      const results: unknown = await writer.impl.execute(
        taskCtx(rt, 'plugin'),
        config,
        cmd.outputs,
        requireIo(rt).io('result', type),
      );
      return writerReturned(type, results);
    } catch (err) {
      return writerThrew(type, err);
    }
  } finally {
    release();
  }
}

/** The outcome of a writer that returned `results` (an array of plugin results, or a PLUGIN_FAILED). */
export function writerReturned(type: string, results: unknown): PhaseOutcome<'Plugin'> {
  if (!Array.isArray(results)) {
    const message = `${type}: the writer did not return an array of plugin results`;
    return failure(FailureCode.PLUGIN_FAILED, message, { retryable: false });
  }
  return { ok: true, pluginResults: (results as WriterResult[]).map((r) => toCorePluginResult(r, type)) };
}

/** The outcome of a writer that threw `err`. */
export function writerThrew(type: string, err: unknown): PhaseFailure {
  const message = describeError(err);
  // The plugin result keeps the error's own code (a PluginError's, a StorageError's FENCED) for the
  // client to act on; the task's failure code is PLUGIN_FAILED (docs/task-lifecycle.md).
  const code = (err as { code?: unknown } | null)?.code;
  const failed: PluginResult = {
    pluginName: type,
    success: false,
    failureCode: typeof code === 'string' && code !== '' ? code : FailureCode.PLUGIN_FAILED,
    failureMessage: message,
  };
  // PluginError.retryable decides; an unclassified error is retryable (docs/task-lifecycle.md).
  return failure(FailureCode.PLUGIN_FAILED, message, {
    retryable: isRetryableWriterFailure(err),
    pluginResults: [failed],
  });
}

export async function runWriterPhase(ctx: PhaseContext, cmd: StartWriterPhase): Promise<void> {
  const rt = ctx.runtime(cmd.taskId);
  if (rt === undefined) return;
  const outcome = await writerOutcome(ctx, rt, cmd);
  ctx.feed((now) => ctx.core.handleTaskPhaseFinished(cmd.taskId, 'Plugin', outcome, now));
}
