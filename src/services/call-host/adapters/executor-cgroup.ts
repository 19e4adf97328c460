// A memory ceiling per Executor (docs/security.md § A memory ceiling per Executor): a child cgroup of the
// Worker's own memory cgroup for each Executor, with the kernel's hard limit (`executor.memoryMaxMb`), so
// an allocation storm in a function is ended by the kernel inside that cgroup, not on the node. The
// decisions that need no IO are core/executor-cgroup.ts.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import {
  CGROUP_FILES,
  executorCgroupName,
  memoryCgroupCandidates,
  oomKillsOf,
  workerPidOfCgroup,
  type CgroupVersion,
  type MemoryCgroupCandidate,
} from '../core/executor-cgroup.js';

const MIB = 1024 * 1024;
/** Cgroups this process made so far: each supervisor's gets its own name. */
let made = 0;

/**
 * The leaf child a v2 cgroup's own processes (the Worker among them) move into, so that the cgroup holds
 * none and may give its children the memory controller (the kernel's "no internal processes" rule).
 */
export const WORKER_LEAF_CGROUP = 'blockx-worker';

/** One Executor's cgroup: made, joined by its process, read for OOM kills, removed. */
export interface ExecutorCgroup {
  readonly version: CgroupVersion;
  readonly dir: string;
  readonly memoryMaxMb: number;
  /** Move process `pid` (the Executor just spawned) in: it and what it forks from then on count. */
  add(pid: number): void;
  /** OOM kills the kernel made in the cgroup so far. */
  oomKills(): number;
  /** Remove the cgroup (once its processes are gone); a failure is ignored (a leftover is removed later). */
  remove(): void;
}

export type ExecutorCgroupResult =
  | { readonly kind: 'ok'; readonly cgroup: ExecutorCgroup }
  | { readonly kind: 'unavailable'; readonly reason: string };

