// Trivial implementations of the orchestrator's ports (ports.ts), for a worker that runs without the
// subsystems that supply the real ones:
//
//   NoStorageIoScopeFactory  the IO subsystem is not wired: scopes open fine (a task that never touches
//                            storage, like hello_world with ReturnValueResultHandler, runs), and every
//                            IO operation rejects with NoStorageError (not retryable).
//   StaticCodeEpochSource    one fixed epoch; pins are counted only so tests can check they are released.
//
// The call host's ManualExecutorReadiness and codeEpochsFromView are the other two defaults
// (src/services/call-host/ports.ts).

import { rowScan } from '../../../../kernel/row-scan.js';
import type {
  EncodedRow,
  Row,
  ScanQuery,
  TaskIo,
  TaskIoTransaction,
} from '../../../../kernel/plugin-types.js';
import { NoStorageError, type CodeEpochPin, type CodeEpochSource } from '../../../call-host/index.js';
import type { TaskIoScope, TaskIoScopeFactory } from './ports.js';

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
