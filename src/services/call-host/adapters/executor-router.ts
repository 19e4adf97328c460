// The language router: one dispatcher, one link per executor language (docs/executor.md § Python
// functions on a Worker).
//
//   ExecutorCallRunner ── ExecuteCall / CancelCall / ResumeCall / DropIoCache ──▶ router ─┬▶ JS link
//   (one DispatcherCore,                                                                  └▶ Python link
//    one set of call semantics) ◀── events of both links (executorLost filtered, below) ──┘
//
// - ExecuteCall goes to the executor of its function's language in the task's pinned epoch
//   (executor/core/functions-inventory.ts `languageOf`). A name defined in two languages fails the attempt with
//   a load error (not retryable) naming both files; a name no file defines, in an epoch with a `.py`
//   file, fails with FUNCTION_NOT_FOUND listing the functions of both languages; a Python function while Python is off fails the
//   same way, naming the setting. Those failures are emitted on a microtask, like the link's own.
// - CancelCall / ResumeCall follow the attempt: calls sent to Python are remembered (callId → Python)
//   until their terminal event, everything else is the JS link's. A subcall is a call of its own, so a
//   JS function calling a Python one (and back) needs nothing more: the dispatcher answers the parent
//   with a ResumeCall, which goes to the parent's link.
// - Losing one executor fails only its own attempts: the lost link emits `executorLost` and then one
//   retryable `callFailed` per attempt it had sent. While both executors are active the router does not
//   pass `executorLost` on (the dispatcher's `executorLost` fails every attempt at any executor and
//   holds dispatching); the per-attempt failures do the work and the lost link holds new calls until
//   its restarted executor is ready. With only the JS executor active the events pass unchanged.
//
// Cost on the JS path: one Map lookup per ExecuteCalls command (the epoch's inventory, cached per epoch)
// and one Map lookup per CancelCall / ResumeCall.

import { ExecutorErrorCode } from '../../../executor/errors.js';
import { ManualExecutorReadiness, type ExecutorReadiness, type ExecutorReadinessEvent } from '../ports.js';
import {
  buildFunctionsInventory,
  collisionMessage,
  languageOf,
  notFoundMessage,
  type FunctionLanguage,
  type FunctionsInventory,
} from '../../../executor/core/functions-inventory.js';
import { executeEach, type ExecutorLinkCommands } from './executor-call-io.js';
import type { ExecuteCallCommand, ExecutorLinkEvent, ResumeOutcome } from './executor-link.js';

/** What the router needs of the code view: the files of an epoch snapshot. */
export interface EpochFilesSource {
  snapshot(epoch: string): { readonly files: readonly { readonly fileName: string }[] } | undefined;
}

/** Inventories of live epochs, built once per epoch (an epoch's files never change). */
export class EpochInventories {
  private readonly cache = new Map<string, FunctionsInventory>();

  constructor(
    private readonly view: EpochFilesSource,
    /** Called once per epoch when its inventory is built (collision logs, lazy Python start). */
    private readonly onNew?: (epoch: string, inventory: FunctionsInventory) => void,
  ) {}

  /** The inventory of a live epoch; undefined for an epoch the view does not hold. */
  of(epoch: string): FunctionsInventory | undefined {
    const hit = this.cache.get(epoch);
    if (hit !== undefined) return hit;
    const snap = this.view.snapshot(epoch);
    if (snap === undefined) return undefined;
    const inventory = buildFunctionsInventory(snap.files);
    this.cache.set(epoch, inventory);
    this.onNew?.(epoch, inventory);
    return inventory;
  }

  /** The epoch was retired (no task uses it, it is not current). */
  forget(epoch: string): void {
    this.cache.delete(epoch);
  }
}

export interface ExecutorRouterOptions {
  readonly js: ExecutorLinkCommands;
  /** Absent when Python functions are off (`executor.python.enabled: off`). */
  readonly python?: ExecutorLinkCommands;
  readonly inventories: EpochInventories;
  readonly functionsDir: string;
  /** The runner's event handler: every event of both links, filtered as above. */
  readonly deliver: (event: ExecutorLinkEvent) => void;
  /** The first call for Python while its executor is not started (lazy start). */
  readonly onPythonNeeded?: () => void;
}

