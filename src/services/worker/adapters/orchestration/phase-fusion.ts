// Task fusion (docs/task-fusion.md): tasks of one submitter that reach the same phase in the same
// event-loop turn, with plugins that say they may, run that phase together — one builder scan, one call
// phase, one writer transaction — instead of one each. The core is not told: it still sees every task
// start and finish each phase on its own (one Start command in, one result fed back per task), so ids,
// deadlines, timeouts, retention and idempotency are exactly as without fusion.
//
// Theory of operation. A Start command that may fuse is held instead of run, under a group key (below),
// and one setImmediate later every group is flushed: a group of one runs as before; a larger one (in
// chunks of `maxTasks`) runs its phase once for all, then feeds each task's own result. The commands of
// one RunTasks batch reach a phase in the same turn (activation and the phase results before it settle in
// one microtask run), so a batch fuses without any timer. Group keys:
//
//   Builder  builder type, submitter, pinned code epoch, the builder's own fusion.key(config)
//   Calls    the Builder group's key: only tasks built together have their calls run together
//   Writer   writer type, submitter, the writer's own fusion.key(config)
//
// Never worse than alone. A fused phase that cannot give every task the result it would have had alone
// runs each task alone instead: a builder that declines or throws, a Calls phase that fails in any way
// (one call's failure would fail every task with it), a writer transaction that fails. So a task's
// outcome never depends on the tasks it was grouped with; what fusion costs in that case is the work
// done twice. Tasks of different submitters never share a group (docs/security.md § Task isolation): a
// fused Calls phase runs its calls as one task of the Executor, so the calls of one submitter's tasks
// share a module instance, as the calls of one bundle task do.
//
// A member that converges while its group runs (timeout, cancellation) is dropped from what is fed: its
// late result would be ignored by the core anyway. The group's admission permit, and the signal that
// cancels the fused work, belong to the group: the work stops only when every member is gone.

import {
  FailureCode,
  type PhaseOutcome,
  type StartBuilderPhase,
  type StartCallPhase,
  type StartWriterPhase,
} from '../../core/index.js';
import type { CallSpec } from '../../../../kernel/plugin-types.js';
import { describeError } from '../../../../kernel/errors.js';
import type { ServiceLogger } from '../../../../kernel/observability/service-logger.js';
import {
  admitOn,
  builderReturned,
  builderThrew,
  cancelled,
  requireIo,
  runBuilderPhase,
  runCallPhase,
  runWriterPhase,
  taskCtx,
  writerReturned,
  writerThrew,
  type PhaseContext,
} from './orchestrator-phases.js';
import { failure } from './phase-results.js';
import type { TaskRuntime } from './task-runtimes.js';

export type FusedPhase = 'builder' | 'calls' | 'plugin';

/** What a fusion tells its owner: a phase of `taskIds` started together, and the promise of its end. */
export type FusedRun = (phase: FusedPhase, taskIds: readonly string[], run: Promise<void>) => void;

export interface PhaseFusionOptions {
  /** The most tasks one fused phase runs (worker.fusion.maxTasks); 1: never fuse. */
  readonly maxTasks: number;
  readonly logger: ServiceLogger;
  /** Each phase that runs, fused or alone (for phase timings and the fused-task counters). */
  readonly track: FusedRun;
}

interface Held<C> {
  readonly cmd: C;
  readonly rt: TaskRuntime;
}

type Groups<C> = Map<string, Held<C>[]>;

/** The held Start commands of one turn, and the fused runs they become. */
export class PhaseFusion {
  private builders: Groups<StartBuilderPhase> = new Map();
  private calls: Groups<StartCallPhase> = new Map();
  private writers: Groups<StartWriterPhase> = new Map();
  private scheduled = false;

  constructor(
    private readonly ctx: PhaseContext,
    private readonly options: PhaseFusionOptions,
  ) {}

