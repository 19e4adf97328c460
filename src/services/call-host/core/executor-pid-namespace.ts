// Whether each Executor runs as PID 1 of a PID namespace of its own (`executor.pidNamespace`, docs/security.md
// § An Executor as PID 1 of its own PID namespace), and the command that starts it so.
//
// Pure: the caller looks for the tools and tries them once (adapters/executor-pid-namespace.ts).
//
// Why PID 1: a function's child processes run as the Executor's user, so without this they could send
// it SIGKILL or SIGSTOP and end or freeze every other tenant's calls on it. The kernel delivers a signal
// from inside a PID namespace to that namespace's init only if init handles it, and never SIGKILL or
// SIGSTOP; from the parent namespace (the Worker) SIGKILL still goes through, and when init ends, the
// kernel kills everything else in its namespace.
//
// The command, outermost first (util-linux, each keeping the fds it was given, so the spawn secret's
// fd 3 reaches the Executor):
//   unshare --pid --fork --kill-child --mount-proc --propagation slave
//       a new PID namespace whose init is the forked child; --kill-child: that child gets SIGKILL when
//       this unshare process dies (the Worker's kill reaches it through unshare); --mount-proc: /proc
//       shows the namespace's processes only (the Worker's are not there to read or name), in a mount
//       namespace of its own that still receives the host's later mounts (slave).
//   setpriv --reuid U --regid G --clear-groups --pdeathsig keep      (with `executor.user`)
//       the drop to the Executor's user happens inside: unshare needs root. Changing the uid clears the
//       parent-death signal, so --pdeathsig keep sets it again (without it a killed unshare left the
//       Executor running, measured).
//   prlimit --nproc=N:N                                               (with `executor.maxProcesses`)
//   node --disable-wasm-trap-handler …  (the JS Executor)
//       V8's WebAssembly trap handler is a SIGSEGV handler, so init would take a SIGSEGV sent from
//       inside: the handler finds no fault of its own, uninstalls itself and the next out-of-bounds
//       WebAssembly access crashes the Executor (measured). Without it, WebAssembly checks bounds in code.

import type { UnixUser } from './executor-identity.js';

/** Paths of the util-linux tools the command needs (setpriv only when the Executor drops its user). */
export interface PidNamespaceTools {
  readonly unshare: string;
  readonly setpriv?: string;
}

/** The part of the Executor's command that depends on its program: node gets its flag, others nothing. */
export interface ExecutorProgram {
  readonly command: readonly string[];
  /** The node binary, whose next argument may be a node flag (process.execPath). */
  readonly node: string;
}

/** The Executor's command as PID 1 of its own namespace, as its user (see the header). */
export function pidNamespaceCommand(
  program: ExecutorProgram,
  tools: PidNamespaceTools,
  runAs: UnixUser | undefined,
): string[] {
  if (program.command.length === 0) throw new Error('pidNamespaceCommand: an empty command');
  // A wrapper (prlimit) may come first: the flag goes right after the node binary, wherever it is.
  const at = program.command.indexOf(program.node);
  const inner =
    at < 0
      ? program.command
      : [
          ...program.command.slice(0, at + 1),
          '--disable-wasm-trap-handler',
          ...program.command.slice(at + 1),
        ];
  const drop =
    runAs === undefined
      ? []
      : [
          requireSetpriv(tools),
          `--reuid=${runAs.uid}`,
          `--regid=${runAs.gid}`,
          '--clear-groups',
          '--pdeathsig=keep',
          '--',
        ];
  return [
    tools.unshare,
    '--pid',
    '--fork',
    '--kill-child',
    '--mount-proc',
    '--propagation=slave',
    '--',
    ...drop,
    ...inner,
  ];
}

function requireSetpriv(tools: PidNamespaceTools): string {
  if (tools.setpriv === undefined) throw new Error('pidNamespaceCommand: a user to drop to needs setpriv');
  return tools.setpriv;
}

export type PidNamespaceDecision =
  | { readonly kind: 'on'; readonly tools: PidNamespaceTools }
  | { readonly kind: 'off' }
  | { readonly kind: 'off-with-warning'; readonly warning: string };

export interface PidNamespaceInput {
  /** `executor.pidNamespace`. */
  readonly enabled: boolean;
  /** The Worker's own uid. */
  readonly selfUid: number;
  /** Whether the Executors drop to a user of their own (executor.user), which needs setpriv. */
  readonly dropsUser: boolean;
  readonly unshare: string | undefined;
  readonly setpriv: string | undefined;
  /** Why a trial `unshare --pid …` failed, or undefined when it worked; asked only when the rest holds. */
  readonly trial: (tools: PidNamespaceTools) => string | undefined;
}

/** The one warning of a Worker as root whose Executors cannot have their namespace. */
export function pidNamespaceWarning(why: string): string {
  return (
    `executors run without a PID namespace of their own, so a child process a function starts can kill or stop ` +
    `its executor (and every call on it is retried): ${why}. Install util-linux, or set executor.pidNamespace: false ` +
    `to drop this warning (docs/security.md § An Executor as PID 1 of its own PID namespace)`
  );
}

/**
 * On when the setting allows it, the Worker runs as root (making a PID namespace needs CAP_SYS_ADMIN, and
 * the Executors run as a user of their own only then), and the tools are there and work; as root and
 * enabled, each way it cannot be is one warning. Not root: off, silently (the Executors then run as the
 * Worker's own user, which can signal the Worker itself: the namespace would not change what they reach).
 */
export function decidePidNamespace(input: PidNamespaceInput): PidNamespaceDecision {
  if (!input.enabled || input.selfUid !== 0) return { kind: 'off' };
  if (input.unshare === undefined)
    return { kind: 'off-with-warning', warning: pidNamespaceWarning('util-linux unshare is not installed') };
  if (input.dropsUser && input.setpriv === undefined)
    return {
      kind: 'off-with-warning',
      warning: pidNamespaceWarning('util-linux setpriv is not installed (it drops to executor.user inside)'),
    };
  const tools: PidNamespaceTools = {
    unshare: input.unshare,
    ...(input.dropsUser && input.setpriv !== undefined ? { setpriv: input.setpriv } : {}),
  };
  const failed = input.trial(tools);
  if (failed !== undefined)
    return {
      kind: 'off-with-warning',
      warning: pidNamespaceWarning(`unshare --pid failed here (${failed})`),
    };
  return { kind: 'on', tools };
}