export class ExecutorRouter implements ExecutorLinkCommands {
  private readonly js: ExecutorLinkCommands;
  private readonly python: ExecutorLinkCommands | undefined;
  private readonly opts: ExecutorRouterOptions;
  /**
   * Calls sent to the Python link → their latest attempt, until that attempt's terminal event (an
   * earlier attempt's late terminal, after a budget cancel and a retry, leaves the entry alone).
   */
  private readonly pythonCalls = new Map<string, number>();
  private pythonActive = false;

  constructor(options: ExecutorRouterOptions) {
    this.opts = options;
    this.js = options.js;
    this.python = options.python;
  }

  /** Any executor ready (the dispatcher's initial state; each link holds calls until its own is). */
  get ready(): boolean {
    return this.js.ready || (this.pythonActive && this.python!.ready);
  }

  /** Whether the Python executor has been started (both links are then in use). */
  get pythonStarted(): boolean {
    return this.pythonActive;
  }

  /** Attempts at the Python link now. */
  get pythonInflight(): number {
    return this.pythonCalls.size;
  }

  /** The Python supervisor was started: from now on both links are active. */
  activatePython(): void {
    if (this.python !== undefined) this.pythonActive = true;
  }

  executeCall(command: ExecuteCallCommand): void {
    const inventory = this.opts.inventories.of(command.codeEpoch);
    // An epoch the view does not hold: the JS executor answers EPOCH_UNKNOWN, as without a router.
    if (inventory === undefined || (!inventory.hasPython && inventory.collisions.length === 0)) {
      this.js.executeCall(command);
      return;
    }
    const route = languageOf(command.function, inventory);
    if (!route.ok) {
      if ('missing' in route) {
        const { functionsDir } = this.opts;
        const message = notFoundMessage(route.missing, inventory, functionsDir, command.codeEpoch);
        this.failLater(command, message, true, ExecutorErrorCode.FUNCTION_NOT_FOUND);
      } else this.failLater(command, collisionMessage(route.collision, this.opts.functionsDir));
      return;
    }
    if (route.language === 'js') {
      this.js.executeCall(command);
      return;
    }
    const python = this.python;
    if (python === undefined) {
      this.failLater(
        command,
        `function "${command.function}" is a Python function (${command.function}.py in ` +
          `${this.opts.functionsDir}) and Python functions are off on this worker ` +
          `(executor.python.enabled: off)`,
      );
      return;
    }
    if (!this.pythonActive) this.opts.onPythonNeeded?.();
    python.executeCall(command);
    this.pythonCalls.set(command.callId, command.attempt);
  }

  /** A task's attempts: all to the JS link at once when its epoch has no Python function, else each routed. */
  executeCalls(commands: readonly ExecuteCallCommand[]): void {
    const first = commands[0];
    if (first === undefined) return;
    const inventory = this.opts.inventories.of(first.codeEpoch);
    const jsOnly = inventory === undefined || (!inventory.hasPython && inventory.collisions.length === 0);
    if (jsOnly && commands.every((c) => c.codeEpoch === first.codeEpoch)) {
      executeEach(this.js, commands, (c, err) => this.refuseLater(c, err));
      return;
    }
    for (const command of commands) {
      try {
        this.executeCall(command);
      } catch (err) {
        this.refuseLater(command, err);
      }
    }
  }

  cancelCall(callId: string, attempt: number, reason?: string): void {
    this.linkOf(callId).cancelCall(callId, attempt, reason);
  }

  resumeCall(callId: string, attempt: number, outcome: ResumeOutcome): void {
    this.linkOf(callId).resumeCall(callId, attempt, outcome);
  }

  dropIoCache(ioCache: string): void {
    this.js.dropIoCache(ioCache);
    if (this.pythonActive) this.python!.dropIoCache(ioCache);
  }

  /** The supervisor `onEvent` of the link of `language` (one function per language, made once). */
  eventsOf(language: FunctionLanguage): (event: ExecutorLinkEvent) => void {
    return language === 'python' ? this.fromPython : this.fromJs;
  }

  private readonly fromJs = (ev: ExecutorLinkEvent): void => {
    // Both executors active: a loss fails only the lost link's attempts (its callFailed events).
    if (ev.type === 'executorLost' && this.pythonActive) return;
    this.opts.deliver(ev);
  };