  /** Holds a StartBuilderPhase whose builder may fuse it; false: run it alone now. */
  offerBuilder(cmd: StartBuilderPhase): boolean {
    if (this.options.maxTasks <= 1) return false;
    const rt = this.ctx.runtime(cmd.taskId);
    const epoch = rt?.epoch?.epoch;
    if (rt === undefined || epoch === undefined) return false;
    const { type, config } = cmd.functionCallConfig;
    const impl = rt.plugins.builders.get(type)?.impl;
    if (impl?.fusion === undefined) return false;
    if (impl.stream !== undefined && impl.streams?.(config) === true) return false;
    const key = this.pluginKey(() => impl.fusion?.key(config), type);
    if (key === undefined) return false;
    return this.hold(this.builders, groupKey([type, rt.client ?? '', epoch, key]), { cmd, rt });
  }

  /** Holds a StartCallPhase of a task built fused; false: run it alone now. */
  offerCalls(cmd: StartCallPhase): boolean {
    if (this.options.maxTasks <= 1) return false;
    const rt = this.ctx.runtime(cmd.taskId);
    const key = rt?.fusedCallsKey;
    if (rt === undefined || key === undefined || rt.callStream !== undefined || cmd.calls.length === 0)
      return false;
    return this.hold(this.calls, key, { cmd, rt });
  }

  /** Holds a StartWriterPhase whose writer may fuse it; false: run it alone now. */
  offerWriter(cmd: StartWriterPhase): boolean {
    if (this.options.maxTasks <= 1 || cmd.resultHandler === null) return false;
    const rt = this.ctx.runtime(cmd.taskId);
    if (rt === undefined) return false;
    const { type, config } = cmd.resultHandler;
    const impl = rt.plugins.writers.get(type)?.impl;
    if (impl?.fusion === undefined) return false;
    const key = this.pluginKey(() => impl.fusion?.key(config), type);
    if (key === undefined) return false;
    return this.hold(this.writers, groupKey([type, rt.client ?? '', key]), { cmd, rt });
  }

  /** Tasks held and not yet flushed (tests). */
  get heldCount(): number {
    let n = 0;
    for (const groups of [this.builders, this.calls, this.writers])
      for (const members of groups.values()) n += members.length;
    return n;
  }

  private hold<C>(groups: Groups<C>, key: string, held: Held<C>): boolean {
    const members = groups.get(key);
    if (members === undefined) groups.set(key, [held]);
    else members.push(held);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    return true;
  }

  /** A plugin's fusion key; a key() that throws means "alone" (logged: a plugin bug). */
  private pluginKey(key: () => string | undefined, type: string): string | undefined {
    try {
      const k = key();
      return typeof k === 'string' ? k : undefined;
    } catch (err) {
      this.options.logger.warn({ plugin: type, err: describeError(err) }, 'fusion.key(config) threw');
      return undefined;
    }
  }

  private flush(): void {
    this.scheduled = false;
    const { builders, calls, writers } = this;
    this.builders = new Map();
    this.calls = new Map();
    this.writers = new Map();
    for (const [key, members] of builders)
      this.each(
        members,
        'builder',
        (chunk) => this.build(chunk, key),
        (m) => runBuilderPhase(this.ctx, m.cmd),
      );
    for (const members of calls.values())
      this.each(
        members,
        'calls',
        (chunk) => this.runCalls(chunk),
        (m) => runCallPhase(this.ctx, m.cmd),
      );
    for (const members of writers.values())
      this.each(
        members,
        'plugin',
        (chunk) => this.write(chunk),
        (m) => runWriterPhase(this.ctx, m.cmd),
      );
  }

  private each<C extends { readonly taskId: string }>(
    members: readonly Held<C>[],
    phase: FusedPhase,
    fused: (chunk: readonly Held<C>[]) => Promise<void>,
    alone: (member: Held<C>) => Promise<void>,
  ): void {
    const { maxTasks, track } = this.options;
    for (let i = 0; i < members.length; i += maxTasks) {
      const chunk = members.slice(i, i + maxTasks);
      const ids = chunk.map((m) => m.cmd.taskId);
      track(phase, ids, chunk.length === 1 ? alone(chunk[0] as Held<C>) : fused(chunk));
    }
  }

