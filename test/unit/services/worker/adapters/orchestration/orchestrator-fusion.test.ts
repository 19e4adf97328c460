// Task fusion in the orchestrator (docs/task-fusion.md), over a real WorkerCore: tasks of one submitter
// whose plugins give the same key, reaching a phase in the same turn, run it once for all — and each task
// still ends with the outcome it would have had alone, also when the fused phase fails.
import { describe, expect, it } from 'vitest';
import { argsValuesOf } from '../../../../../../src/contracts/call-args.js';
import type { BuilderPlugin, CallSpec, WriterPlugin } from '../../../../../../src/kernel/plugin-types.js';
import type {
  CallPhaseOutcome,
  CallPhaseRunner,
  CallPhaseTask,
} from '../../../../../../src/services/call-host/index.js';
import { TaskState } from '../../../../../../src/services/worker/core/index.js';
import { builderDef, makeHarness, settle, writerDef } from './harness.js';

type Config = { job: string; n: number };

/** A builder of `n` calls `f(n, i)`; its fusion counts the groups it builds. */
function fusingBuilder(groups: number[][], opts: { failN?: number } = {}): BuilderPlugin<Config> {
  const calls = (c: Config): CallSpec[] => [0, 1].map((i) => ({ function: 'f', args: [c.n, i] }));
  return {
    build: (_ctx, c) => ({ calls: calls(c) }),
    fusion: {
      key: (c) => c.job,
      buildMany: async (tasks) => {
        groups.push(tasks.map((t) => t.config.n));
        return tasks.map((t) =>
          t.config.n === opts.failN ? new Error(`no block ${t.config.n}`) : { calls: calls(t.config) },
        );
      },
    },
  };
}

/** A writer returning its outputs; its fusion records the groups, or throws when told to. */
function fusingWriter(groups: number[][], opts: { throwMany?: boolean } = {}): WriterPlugin<Config> {
  const written = (c: Config, outputs: readonly unknown[]) => [
    { pluginName: 'W', success: true, result: { n: c.n, outputs: [...outputs] } },
  ];
  return {
    execute: async (_ctx, c, outputs) => written(c, outputs),
    fusion: {
      key: (c) => c.job,
      executeMany: async (tasks) => {
        groups.push(tasks.map((t) => t.config.n));
        if (opts.throwMany) throw new Error('the transaction failed');
        return tasks.map((t) => written(t.config, t.outputs));
      },
    },
  };
}

/** Answers every call with `n.i`, and fails a run holding a call of block `failN` (a function error). */
class Runner implements CallPhaseRunner {
  readonly runs: { task: CallPhaseTask; calls: readonly CallSpec[] }[] = [];
  constructor(private readonly failN?: number) {}
  async run(task: CallPhaseTask, calls: readonly CallSpec[]): Promise<CallPhaseOutcome> {
    this.runs.push({ task, calls });
    const values = calls.map((c) => argsValuesOf(c.args));
    if (values.some((v) => v[0] === this.failN))
      return {
        success: false,
        failureCode: 'CALL_FAILED',
        retryable: false,
        message: 'f threw',
        outputs: [],
      };
    return { success: true, retryable: false, outputs: values.map((v) => `${String(v[0])}.${String(v[1])}`) };
  }
}

function harness(
  opts: { failBuild?: number; failCall?: number; throwMany?: boolean; maxTasks?: number } = {},
) {
  const builds: number[][] = [];
  const writes: number[][] = [];
  const runner = new Runner(opts.failCall);
  const h = makeHarness({
    fusionMaxTasks: opts.maxTasks ?? 64,
    runner,
    builders: [builderDef('B', fusingBuilder(builds, { failN: opts.failBuild }) as BuilderPlugin)],
    writers: [writerDef('W', fusingWriter(writes, { throwMany: opts.throwMany }) as WriterPlugin)],
  });
  const submit = (n: number, job = 'j', client?: string) =>
    h.orchestrator.submitTask(
      {
        taskId: `t${n}`,
        functionCallConfig: { type: 'B', config: { job, n } },
        resultHandler: { type: 'W', config: { job, n } },
        taskTimeoutMs: 0,
      },
      undefined,
      client,
    );
  const outcome = (n: number) => {
    const t = h.terminal(`t${n}`);
    return t.state === TaskState.SUCCEEDED
      ? t.result.executeResult.pluginResults[0]?.result
      : t.result.executeResult.failureCode;
  };
  return { h, builds, writes, runner, submit, outcome };
}

