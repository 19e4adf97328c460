// Test harness for the worker adapters: an Orchestrator over a real WorkerCore with fakes of its ports
// (call runner, code epochs, IO scopes), in-process plugins, and a manual clock. Not a test file.

import { argsValuesOf } from '../../../../../../src/contracts/call-args.js';
import {
  LivePluginRegistry,
  createPluginRegistry,
  type PluginDefinition,
} from '../../../../../../src/kernel/plugin-registry.js';
import type { BuilderPlugin, CallSpec, WriterPlugin } from '../../../../../../src/kernel/plugin-types.js';
import {
  NoStorageIoScopeFactory,
  StaticCodeEpochSource,
} from '../../../../../../src/services/worker/adapters/orchestration/default-ports.js';
import { Orchestrator } from '../../../../../../src/services/worker/adapters/orchestration/orchestrator.js';
import type {
  CallPhaseOutcome,
  CallPhaseRunner,
  CallPhaseTask,
  CodeEpochSource,
} from '../../../../../../src/services/call-host/index.js';
import type { TaskIoScopeFactory } from '../../../../../../src/services/worker/adapters/orchestration/ports.js';
import type { ServiceLogger } from '../../../../../../src/kernel/observability/service-logger.js';
import type { AdmissionSlots } from '../../../../../../src/services/worker/adapters/orchestration/semaphore.js';
import {
  WorkerCore,
  type TaskInput,
  type TaskResult,
  type TerminalTaskState,
  type WorkerCoreConfig,
} from '../../../../../../src/services/worker/core/index.js';

/** Lets pending promise chains (several awaits deep) run to completion. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise<void>((r) => setImmediate(r));
}

export interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(err: unknown): void;
}

export function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

export interface RunRecord {
  readonly task: CallPhaseTask;
  readonly calls: readonly CallSpec[];
  readonly outcome: Deferred<CallPhaseOutcome>;
}

/**
 * A call runner whose runs stay open until the test settles them (`manual`), or that answers at once
 * with `fn(args)` strings (`auto`).
 */
export class FakeCallRunner implements CallPhaseRunner {
  readonly runs: RunRecord[] = [];
  constructor(private readonly mode: 'auto' | 'manual' = 'auto') {}
  run(task: CallPhaseTask, calls: readonly CallSpec[]): Promise<CallPhaseOutcome> {
    const outcome = deferred<CallPhaseOutcome>();
    this.runs.push({ task, calls, outcome });
    if (this.mode === 'auto') {
      outcome.resolve({
        success: true,
        retryable: false,
        outputs: calls.map((c) => `${c.function}(${argsValuesOf(c.args).join(',')})`),
      });
    }
    return outcome.promise;
  }
}

export function builderDef(type: string, impl: BuilderPlugin): PluginDefinition<BuilderPlugin> {
  return { type, name: type, packagePath: `(test ${type})`, schema: { type: 'object' }, impl };
}

export function writerDef(type: string, impl: WriterPlugin): PluginDefinition<WriterPlugin> {
  return { type, name: type, packagePath: `(test ${type})`, schema: { type: 'object' }, impl };
}

/** `CallListCallConfig` and `ReturnValueResultHandler` as the built-in plugins behave. */
export const callListBuilder: BuilderPlugin<{ function: string; callList: unknown[][] }> = {
  build: (_ctx, config) => ({ calls: config.callList.map((args) => ({ function: config.function, args })) }),
};
export const returnValueWriter: WriterPlugin = {
  execute: async (_ctx, _config, outputs) => [
    { pluginName: 'ReturnValueResultHandler', success: true, result: [...outputs] },
  ],
};

export interface Terminal {
  readonly taskId: string;
  readonly state: TerminalTaskState;
  readonly result: TaskResult;
}

export interface HarnessOptions {
  readonly core?: Partial<WorkerCoreConfig>;
  readonly admission?: AdmissionSlots;
  readonly builders?: PluginDefinition<BuilderPlugin>[];
  readonly writers?: PluginDefinition<WriterPlugin>[];
  readonly runner?: CallPhaseRunner;
  readonly codeEpochs?: CodeEpochSource;
  readonly ioScopes?: TaskIoScopeFactory;
  readonly logger?: ServiceLogger;
  /** worker.fusion.maxTasks (docs/task-fusion.md); default 1, no fusion. */
  readonly fusionMaxTasks?: number;
}

export function makeHarness(opts: HarnessOptions = {}) {
  let now = 1_000;
  let slot = 0;
  const core = new WorkerCore({
    config: {
      taskSlots: 8,
      defaultTtlMs: 1_000,
      taskDeadlineMs: 10_000,
      resultRetentionMs: 5_000,
      ...opts.core,
    },
    newSlotId: () => `slot-${++slot}`,
  });
  // Live, as in blockx up and blockx worker: a test may load other plugins while tasks run.
  const plugins = new LivePluginRegistry(
    createPluginRegistry({
      builders: opts.builders ?? [builderDef('CallListCallConfig', callListBuilder as BuilderPlugin)],
      writers: opts.writers ?? [writerDef('ReturnValueResultHandler', returnValueWriter)],
    }),
  );
  const runner = opts.runner ?? new FakeCallRunner('auto');
  const epochs = new StaticCodeEpochSource('epoch-1');
  const scopes = new NoStorageIoScopeFactory();
  const orchestrator = new Orchestrator({
    core,
    plugins,
    callRunner: runner,
    codeEpochs: opts.codeEpochs ?? epochs,
    ioScopes: opts.ioScopes ?? scopes,
    clock: () => now,
    ...(opts.logger ? { logger: opts.logger } : {}),
    ...(opts.admission ? { admission: opts.admission } : {}),
    ...(opts.fusionMaxTasks === undefined ? {} : { fusionMaxTasks: opts.fusionMaxTasks }),
  });
  const terminals: Terminal[] = [];
  orchestrator.addListener({
    onTerminal: (taskId, state, result) => terminals.push({ taskId, state, result }),
  });
  orchestrator.executorReady();
  return {
    core,
    orchestrator,
    plugins,
    runner,
    epochs,
    scopes,
    terminals,
    now: () => now,
    advance(ms: number): void {
      now += ms;
    },
    /** The terminal update of `taskId` (throws when there is none). */
    terminal(taskId: string): Terminal {
      const found = terminals.find((t) => t.taskId === taskId);
      if (found === undefined) throw new Error(`task ${taskId} has no terminal update`);
      return found;
    },
  };
}

export function helloTask(taskId: string, overrides: Partial<TaskInput> = {}): TaskInput {
  return {
    taskId,
    functionCallConfig: {
      type: 'CallListCallConfig',
      config: { function: 'hello_world', callList: [['ct2'], ['blockx']] },
    },
    resultHandler: { type: 'ReturnValueResultHandler', config: {} },
    taskTimeoutMs: 0,
    ...overrides,
  };
}