  // ---- Builder --------------------------------------------------------------------------------------

  private async build(members: readonly Held<StartBuilderPhase>[], key: string): Promise<void> {
    const { ctx } = this;
    const sem = ctx.sems.builderSem;
    const group = groupSignal(members.map((m) => m.rt));
    const release = await admitOn(sem, group.signal);
    group.dispose();
    if (release === undefined) return this.feedEach(members, 'Builder', () => cancelled(sem));
    const live = members.filter((m) => !m.rt.converged);
    let results: readonly unknown[] | null = null;
    const first = live[0];
    if (first !== undefined) {
      const { type } = first.cmd.functionCallConfig;
      const fusion = first.rt.plugins.builders.get(type)?.impl.fusion;
      try {
        const tasks = live.map((m) => ({
          taskCtx: taskCtx(m.rt, 'builder'),
          config: m.cmd.functionCallConfig.config,
        }));
        results = (await fusion?.buildMany(tasks, requireIo(first.rt).io('builder'))) ?? null;
        if (results !== null && results.length !== live.length) {
          this.declined(type, `buildMany returned ${results.length} results for ${live.length} tasks`);
          results = null;
        }
      } catch (err) {
        this.declined(type, describeError(err));
        results = null;
      }
    }
    release();
    if (results === null) {
      await Promise.all(live.map((m) => runBuilderPhase(ctx, m.cmd)));
      return;
    }
    const type = (first as Held<StartBuilderPhase>).cmd.functionCallConfig.type;
    const outcomes = results.map((r) => (r instanceof Error ? builderThrew(r) : builderReturned(type, r)));
    live.forEach((m, i) => {
      const outcome = outcomes[i] as PhaseOutcome<'Builder'>;
      if (outcome.ok) m.rt.fusedCallsKey = key;
    });
    this.feedEach(live, 'Builder', (i) => outcomes[i] as PhaseOutcome<'Builder'>);
  }

  // ---- Calls ----------------------------------------------------------------------------------------

  private async runCalls(members: readonly Held<StartCallPhase>[]): Promise<void> {
    const { ctx } = this;
    // The deadline is checked before entering Calls, per task (docs/task-lifecycle.md § The three phases).
    const now = ctx.now();
    const late = members.filter((m) => now >= m.cmd.deadlineMs);
    this.feedEach(late, 'Calls', () =>
      failure(FailureCode.TIMED_OUT, 'task deadline passed before the Calls phase'),
    );
    const timely = members.filter((m) => now < m.cmd.deadlineMs);
    if (timely.length === 0) return;
    const sem = ctx.sems.executorSem;
    const group = groupSignal(timely.map((m) => m.rt));
    const release = await admitOn(sem, group.signal);
    if (release === undefined) {
      group.dispose();
      return this.feedEach(timely, 'Calls', () => cancelled(sem));
    }
    const live = timely.filter((m) => !m.rt.converged);
    const first = live[0];
    const epoch = first?.rt.epoch?.epoch;
    let outputs: readonly unknown[] | undefined;
    if (first !== undefined && epoch !== undefined) {
      const calls: CallSpec[] = [];
      for (const m of live) for (const call of m.cmd.calls as readonly CallSpec[]) calls.push(call);
      try {
        const outcome = await ctx.callRunner.run(
          {
            taskId: first.rt.taskId,
            codeEpoch: epoch,
            deadlineMs: Math.min(...live.map((m) => m.cmd.deadlineMs)),
            signal: group.signal,
            ...(first.rt.client === undefined ? {} : { client: first.rt.client }),
          },
          calls,
        );
        if (outcome.success && outcome.outputs.length === calls.length) outputs = outcome.outputs;
        else
          this.options.logger.debug(
            { failure_code: outcome.failureCode, tasks: live.length },
            'a fused Calls phase failed; running each task alone',
          );
      } catch (err) {
        this.options.logger.debug({ err: describeError(err) }, 'a fused Calls phase threw; running alone');
      }
    }
    group.dispose();
    release();
    if (outputs === undefined) {
      // Alone, each task gets the outcome its own calls give it (and its own attempts and budget).
      await Promise.all(live.filter((m) => !m.rt.converged).map((m) => runCallPhase(ctx, m.cmd)));
      return;
    }
    let offset = 0;
    const slices = live.map((m) => {
      const slice = (outputs as readonly unknown[]).slice(offset, offset + m.cmd.calls.length);
      offset += m.cmd.calls.length;
      return slice;
    });
    this.feedEach(live, 'Calls', (i) => ({ ok: true, outputs: slices[i] as unknown[] }));
  }

