// The function modules of an execution thread (call-runner-thread.ts). Each is the instance module of
// one function of one epoch (module-factory.ts), imported once per thread through the epoch loader hooks
// (epoch-loader-hooks.ts). An instance of the function's module is one call of that module's factory:
// under isolation `task` (docs/security.md, "Task isolation") one per task that calls the function on
// this thread, under `none` one for every task.
//
// The thread is not told when a task ends, so it keeps the instances of at least the TASK_INSTANCES_KEPT
// tasks that called a module most recently, at most twice as many (recent-instances.ts); older ones are
// dropped (garbage, nothing else holds them), and a task whose instance was dropped gets a new one if it
// calls again (docs/executor.md, "Module instances").

import type { MessagePort } from 'node:worker_threads';
import { readThrown } from './call-outcome.js';
import { functionOfModule } from './core/function-resolution.js';
import { INSTANTIATE_EXPORT } from './module-factory.js';
import { RecentInstances } from './recent-instances.js';
import type { ThreadModule } from './thread-messages.js';

export type Fn = (...args: unknown[]) => unknown;
/** The function of one module instance, or its making (an import, an async factory); rejects with the load failure. */
type Instance = Fn | Promise<Fn>;
type Factory = () => unknown;

/**
 * Task instances a thread keeps per module (isolation `task`): at least this many of the most recently
 * used, at most twice as many (recent-instances.ts), so at most 1,024 as with the exact LRU of 1,024
 * it replaced.
 */
export const TASK_INSTANCES_KEPT = 512;

export interface ModuleEntry {
  readonly url: string;
  readonly path: string;
  /** The instance module's text until it is sent to the loader hooks. */
  code: string | undefined;
  factory: Factory | undefined;
  loading: Promise<Factory> | undefined;
  /** Isolation `none`: the one instance. */
  shared: Instance | undefined;
  /** Isolation `task`: the instance of each task that used the module recently. */
  readonly tasks: RecentInstances<Instance>;
}

export class ThreadModules {
  private readonly modules = new Map<string, ModuleEntry>();

  constructor(
    private readonly hooksPort: MessagePort,
    private readonly isolated: boolean,
  ) {}

  get(moduleKey: string): ModuleEntry | undefined {
    return this.modules.get(moduleKey);
  }

  add(m: ThreadModule): void {
    if (this.modules.has(m.moduleKey)) return;
    this.modules.set(m.moduleKey, {
      url: m.url,
      path: m.path,
      code: m.code,
      factory: undefined,
      loading: undefined,
      shared: undefined,
      tasks: new RecentInstances(TASK_INSTANCES_KEPT),
    });
  }

  /** The function `taskId` runs: at once when its instance exists, else a promise of it. */
  fnFor(entry: ModuleEntry, taskId: string): Instance {
    if (!this.isolated) return (entry.shared ??= this.instantiate(entry, (fn) => (entry.shared = fn)));
    const tasks = entry.tasks;
    let inst = tasks.get(taskId);
    if (inst === undefined) {
      inst = this.instantiate(entry, (fn) => tasks.get(taskId) === inst && tasks.set(taskId, fn));
      tasks.set(taskId, inst);
    }
    return inst;
  }

  /** One new instance; `settled` gets its function when that was not known at once. */
  private instantiate(entry: ModuleEntry, settled: (fn: Fn) => void): Instance {
    const made = entry.factory
      ? instanceOf(entry, entry.factory)
      : this.factory(entry).then((f) => instanceOf(entry, f));
    if (typeof made === 'function') return made;
    void made.then(settled, () => undefined);
    return made;
  }

  private factory(entry: ModuleEntry): Promise<Factory> {
    if (entry.loading) return entry.loading;
    this.hooksPort.postMessage({ url: entry.url, code: entry.code });
    entry.code = undefined;
    entry.loading = import(entry.url).then(
      (mod: Record<string, unknown>) => (entry.factory = mod[INSTANTIATE_EXPORT] as Factory),
      (err: unknown) => {
        throw loadError(entry, err);
      },
    );
    return entry.loading;
  }
}

/** Runs the module's statements once more: its function, or the failure as a rejected promise. */
function instanceOf(entry: ModuleEntry, factory: Factory): Instance {
  let exports: unknown;
  try {
    exports = factory();
  } catch (err) {
    return Promise.reject(loadError(entry, err));
  }
  if (exports instanceof Promise) {
    return exports.then(
      (e: Record<string, unknown>) => fnOf(entry, e),
      (err: unknown) => {
        throw loadError(entry, err);
      },
    );
  }
  return fnOf(entry, exports as Record<string, unknown>);
}

function fnOf(entry: ModuleEntry, exports: Record<string, unknown>): Instance {
  const found = functionOfModule(exports, entry.path);
  return found.ok ? found.fn : Promise.reject(new Error(found.message));
}

function loadError(entry: ModuleEntry, err: unknown): Error {
  return new Error(`cannot load ${entry.path}: ${readThrown(err).message}`);
}
