// Trivial implementations of the orchestrator's ports (ports.ts), for a worker that runs without the
// subsystems that supply the real ones:
//
//   NoStorageIoScopeFactory  the IO subsystem is not wired: scopes open fine (a task that never touches
//                            storage, like hello_world with ReturnValueResultHandler, runs), and every
//                            IO operation rejects with NoStorageError (not retryable).
//   StaticCodeEpochSource    one fixed epoch; pins are counted only so tests can check they are released.
//   ManualExecutorReadiness  readiness pushed by hand (tests, the in-process link: ready at once; the app
//                            feeds it from the executor link's executorReady / executorLost events).
//   codeEpochsFromView       the real CodeEpochSource over the executor's FunctionCodeView.

import { rowScan } from '../../../../kernel/row-scan.js';
import type {
  EncodedRow,
  Row,
  ScanQuery,
  TaskIo,
  TaskIoTransaction,
} from '../../../../kernel/plugin-types.js';
import { NoStorageError } from '../errors.js';
import type {
  CodeEpochPin,
  CodeEpochSource,
  ExecutorReadiness,
  ExecutorReadinessEvent,
  TaskIoScope,
  TaskIoScopeFactory,
} from './ports.js';
import { parseAnyFunctionFileName } from '../../../../executor/core/functions-inventory.js';

export class NoStorageIoScopeFactory implements TaskIoScopeFactory {
  /** Says plainly that there is no storage behind this factory (for logs and `blockx status`). */
  readonly hasStorage = false as const;
  private openScopes = 0;

  /** Scopes opened and not yet closed (tests check every scope is closed on convergence). */
  get openCount(): number {
    return this.openScopes;
  }

  open(taskId: string): Promise<TaskIoScope> {
    this.openScopes++;
    let closed = false;
    const fail = (operation: string): Promise<never> => Promise.reject(new NoStorageError(taskId, operation));
    const io: TaskIo = {
      get: () => fail('get'),
      getMany: () => fail('getMany'),
      scan: (_table: string, _query?: ScanQuery) => rowScan<Row>(() => ({ next: () => fail('scan') })),
      scanJson: () => rowScan<EncodedRow>(() => ({ next: () => fail('scanJson') })),
      transaction: <T>(_fn: (tx: TaskIoTransaction) => Promise<T>): Promise<T> => fail('transaction'),
    };
    const scope: TaskIoScope = {
      io: () => io,
      close: async () => {
        if (closed) return;
        closed = true;
        this.openScopes--;
      },
    };
    return Promise.resolve(scope);
  }
}

export class StaticCodeEpochSource implements CodeEpochSource {
  private pinned = 0;
  constructor(readonly epoch = 'local') {}

  /** Pins not yet released. */
  get pins(): number {
    return this.pinned;
  }

  pin(): Promise<CodeEpochPin> {
    this.pinned++;
    let released = false;
    return Promise.resolve({
      epoch: this.epoch,
      release: () => {
        if (released) return;
        released = true;
        this.pinned--;
      },
    });
  }
}

export class ManualExecutorReadiness implements ExecutorReadiness {
  private readonly listeners = new Set<(event: ExecutorReadinessEvent) => void>();
  private last: ExecutorReadinessEvent | undefined;

  constructor(initiallyReady = false) {
    if (initiallyReady) this.last = { type: 'ready' };
  }

  subscribe(listener: (event: ExecutorReadinessEvent) => void): () => void {
    this.listeners.add(listener);
    if (this.last !== undefined) listener(this.last);
    return () => this.listeners.delete(listener);
  }

  markReady(): void {
    this.emit({ type: 'ready' });
  }

  markLost(reason: string): void {
    this.emit({ type: 'lost', reason });
  }

  private emit(event: ExecutorReadinessEvent): void {
    this.last = event;
    for (const listener of [...this.listeners]) listener(event);
  }
}

/** What codeEpochsFromView needs of a Function Code View (src/executor/code-epochs.ts FunctionCodeView). */
export interface PinnableCodeView {
  /** Resolves the current epoch and pins it in one step. */
  pinCurrent(): Promise<string>;
  unpin(epoch: string): void;
  /** The files of a pinned epoch (gives the source its functionNames). */
  snapshot?(epoch: string): { readonly files: readonly { readonly fileName: string }[] } | undefined;
}

/** A CodeEpochSource over a Function Code View: pin at activation, unpin exactly once on convergence. */
export function codeEpochsFromView(view: PinnableCodeView): CodeEpochSource {
  const snapshot = view.snapshot?.bind(view);
  return {
    ...(snapshot === undefined
      ? {}
      : {
          async functionNames(): Promise<readonly string[]> {
            const epoch = await view.pinCurrent();
            try {
              const names = (snapshot(epoch)?.files ?? []).flatMap(
                (f) => parseAnyFunctionFileName(f.fileName)?.name ?? [],
              );
              return [...new Set(names)].sort();
            } finally {
              view.unpin(epoch);
            }
          },
        }),
    async pin(): Promise<CodeEpochPin> {
      const epoch = await view.pinCurrent();
      let released = false;
      return {
        epoch,
        release: () => {
          if (released) return;
          released = true;
          view.unpin(epoch);
        },
      };
    },
  };
}
