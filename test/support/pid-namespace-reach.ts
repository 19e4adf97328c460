// Whether a test can start Executors as an unprivileged user in a PID namespace of their own (as a Worker
// running as root does: docs/security.md § An Executor as PID 1 of its own PID namespace), and if not why:
// not root, util-linux missing, or a checkout that user cannot reach (a clone in a 0700 folder, such as
// a fresh clone under mktemp -d or /root).
import { resolvePidNamespace } from '../../src/services/call-host/adapters/executor-pid-namespace.js';
import { resolveExecutorUser } from '../../src/services/call-host/adapters/executor-user.js';

export function pidNamespaceReach(
  runAs: string,
  paths: readonly string[],
): { decision: ReturnType<typeof resolvePidNamespace>; why: string } {
  const decision = resolvePidNamespace(true, true);
  const reach = decision.kind === 'on' ? resolveExecutorUser(runAs, [...paths]) : undefined;
  const why =
    decision.kind === 'off'
      ? 'not root'
      : decision.kind !== 'on'
        ? decision.warning.split(': ').slice(1).join(': ')
        : reach?.kind === 'error'
          ? `this checkout is out of reach of ${runAs}`
          : '';
  return { decision, why };
}
