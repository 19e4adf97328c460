// Prometheus metrics of one Worker, in the registry it is given (one per Worker: several Workers share a
// process under `blockx up`).
//
// Nothing here sits on the hot path. Event metrics come from the orchestrator's listener calls, which
// already happen once per task and per phase (tasks by outcome, phase durations, executor losses); every
// other figure is read from state the Worker keeps anyway, at scrape time, in `collect()` callbacks:
// the slot table, the admission semaphores, the dispatcher's cumulative stats and the IO scopes' counters.
//
//   blockx_worker_slots{state=free|allocated|running}      gauge     slot table (DeriveHeartbeat)
//   blockx_worker_tasks_total{code}                         counter   SUCCEEDED or the failure code
//   blockx_worker_phase_duration_seconds{phase}             histogram builder | calls | plugin
//   blockx_worker_fused_tasks_total{phase}                  counter   tasks that ran a phase fused
//   blockx_worker_semaphore_waiting{sem}                    gauge     phases queued for admission
//   blockx_worker_semaphore_in_use{sem}                     gauge     permits held
//   blockx_worker_call_attempts_total                       counter   dispatcher: ExecuteCall commands
//   blockx_worker_call_retries_total                        counter   dispatcher: attempts after the first
//   blockx_worker_dispatcher_inflight                       gauge     attempts holding an execution slot
//   blockx_executor_restarts_total                          counter   executor lost (a restart follows)
//   blockx_worker_io_cache_hits_total / _misses_total / blockx_worker_io_retries_total   IO scopes

import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { cumulativeCounter } from '../../../../kernel/observability/service-registry.js';
import {
  TaskState,
  type HeartbeatCounts,
  type TaskResult,
  type TerminalTaskState,
} from '../../core/index.js';
import type { OrchestratorListener, PhaseTiming } from '../orchestration/orchestrator.js';
import type { AdmissionSemaphores } from '../orchestration/semaphore.js';

/** The dispatcher figures read at scrape time (ExecutorCallRunner.stats()). */
export interface DispatcherFigures {
  /** Cumulative. */
  readonly attempts: number;
  /** Cumulative. */
  readonly retries: number;
  /** Current. */
  readonly inflight: number;
}

/** The task IO scopes' cumulative counters (the IO scope factory's `stats()`). */
export interface IoFigures {
  readonly cacheHits: number;
  readonly cacheMisses: number;
  readonly retries: number;
}

export interface WorkerMetricsSources {
  /** The slot table now (`core.deriveHeartbeat(now)`). */
  readonly slots: () => HeartbeatCounts;
  readonly semaphores: AdmissionSemaphores;
  /** Absent when the Calls phase has no dispatcher (a test's fake runner): those series stay at 0. */
  readonly dispatcher?: () => DispatcherFigures;
  /** Absent when no IO scope factory reports stats: those series stay at 0. */
  readonly io?: () => IoFigures;
}

/**
 * The `stats()` of a port implementation that has one, as a figures source: ExecutorCallRunner has
 * dispatcher stats (over the executor socket or the in-process link alike), StorageIoScopeFactory has
 * IO counters. A figure that
 * turns out not to be a number is skipped at scrape time, never reported as garbage.
 */
export function statsSourceOf<T>(port: unknown): (() => T) | undefined {
  const candidate = port as { stats?: unknown } | null | undefined;
  if (typeof candidate?.stats !== 'function') return undefined;
  const stats = candidate.stats as () => T;
  return () => stats.call(port);
}

/** Phase durations run from milliseconds (an empty call list) to the task deadline (minutes to hours). */
const PHASE_BUCKETS_S = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800];

/** The `code` label of a terminal task. */
export function taskOutcomeCode(state: TerminalTaskState, result: TaskResult): string {
  if (state === TaskState.SUCCEEDED) return 'SUCCEEDED';
  return result.executeResult.failureCode === '' ? 'FAILED' : result.executeResult.failureCode;
}

export class WorkerMetrics implements OrchestratorListener {
  readonly registry: Registry;
  private readonly tasks: Counter<'code'>;
  private readonly phases: Histogram<'phase'>;
  private readonly fused: Counter<'phase'>;
  private readonly executorRestarts: Counter;