  // ---- Writer ---------------------------------------------------------------------------------------

  private async write(members: readonly Held<StartWriterPhase>[]): Promise<void> {
    const { ctx } = this;
    const sem = ctx.sems.pluginSem;
    const group = groupSignal(members.map((m) => m.rt));
    const release = await admitOn(sem, group.signal);
    group.dispose();
    if (release === undefined) return this.feedEach(members, 'Plugin', () => cancelled(sem));
    const live = members.filter((m) => !m.rt.converged);
    const first = live[0];
    let results: readonly unknown[] | undefined;
    let type = '';
    if (first !== undefined && first.cmd.resultHandler !== null) {
      type = first.cmd.resultHandler.type;
      const fusion = first.rt.plugins.writers.get(type)?.impl.fusion;
      try {
        const tasks = live.map((m) => ({
          taskCtx: taskCtx(m.rt, 'plugin'),
          config: m.cmd.resultHandler?.config,
          outputs: m.cmd.outputs,
        }));
        results = await fusion?.executeMany(tasks, requireIo(first.rt).io('result', type));
        if (results !== undefined && results.length !== live.length) {
          this.declined(type, `executeMany returned ${results.length} results for ${live.length} tasks`);
          results = undefined;
        }
      } catch (err) {
        // The transaction failed: nothing of it is written. Each task is written alone, with its own retries.
        this.options.logger.debug({ plugin: type, err: describeError(err) }, 'a fused write failed');
        results = undefined;
      }
    }
    release();
    if (results === undefined) {
      await Promise.all(live.filter((m) => !m.rt.converged).map((m) => runWriterPhase(ctx, m.cmd)));
      return;
    }
    const r = results;
    this.feedEach(live, 'Plugin', (i) =>
      r[i] instanceof Error ? writerThrew(type, r[i]) : writerReturned(type, r[i]),
    );
  }

  // ---- Feeding --------------------------------------------------------------------------------------

  private feedEach<P extends 'Builder' | 'Calls' | 'Plugin', C extends { readonly taskId: string }>(
    members: readonly Held<C>[],
    phase: P,
    outcome: (index: number) => PhaseOutcome<P>,
  ): void {
    members.forEach((m, i) => {
      if (m.rt.converged) return;
      const result = outcome(i);
      this.ctx.feed((now) => this.ctx.core.handleTaskPhaseFinished(m.cmd.taskId, phase, result, now));
    });
  }

  private declined(type: string, why: string): void {
    this.options.logger.warn({ plugin: type, reason: why }, 'a fused phase ran each task alone');
  }
}

/** The key of a group: its parts, joined by a separator no part holds. */
function groupKey(parts: readonly string[]): string {
  return parts.map((p) => JSON.stringify(p)).join('\u0000');
}

/**
 * A signal that aborts once every member's task signal has: the fused work is wanted while any member
 * still is. `dispose()` removes the listeners it added.
 */
function groupSignal(members: readonly TaskRuntime[]): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  let left = members.length;
  const onAbort = (): void => {
    left -= 1;
    if (left === 0) controller.abort(new DOMException('every task of the fused phase ended', 'AbortError'));
  };
  const added: AbortSignal[] = [];
  for (const m of members) {
    const s = m.controller.signal;
    if (s.aborted) onAbort();
    else {
      s.addEventListener('abort', onAbort, { once: true });
      added.push(s);
    }
  }
  return {
    signal: controller.signal,
    dispose: () => {
      for (const s of added) s.removeEventListener('abort', onAbort);
    },
  };
}
