// The IO side of `executor.user` (docs/security.md § Executors as their own user): read /etc/passwd,
// stat the files an Executor needs, and let core/executor-identity.ts decide.
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import {
  decideExecutorUser,
  parsePasswd,
  unreachableBecause,
  unwritableBecause,
  type ExecutorUserDecision,
  type PathMode,
  type UnixUser,
} from '../core/executor-identity.js';

/** `/`, then each ancestor, down to `path` itself (symlinks resolved), stat'ed; undefined if it is missing. */
export function statChain(path: string): PathMode[] | undefined {
  let real: string;
  try {
    real = realpathSync(resolve(path));
  } catch {
    return undefined;
  }
  const chain: PathMode[] = [];
  for (let p = real; ; p = dirname(p)) {
    const st = statSync(p);
    chain.unshift({ path: p, mode: st.mode, uid: st.uid, gid: st.gid, isDirectory: st.isDirectory() });
    if (dirname(p) === p) break;
  }
  return chain;
}

function readUsers(): UnixUser[] {
  try {
    return parsePasswd(readFileSync('/etc/passwd', 'utf8'));
  } catch {
    return [];
  }
}

/**
 * The user the Executors run as: `executor.user` against this process's uid, /etc/passwd, and whether
 * the candidate can read every path of `needs` (the package the executor runs from, the functions
 * folder, …). A path that does not exist is not held against the candidate (the Worker reports it where
 * it matters).
 */
export function resolveExecutorUser(
  setting: string,
  needs: readonly string[],
  writes: readonly string[] = [],
): ExecutorUserDecision {
  const chains = needs.map(statChain).filter((c): c is PathMode[] => c !== undefined);
  const folders = writes.map(statChain).filter((c): c is PathMode[] => c !== undefined);
  return decideExecutorUser({
    setting,
    selfUid: typeof process.getuid === 'function' ? process.getuid() : -1,
    users: readUsers(),
    reach: (who) => {
      for (const chain of chains) {
        const why = unreachableBecause(chain, who);
        if (why !== undefined) return why;
      }
      for (const chain of folders) {
        const why = unwritableBecause(chain, who);
        if (why !== undefined) return why;
      }
      return undefined;
    },
  });
}

/**
 * The folders an Executor writes files in: those of `EXECUTOR_CPU_PROFILE` and `EXECUTOR_TRACE` in the
 * environment it gets (docs/performance.md § Profiling).
 */
export function executorWriteFolders(env: NodeJS.ProcessEnv): string[] {
  return ['EXECUTOR_CPU_PROFILE', 'EXECUTOR_TRACE']
    .map((name) => env[name])
    .filter((file): file is string => typeof file === 'string' && file !== '')
    .map((file) => dirname(resolve(file)));
}