  constructor(registry: Registry, sources: WorkerMetricsSources) {
    this.registry = registry;
    const registers = [registry];

    const slots = new Gauge({
      name: 'blockx_worker_slots',
      help: 'Task slots by state (the slot table: free, allocated = reserved, running).',
      labelNames: ['state'] as const,
      registers,
      collect: () => {
        const c = sources.slots();
        slots.set({ state: 'free' }, Math.max(0, c.taskSlots - c.reservedSlots - c.runningTasks));
        slots.set({ state: 'allocated' }, c.reservedSlots);
        slots.set({ state: 'running' }, c.runningTasks);
      },
    });

    this.tasks = new Counter({
      name: 'blockx_worker_tasks_total',
      help: 'Tasks converged, by outcome: SUCCEEDED or the failure code.',
      labelNames: ['code'] as const,
      registers,
    });
    this.phases = new Histogram({
      name: 'blockx_worker_phase_duration_seconds',
      help: 'Duration of a task phase (builder, calls, plugin), admission wait included.',
      labelNames: ['phase'] as const,
      buckets: PHASE_BUCKETS_S,
      registers,
    });
    this.fused = new Counter({
      name: 'blockx_worker_fused_tasks_total',
      help: 'Tasks that ran a phase (builder, calls, plugin) fused with others (docs/task-fusion.md).',
      labelNames: ['phase'] as const,
      registers,
    });
    this.executorRestarts = new Counter({
      name: 'blockx_executor_restarts_total',
      help: 'Executor processes lost (exited or silent); the supervisor restarts each with backoff.',
      registers,
    });

    const sems = Object.values(sources.semaphores);
    const waiting = new Gauge({
      name: 'blockx_worker_semaphore_waiting',
      help: 'Task phases waiting for admission, by semaphore.',
      labelNames: ['sem'] as const,
      registers,
      collect: () => {
        for (const sem of sems) waiting.set({ sem: sem.name }, sem.waiting);
      },
    });
    const inUse = new Gauge({
      name: 'blockx_worker_semaphore_in_use',
      help: 'Admission permits held, by semaphore.',
      labelNames: ['sem'] as const,
      registers,
      collect: () => {
        for (const sem of sems) inUse.set({ sem: sem.name }, sem.inUse);
      },
    });

    // Each series reads the stats itself: a few field copies per scrape, and no cache to go stale.
    const dispatcher = sources.dispatcher;
    cumulativeCounter(
      registry,
      'blockx_worker_call_attempts_total',
      'Call attempts dispatched to the executor (first attempts, retries and resumes).',
      () => dispatcher?.().attempts,
    );
    cumulativeCounter(
      registry,
      'blockx_worker_call_retries_total',
      'Call attempts after the first of a call.',
      () => dispatcher?.().retries,
    );
    const inflight = new Gauge({
      name: 'blockx_worker_dispatcher_inflight',
      help: 'Call attempts holding an execution slot (dispatched or running), over all tasks.',
      registers,
      collect: () => {
        const value = dispatcher?.().inflight;
        if (typeof value === 'number' && Number.isFinite(value)) inflight.set(value);
      },
    });

    const io = sources.io;
    cumulativeCounter(
      registry,
      'blockx_worker_io_cache_hits_total',
      'Task IO reads answered from the task-scoped read cache.',
      () => io?.().cacheHits,
    );
    cumulativeCounter(
      registry,
      'blockx_worker_io_cache_misses_total',
      'Task IO reads that went to storage.',
      () => io?.().cacheMisses,
    );
    cumulativeCounter(
      registry,
      'blockx_worker_io_retries_total',
      'Task IO operations retried after a retryable storage error.',
      () => io?.().retries,
    );
  }

  onTerminal(_taskId: string, state: TerminalTaskState, result: TaskResult): void {
    this.tasks.inc({ code: taskOutcomeCode(state, result) });
  }

  onPhaseFinished(timing: PhaseTiming): void {
    this.phases.observe({ phase: timing.phase }, Math.max(0, timing.durationMs) / 1000);
  }

  onPhaseFused(phase: PhaseTiming['phase'], tasks: number): void {
    this.fused.inc({ phase }, tasks);
  }

  /** The executor was lost (its process exited or went silent); the supervisor starts a new one. */
  executorLost(): void {
    this.executorRestarts.inc();
  }
}
