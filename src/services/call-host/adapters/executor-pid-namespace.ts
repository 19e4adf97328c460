// The IO side of `executor.pidNamespace` (docs/security.md § An Executor as PID 1 of its own PID namespace):
// find util-linux's unshare and setpriv, try a namespace once, and find the Executor's pid as the Worker
// sees it. core/executor-pid-namespace.ts decides and builds the command.
import { spawnSync } from 'node:child_process';
import { accessSync, constants as fsConstants, readdirSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import {
  decidePidNamespace,
  pidNamespaceCommand,
  type PidNamespaceDecision,
  type PidNamespaceTools,
} from '../core/executor-pid-namespace.js';

/** `name` on the PATH, else in /usr/bin or /bin (where util-linux puts it), or undefined. */
export function findTool(name: string, path = process.env.PATH ?? ''): string | undefined {
  for (const dir of [...path.split(delimiter), '/usr/bin', '/bin']) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, fsConstants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** How long the trial namespace may take (it runs `true`). */
const TRIAL_TIMEOUT_MS = 10_000;
/** Trials made in this process, by whether they dropped a user (`blockx up` runs several Workers). */
const trials = new Map<string, string | undefined>();

/** Why `unshare --pid …` cannot start a program here (its first line of stderr), or undefined. */
function trial(tools: PidNamespaceTools): string | undefined {
  const key = JSON.stringify(tools);
  if (trials.has(key)) return trials.get(key);
  const nobody = { name: 'nobody', uid: 65534, gid: 65534 };
  const [cmd, ...args] = pidNamespaceCommand(
    { command: ['true'], node: process.execPath },
    tools,
    tools.setpriv === undefined ? undefined : nobody,
  );
  const r = spawnSync(cmd!, args, {
    encoding: 'utf8',
    timeout: TRIAL_TIMEOUT_MS,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const why =
    r.error !== undefined
      ? r.error.message
      : r.status === 0
        ? undefined
        : (r.stderr.split('\n').find((l) => l.trim() !== '') ?? `exit ${r.status ?? r.signal}`).trim();
  trials.set(key, why);
  return why;
}

/** Whether this Worker's Executors get a PID namespace (see core/executor-pid-namespace.ts). */
export function resolvePidNamespace(enabled: boolean, dropsUser: boolean): PidNamespaceDecision {
  return decidePidNamespace({
    enabled,
    selfUid: typeof process.getuid === 'function' ? process.getuid() : -1,
    dropsUser,
    unshare: findTool('unshare'),
    setpriv: findTool('setpriv'),
    trial,
  });
}

/** The ppid field of /proc/PID/stat (after the parenthesised command name, which may hold spaces). */
function parentOf(pid: string): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/**
 * The pid, in the Worker's namespace, of the child `unshare` forked (the Executor, init of its own
 * namespace), or undefined while there is none yet. This kernel may lack /proc/PID/task/TID/children, so
 * /proc is scanned (a few hundred small reads, once per spawn).
 */
export function forkedChildOf(pid: number): number | undefined {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return undefined;
  }
  // unshare forks right after it starts: its child usually has the next pid.
  const next = String(pid + 1);
  if (parentOf(next) === pid) return pid + 1;
  for (const name of names) {
    if (!/^\d+$/.test(name) || name === next) continue;
    if (parentOf(name) === pid) return Number(name);
  }
  return undefined;
}

/**
 * The exited processes in the namespace whose init is `pid` (as this process sees it) that no one has
 * waited for and whose parent is that init: orphans of a function's children that the init left as
 * zombies. Read through the init's own /proc (its mount namespace's, which lists its namespace only).
 */
export function zombiesInNamespace(pid: number): number {
  const proc = `/proc/${pid}/root/proc`;
  let names: string[];
  try {
    names = readdirSync(proc);
  } catch {
    return 0;
  }
  let zombies = 0;
  for (const name of names) {
    if (!/^\d+$/.test(name) || name === '1') continue;
    try {
      const stat = readFileSync(`${proc}/${name}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state === 'Z' && ppid === '1') zombies++;
    } catch {
      // gone meanwhile
    }
  }
  return zombies;
}
