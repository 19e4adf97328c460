// The one service lifecycle of `blockx up`, `blockx worker` and `blockx coordinator`
// (docs/architecture.md § Code layout):
//
//   boot        bootKernel: config → plugins → configLoaded           (the command, before this)
//   assemble    `assemble(stack)` starts the process's services; each one registers its teardown on
//               the one TeardownStack as it starts
//   assembled   hooks.serviceAssembled(plan)
//   run         the command serves until its stop condition (signals, `--once`, a test)
//   stop        the stack unwinds (last started, first stopped), then hooks.shutdown(reason)
//
// A failure while assembling, or a serviceAssembled tap that fails, unwinds what was started and
// rethrows; shutdown then does not fire (the services never ran). Teardown steps that fail are logged
// and returned by stop(), and the shutdown hook fires anyway; a shutdown tap that fails rejects stop().
import type { ShutdownReason } from '../kernel/hooks.js';
import type { Kernel } from '../kernel/kernel.js';
import type { ServicePlan } from '../kernel/service-plan.js';
import { TeardownError, type TeardownFailure } from '../kernel/errors.js';
import { TeardownStack } from '../kernel/teardown-stack.js';

/** Where teardown failures are reported (a pino logger satisfies it). */
export interface LifecycleLogger {
  error(obj: Record<string, unknown>, msg: string): void;
}

export interface StartServicesOptions<T> {
  readonly kernel: Pick<Kernel, 'hooks'>;
  /** What serviceAssembled receives: the services this process runs. */
  readonly plan: ServicePlan;
  readonly logger: LifecycleLogger;
  /** Starts the services; everything it starts is registered on `stack`. */
  readonly assemble: (stack: TeardownStack) => Promise<T>;
}

export interface AssembledServices<T> {
  readonly services: T;
  readonly plan: ServicePlan;
  /**
   * Unwinds the stack, then fires hooks.shutdown(reason). Resolves with the teardown steps that failed
   * (each also logged). Idempotent: later calls return the first call's promise.
   */
  stop(reason: ShutdownReason): Promise<readonly TeardownFailure[]>;
}

export async function startServices<T>(opts: StartServicesOptions<T>): Promise<AssembledServices<T>> {
  const { kernel, plan, logger } = opts;
  const stack = new TeardownStack();
  const unwind = async (): Promise<readonly TeardownFailure[]> => {
    try {
      await stack.disposeAsync();
      return [];
    } catch (err) {
      const failures = err instanceof TeardownError ? err.failures : [{ step: '(stack)', error: err }];
      for (const f of failures) logger.error({ err: f.error, step: f.step }, 'stop failed');
      return failures;
    }
  };
  let services: T;
  try {
    services = await opts.assemble(stack);
    await kernel.hooks.serviceAssembled.promise(plan);
  } catch (err) {
    await unwind();
    throw err;
  }
  let stopping: Promise<readonly TeardownFailure[]> | undefined;
  return {
    services,
    plan,
    stop: (reason) =>
      (stopping ??= (async () => {
        const failures = await unwind();
        await kernel.hooks.shutdown.promise(reason);
        return failures;
      })()),
  };
}
