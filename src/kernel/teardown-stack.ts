// One async-disposable stack per process: everything an assembly starts registers how to stop it, and
// teardown runs those steps once, last started first (TC39's AsyncDisposableStack, which Node 20 lacks).
// The app layer's lifecycle owns one; a service's runner (run-worker.ts, run-coordinator.ts) keeps its
// own for what it starts, so it lives here, below both.
//
//   defer(step, fn)      register a teardown step
//   adopt(step, thing)   register `thing.close()`, return `thing`
//   disposeAsync()       run every step in LIFO order; a step that throws or rejects does not stop the
//                        others; afterwards reject with one TeardownError listing every failure.
//                        Idempotent: later calls return the same promise and run nothing again.
//
// Registering on a stack that is disposing or disposed throws: the caller started something after the
// process began to stop, and must stop it itself.
import { TeardownError, type TeardownFailure } from './errors.js';

interface Step {
  readonly name: string;
  readonly run: () => unknown;
}

export class TeardownStack {
  private readonly steps: Step[] = [];
  private disposing: Promise<void> | undefined;

  /** True once disposeAsync() was called. */
  get disposed(): boolean {
    return this.disposing !== undefined;
  }

  /** How many steps are registered and not yet run. */
  get size(): number {
    return this.steps.length;
  }

  defer(step: string, run: () => unknown): void {
    if (this.disposing !== undefined) {
      throw new TypeError(`TeardownStack: cannot register "${step}", the stack is already disposed`);
    }
    this.steps.push({ name: step, run });
  }

  adopt<T extends { close(): unknown }>(step: string, resource: T): T {
    this.defer(step, () => resource.close());
    return resource;
  }

  disposeAsync(): Promise<void> {
    this.disposing ??= this.runAll();
    return this.disposing;
  }

  private async runAll(): Promise<void> {
    const failures: TeardownFailure[] = [];
    for (let step = this.steps.pop(); step !== undefined; step = this.steps.pop()) {
      try {
        await step.run();
      } catch (error) {
        failures.push({ step: step.name, error });
      }
    }
    if (failures.length > 0) throw new TeardownError(failures);
  }
}