  private readonly fromPython = (ev: ExecutorLinkEvent): void => {
    if (
      (ev.type === 'callCompleted' || ev.type === 'callFailed') &&
      this.pythonCalls.get(ev.callId) === ev.attempt
    ) {
      this.pythonCalls.delete(ev.callId);
    } else if (ev.type === 'callsCompleted') {
      for (const r of ev.results)
        if (this.pythonCalls.get(r.callId) === r.attempt) this.pythonCalls.delete(r.callId);
    } else if (ev.type === 'executorLost' && this.pythonActive) {
      return;
    }
    this.opts.deliver(ev);
  };

  private linkOf(callId: string): ExecutorLinkCommands {
    return this.pythonCalls.has(callId) ? this.python! : this.js;
  }

  /** The link refused the attempt (it is still in flight): the answer executeCalls gives, a retryable crash. */
  private refuseLater(command: ExecuteCallCommand, err: unknown): void {
    this.failLater(command, `the executor link refused the call: ${(err as Error).message}`, false);
  }

  /** A load failure of the attempt (`load` true, not retryable), or a refusal (a retryable crash). */
  private failLater(
    command: ExecuteCallCommand,
    message: string,
    load = true,
    code: string = ExecutorErrorCode.FUNCTION_LOAD_FAILED,
  ): void {
    const { taskId, callId, attempt } = command;
    queueMicrotask(() =>
      this.opts.deliver(
        load
          ? {
              type: 'callFailed',
              taskId,
              callId,
              attempt,
              kind: 'load',
              retryable: false,
              code,
              message,
            }
          : { type: 'callFailed', taskId, callId, attempt, kind: 'executor_crash', retryable: true, message },
      ),
    );
  }
}

/** Which files of an epoch an executor of `language` gets in its DefineEpoch. */
export function epochSourceFor<
  S extends { readonly files: readonly { readonly fileName: string }[] },
  V extends {
    snapshot(epoch: string): S | undefined;
    onRetire(listener: (epoch: string) => void): () => void;
  },
>(view: V, language: FunctionLanguage, keep: (fileName: string) => FunctionLanguage | null) {
  const filtered = new WeakMap<S, S>();
  return {
    snapshot(epoch: string): S | undefined {
      const snap = view.snapshot(epoch);
      if (snap === undefined) return undefined;
      let mine = filtered.get(snap);
      if (mine === undefined) {
        mine = { ...snap, files: snap.files.filter((f) => keep(f.fileName) === language) };
        filtered.set(snap, mine);
      }
      return mine;
    },
    onRetire: (listener: (epoch: string) => void) => view.onRetire(listener),
  };
}

// ---- Readiness of the executor set ----
//
// Readiness of a Worker with one executor per function language (docs/executor.md § Python functions
// on a Worker): ready when every executor it needs is ready; the loss of any one closes admissions until
// it is back (the orchestrator counts each loss as a restart, as with one executor).
//
// An executor that becomes needed while the Worker runs (the first `.py` function appeared) does not
// close admissions while it starts: its calls wait in its link, unstarted, so no budget runs, and the
// Worker's other functions keep serving. Its first `ready` is then just one more `ready`.

export class ExecutorSetReadiness implements ExecutorReadiness {
  private readonly manual = new ManualExecutorReadiness(false);
  private readonly needed = new Set<FunctionLanguage>(['js']);
  private readonly up = new Set<FunctionLanguage>();

  /** Languages whose executors the Worker runs now (JS always). */
  get languages(): readonly FunctionLanguage[] {
    return [...this.needed];
  }

  /** Whether every needed executor is ready. */
  get ready(): boolean {
    for (const l of this.needed) if (!this.up.has(l)) return false;
    return true;
  }

  subscribe(listener: (event: ExecutorReadinessEvent) => void): () => void {
    return this.manual.subscribe(listener);
  }

  /** The Worker runs an executor for `language` from now on. */
  need(language: FunctionLanguage): void {
    this.needed.add(language);
  }

  executorReady(language: FunctionLanguage): void {
    this.up.add(language);
    if (this.ready) this.manual.markReady();
  }

  executorLost(language: FunctionLanguage, reason: string): void {
    this.up.delete(language);
    this.manual.markLost(`${language === 'js' ? 'executor' : `${language} executor`} lost: ${reason}`);
  }
}
