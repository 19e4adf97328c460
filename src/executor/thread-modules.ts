// The function modules of an execution thread (call-runner-thread.ts): each is imported once per thread
// through the epoch loader hooks (epoch-loader-hooks.ts), or, under isolation `task` (docs/security.md,
// "Task isolation"), once per task that calls it here, with a URL of its own per instance.

import type { MessagePort } from 'node:worker_threads';
import { readThrown } from './call-outcome.js';
import { functionOfModule } from './core/function-resolution.js';
import { countInstance, type ThreadModule, type ThreadSignals } from './thread-messages.js';

export type Fn = (...args: unknown[]) => unknown;
/** One module instance: the function once imported (or being imported). */
export interface ModuleInstance {
  readonly url: string;
  readonly path: string;
  fn: Fn | undefined;
  loading: Promise<Fn> | undefined;
}
export interface ModuleEntry extends ModuleInstance {
  /** The snapshot text; kept under isolation `task` (every task instance needs it), else dropped once sent. */
  code: string | undefined;
  /** Isolation `task`: the instance of each task, by task id. */
  readonly tasks: Map<string, ModuleInstance> | undefined;
}

export class ThreadModules {
  private readonly modules = new Map<string, ModuleEntry>();
  /** Numbers the task instances' URLs on this thread. */
  private instanceSeq = 0;

  constructor(
    private readonly hooksPort: MessagePort,
    private readonly signals: ThreadSignals,
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
      fn: undefined,
      loading: undefined,
      tasks: this.isolated ? new Map() : undefined,
    });
  }

  /** The instance `taskId` runs: the entry itself, or (isolation `task`) the task's own. */
  instanceFor(entry: ModuleEntry, taskId: string): ModuleInstance {
    if (entry.tasks === undefined) return entry;
    let inst = entry.tasks.get(taskId);
    if (inst === undefined) {
      inst = {
        url: `${entry.url}&blockx-instance=${++this.instanceSeq}`,
        path: entry.path,
        fn: undefined,
        loading: undefined,
      };
      entry.tasks.set(taskId, inst);
      countInstance(this.signals);
    }
    return inst;
  }

  load(entry: ModuleEntry, inst: ModuleInstance): Promise<Fn> {
    if (inst.loading) return inst.loading;
    this.hooksPort.postMessage({ url: inst.url, code: entry.code });
    if (entry.tasks === undefined) entry.code = undefined;
    inst.loading = import(inst.url).then(
      (mod: Record<string, unknown>) => {
        const found = functionOfModule(mod, entry.path);
        if (!found.ok) throw new Error(found.message);
        inst.fn = found.fn;
        return inst.fn;
      },
      (err: unknown) => {
        throw new Error(`cannot load ${entry.path}: ${readThrown(err).message}`);
      },
    );
    return inst.loading;
  }
}