/** Where the files are read; tests point them at a fake tree. */
export interface CgroupHost {
  readonly procSelfCgroup: string;
  readonly mountinfo: string;
  readonly pid: number;
  readonly isAlive: (pid: number) => boolean;
  /** Writes a cgroup file (default writeFileSync); tests stand in for the kernel's answers. */
  readonly writeFile?: (file: string, text: string) => void;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function thisHost(): CgroupHost | string {
  try {
    return {
      procSelfCgroup: readFileSync('/proc/self/cgroup', 'utf8'),
      mountinfo: readFileSync('/proc/self/mountinfo', 'utf8'),
      pid: process.pid,
      isAlive: processAlive,
    };
  } catch (err) {
    return `cannot read /proc/self/cgroup or /proc/self/mountinfo (${(err as Error).message})`;
  }
}

const errText = (err: unknown): string => {
  const e = err as NodeJS.ErrnoException;
  return e.code !== undefined ? `${e.code}` : String((err as Error).message ?? err);
};

/**
 * Make the cgroup of the Executor `label` (js, python) with memory.max = `memoryMaxMb`, under the
 * Worker's own memory cgroup (v2 first, then v1). 'unavailable' says why it cannot be (no memory
 * controller, a folder the Worker may not write, a v2 cgroup that holds processes and so cannot give
 * a child the memory controller): the Executor then runs without the ceiling.
 */
export function openExecutorCgroup(
  label: string,
  memoryMaxMb: number,
  host: CgroupHost | string = thisHost(),
): ExecutorCgroupResult {
  if (typeof host === 'string') return { kind: 'unavailable', reason: host };
  const candidates = memoryCgroupCandidates(host.procSelfCgroup, host.mountinfo);
  if (candidates.length === 0)
    return { kind: 'unavailable', reason: 'no cgroup file system with the memory controller is mounted' };
  const reasons: string[] = [];
  const write = host.writeFile ?? ((file: string, text: string) => writeFileSync(file, text));
  for (const found of candidates) {
    // A Worker that already moved into its leaf makes its Executors' cgroups beside the leaf.
    const c =
      found.version === 2 && basename(found.dir) === WORKER_LEAF_CGROUP
        ? { ...found, dir: dirname(found.dir) }
        : found;
    const why = prepareParent(c, write);
    if (why !== undefined) {
      reasons.push(`cgroup v${c.version} ${c.dir}: ${why}`);
      continue;
    }
    removeLeftovers(c.dir, host.isAlive);
    const dir = join(c.dir, executorCgroupName(host.pid, made, label));
    try {
      if (!existsSync(dir)) mkdirSync(dir);
      const files = CGROUP_FILES[c.version];
      writeFileSync(join(dir, files.limit), String(memoryMaxMb * MIB));
      // Without swap limited too, a cgroup at its limit swaps instead of ending the allocation.
      if (existsSync(join(dir, files.swapLimit)))
        writeFileSync(join(dir, files.swapLimit), c.version === 2 ? '0' : String(memoryMaxMb * MIB));
      made++;
      return { kind: 'ok', cgroup: cgroupAt(c.version, dir, memoryMaxMb) };
    } catch (err) {
      try {
        rmdirSync(dir);
      } catch {
        // never made, or not empty
      }
      reasons.push(`cgroup v${c.version} ${dir}: cannot set it up (${errText(err)})`);
    }
  }
  return { kind: 'unavailable', reason: reasons.join('; ') };
}

/**
 * v2: the memory controller must be offered to the parent's children (cgroup.subtree_control). The
 * kernel refuses that (EBUSY) while the cgroup itself holds processes, as a systemd service's cgroup
 * does: then its processes move into the leaf WORKER_LEAF_CGROUP and the controller is enabled again.
 */
function prepareParent(
  c: MemoryCgroupCandidate,
  write: (file: string, text: string) => void,
): string | undefined {
  if (c.version === 1) return undefined;
  let offered: string;
  try {
    offered = readFileSync(join(c.dir, 'cgroup.controllers'), 'utf8');
  } catch (err) {
    return `cannot read cgroup.controllers (${errText(err)})`;
  }
  if (!offered.split(/\s+/).includes('memory')) return 'the memory controller is not enabled in this tree';
  const enable = (): void => {
    const enabled = readFileSync(join(c.dir, 'cgroup.subtree_control'), 'utf8');
    if (!enabled.split(/\s+/).includes('memory')) write(join(c.dir, 'cgroup.subtree_control'), '+memory');
  };
  try {
    enable();
    return undefined;
  } catch (err) {
    if (errText(err) !== 'EBUSY')
      return `cannot enable the memory controller for its children (${errText(err)})`;
  }
  const leaf = join(c.dir, WORKER_LEAF_CGROUP);
  try {
    if (!existsSync(leaf)) mkdirSync(leaf);
    // One pid per write, as the kernel takes them; one that exited in between is gone already.
    for (const pid of readFileSync(join(c.dir, 'cgroup.procs'), 'utf8').split('\n')) {
      if (pid.trim() === '') continue;
      try {
        write(join(leaf, 'cgroup.procs'), pid.trim());
      } catch (err) {
        if (errText(err) !== 'ESRCH') throw err;
      }
    }
    enable();
    return undefined;
  } catch (err) {
    return (
      `it holds processes (the Worker among them), so it cannot give its children the memory controller, ` +
      `and moving them into ${leaf} failed (${errText(err)}): start the Worker in a cgroup of its own with ` +
      'the memory controller delegated (systemd: Delegate=yes; docs/security.md § A memory ceiling per Executor)'
    );
  }
}

/** Child cgroups of Workers that are gone (killed before they removed them): removed when empty. */
function removeLeftovers(parent: string, isAlive: (pid: number) => boolean): void {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = workerPidOfCgroup(name);
    if (pid === undefined || isAlive(pid)) continue;
    try {
      rmdirSync(join(parent, name));
    } catch {
      // still holds a process (an Executor that outlived its Worker): left alone
    }
  }
}

function cgroupAt(version: CgroupVersion, dir: string, memoryMaxMb: number): ExecutorCgroup {
  const files = CGROUP_FILES[version];
  return {
    version,
    dir,
    memoryMaxMb,
    add: (pid) => writeFileSync(join(dir, files.procs), String(pid)),
    oomKills: () => {
      try {
        return oomKillsOf(readFileSync(join(dir, files.events), 'utf8'));
      } catch {
        return 0;
      }
    },
    remove: () => {
      try {
        rmdirSync(dir);
      } catch {
        // a process is still in it; removeLeftovers takes it on a later start
      }
    },
  };
}
