// The real TaskIoScopeFactory: one StorageTaskIoScope per running task, over the worker's storage
// backend. The orchestrator opens a scope at activation and closes it on convergence; the executor call
// path reaches a task's scope through `callIoHandler` (a property, handed to the ExecutorCallRunner).
//
// The factory owns the scopes, not the backend: `close()` closes every open scope (pending operations
// reject with CANCELLED) and refuses new ones; the app closes the backend after it.

import type { BlockxConfig } from '../../../../kernel/config-types.js';
import type { StorageBackend } from '../../../storage/types.js';
import { TaskIoError, TaskIoErrorCode } from '../../core/io/index.js';
import type { CallIoHandler, CallIoRequest } from '../../../call-host/index.js';
import type { TaskIoScopeFactory } from '../orchestration/ports.js';
import { serveCallIo } from './call-io-handler.js';
import { abortableSleep, type Sleep } from './retry-runner.js';
import { StorageTaskIoScope } from './task-io-scope.js';

export interface StorageIoScopeFactoryOptions {
  readonly backend: StorageBackend;
  readonly storage: BlockxConfig['storage'];
  /** Backoff sleep; must reject (or may never resolve) once `signal` aborts. Default: a real timer. */
  readonly sleep?: Sleep;
  /** Uniform [0, 1) for retry jitter. Default: Math.random. */
  readonly random?: () => number;
  /** Epoch ms, for the scopes' `openedAtMs`. Default: Date.now. */
  readonly now?: () => number;
}

export interface StorageIoScopeFactoryStats {
  readonly openScopes: number;
  /** Totals over every scope since the factory started. */
  readonly cacheHits: number;
  readonly cacheMisses: number;
  readonly retries: number;
}

export class StorageIoScopeFactory implements TaskIoScopeFactory {
  /** Says that storage is behind this factory (NoStorageIoScopeFactory says false). */
  readonly hasStorage = true as const;
  private readonly scopes = new Map<string, StorageTaskIoScope>();
  private readonly sleep: Sleep;
  private readonly random: () => number;
  private readonly now: () => number;
  private closed = false;
  private retries = 0;
  private closedCacheHits = 0;
  private closedCacheMisses = 0;

  /**
   * Serves a running function's `ctx.io` reads through its task's scope ('calls' retry scope). With the
   * read cache on, it also takes the hits of the executor's read copies (`countCopyHits`), which tells
   * the call runner that calls may keep copies of answers.
   */
  readonly callIoHandler: CallIoHandler;

  constructor(private readonly options: StorageIoScopeFactoryOptions) {
    const serve = (taskId: string, request: CallIoRequest): Promise<unknown> => {
      const scope = this.scopes.get(taskId);
      if (scope === undefined || scope.closed)
        return Promise.reject(
          new TaskIoError(
            TaskIoErrorCode.IO_SCOPE_CLOSED,
            `task ${taskId}: io.${request.op} on "${request.table}" but the task has no open IO scope`,
            { retryable: false, taskId, phase: 'calls', operation: request.op, table: request.table },
          ),
        );
      try {
        return serveCallIo(scope.io('calls'), this.options.backend.tables, taskId, request);
      } catch (err) {
        return Promise.reject(err);
      }
    };
    this.callIoHandler =
      options.storage.readCacheMaxEntries > 0
        ? Object.assign(serve, {
            countCopyHits: (taskId: string, hits: number) => this.scopes.get(taskId)?.countCopyHits(hits),
          })
        : serve;
    this.sleep = options.sleep ?? abortableSleep;
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
  }

  /** Scopes opened and not yet closed. */
  get openCount(): number {
    return this.scopes.size;
  }

  /** The open scope of a task (tests, diagnostics). */
  scopeOf(taskId: string): StorageTaskIoScope | undefined {
    return this.scopes.get(taskId);
  }

  open(taskId: string): Promise<StorageTaskIoScope> {
    if (this.closed)
      return Promise.reject(
        new TaskIoError(
          TaskIoErrorCode.IO_SCOPE_CLOSED,
          `task ${taskId}: cannot open an IO scope, the worker's IO subsystem is shut down`,
          // Another worker (or this one after a restart) can run the task.
          { retryable: true, taskId },
        ),
      );
    // A scope still open under this id belongs to an execution that already converged (the core never
    // runs one task id twice at once): close it so its leftovers cannot touch the new execution.
    void this.scopes.get(taskId)?.close();
    const scope = new StorageTaskIoScope({
      taskId,
      backend: this.options.backend,
      storage: this.options.storage,
      sleep: this.sleep,
      random: this.random,
      openedAtMs: this.now(),
      onRetry: () => this.retries++,
      onClose: (closing) => this.forget(closing),
    });
    this.scopes.set(taskId, scope);
    return Promise.resolve(scope);
  }

  stats(): StorageIoScopeFactoryStats {
    let cacheHits = this.closedCacheHits;
    let cacheMisses = this.closedCacheMisses;
    for (const scope of this.scopes.values()) {
      const s = scope.stats();
      cacheHits += s.cacheHits;
      cacheMisses += s.cacheMisses;
    }
    return { openScopes: this.scopes.size, cacheHits, cacheMisses, retries: this.retries };
  }

  /** Closes every open scope and refuses new ones. Idempotent. Does not close the backend. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.scopes.values()].map((scope) => scope.close()));
  }

  private forget(scope: StorageTaskIoScope): void {
    const s = scope.stats();
    this.closedCacheHits += s.cacheHits;
    this.closedCacheMisses += s.cacheMisses;
    if (this.scopes.get(scope.taskId) === scope) this.scopes.delete(scope.taskId);
  }
}