describe('Orchestrator: task fusion', () => {
  it('tasks of one key reaching a phase together: one build, one call phase, one write; each its own result', async () => {
    const f = harness();
    for (const n of [1, 2, 3, 4, 5]) f.submit(n);
    await settle();
    expect(f.builds).toEqual([[1, 2, 3, 4, 5]]);
    expect(f.runner.runs).toHaveLength(1);
    expect(f.runner.runs[0]?.calls).toHaveLength(10);
    expect(f.writes).toEqual([[1, 2, 3, 4, 5]]);
    for (const n of [1, 2, 3, 4, 5]) expect(f.outcome(n)).toEqual({ n, outputs: [`${n}.0`, `${n}.1`] });
    await f.h.orchestrator.settled();
    expect(f.h.orchestrator.activeTasks).toBe(0);
  });

  it('a call that fails fails its own task only: the fused phase runs each task alone', async () => {
    const f = harness({ failCall: 3 });
    for (const n of [1, 2, 3, 4]) f.submit(n);
    await settle();
    expect(f.outcome(3)).toBe('CALL_FAILED');
    for (const n of [1, 2, 4]) expect(f.outcome(n)).toEqual({ n, outputs: [`${n}.0`, `${n}.1`] });
    // The fused run, then one run per task.
    expect(f.runner.runs).toHaveLength(1 + 4);
  });

  it('a task whose build fails fails alone (BUILDER_FAILED); the others go on fused', async () => {
    const f = harness({ failBuild: 2 });
    for (const n of [1, 2, 3]) f.submit(n);
    await settle();
    expect(f.outcome(2)).toBe('BUILDER_FAILED');
    expect(f.h.terminal('t2').result.executeResult.failureMessage).toMatch(/no block 2/);
    expect(f.writes).toEqual([[1, 3]]);
    for (const n of [1, 3]) expect(f.outcome(n)).toEqual({ n, outputs: [`${n}.0`, `${n}.1`] });
  });

  it('a fused write that fails writes each task alone', async () => {
    const f = harness({ throwMany: true });
    for (const n of [1, 2]) f.submit(n);
    await settle();
    expect(f.writes).toEqual([[1, 2]]);
    for (const n of [1, 2]) expect(f.outcome(n)).toEqual({ n, outputs: [`${n}.0`, `${n}.1`] });
  });

  it('never fuses tasks of different submitters, or of different keys', async () => {
    const f = harness();
    f.submit(1, 'j', 'alice');
    f.submit(2, 'j', 'bob');
    f.submit(3, 'j', 'alice');
    f.submit(4, 'k', 'alice');
    await settle();
    expect(f.builds.map((g) => g.sort())).toEqual([[1, 3]]);
    expect(f.runner.runs.map((r) => r.task.client)).toEqual(expect.arrayContaining(['alice', 'bob']));
    for (const run of f.runner.runs) {
      const blocks = new Set(run.calls.map((c) => argsValuesOf(c.args)[0]));
      if (blocks.size > 1) expect([...blocks].sort()).toEqual([1, 3]);
    }
    for (const n of [1, 2, 3, 4]) expect(f.outcome(n)).toEqual({ n, outputs: [`${n}.0`, `${n}.1`] });
  });

  it('worker.fusion.maxTasks 1: every task alone, as before', async () => {
    const f = harness({ maxTasks: 1 });
    for (const n of [1, 2, 3]) f.submit(n);
    await settle();
    expect(f.builds).toEqual([]);
    expect(f.writes).toEqual([]);
    expect(f.runner.runs).toHaveLength(3);
  });

  it('groups are at most maxTasks', async () => {
    const f = harness({ maxTasks: 2 });
    for (const n of [1, 2, 3, 4, 5]) f.submit(n);
    await settle();
    // 5 tasks in chunks of 2, 2 and 1 (a chunk of one is built alone).
    expect(f.builds.map((g) => g.length)).toEqual([2, 2]);
    for (const n of [1, 2, 3, 4, 5]) expect(f.outcome(n)).toEqual({ n, outputs: [`${n}.0`, `${n}.1`] });
  });
});
