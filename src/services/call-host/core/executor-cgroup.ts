// Where an Executor's memory ceiling can live (docs/security.md § A memory ceiling per Executor): the
// decisions about cgroups that need no IO. adapters/executor-cgroup.ts reads /proc/self/cgroup and
// /proc/self/mountinfo, asks `memoryCgroupCandidates` where the Worker's own memory cgroup is, makes a
// child there per Executor and reads its OOM count with `oomKillsOf`. No IO, no clock.
//
// Theory of operation. cgroup v2 puts every controller in one tree: a process's line in /proc/self/cgroup
// is `0::/path`, below the mount point of the `cgroup2` file system. cgroup v1 has a tree per controller:
// the line `N:memory:/path`, below the mount point of the `cgroup` file system mounted with `memory`. A
// host may mount both (the memory controller then lives in one of them): v2 is tried first, when its
// tree offers the memory controller, then v1. A mount whose root is not `/` (a container's bind of a
// subtree) shows paths relative to that root; a path outside it cannot be reached from here.

/** The two cgroup versions, by the names of the files an Executor's ceiling uses. */
export type CgroupVersion = 1 | 2;

/** A cgroup file system mount, from /proc/self/mountinfo. */
export interface CgroupMount {
  readonly version: CgroupVersion;
  /** Where it is mounted (e.g. /sys/fs/cgroup). */
  readonly mountPoint: string;
  /** The tree's path shown at the mount point (`/` unless a subtree is bind-mounted). */
  readonly root: string;
  /** v1: the controllers of this tree (from the super options); v2: empty (read cgroup.controllers). */
  readonly controllers: readonly string[];
}

/** The Worker's own memory cgroup as a folder, in the version that carries it. */
export interface MemoryCgroupCandidate {
  readonly version: CgroupVersion;
  readonly dir: string;
}

/** The files of a memory ceiling in each version. */
export const CGROUP_FILES: Readonly<
  Record<CgroupVersion, { limit: string; swapLimit: string; events: string; procs: string }>
> = {
  2: { limit: 'memory.max', swapLimit: 'memory.swap.max', events: 'memory.events', procs: 'cgroup.procs' },
  1: {
    limit: 'memory.limit_in_bytes',
    swapLimit: 'memory.memsw.limit_in_bytes',
    events: 'memory.oom_control',
    procs: 'cgroup.procs',
  },
};

/** The cgroup file system mounts of a /proc/self/mountinfo text. */
export function parseCgroupMounts(mountinfo: string): CgroupMount[] {
  const out: CgroupMount[] = [];
  for (const line of mountinfo.split('\n')) {
    // ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTIONS
    const dash = line.indexOf(' - ');
    if (dash < 0) continue;
    const left = line.slice(0, dash).split(' ');
    const [fsType, , superOptions = ''] = line.slice(dash + 3).split(' ');
    if (fsType !== 'cgroup' && fsType !== 'cgroup2') continue;
    const root = unescapeMountPath(left[3] ?? '/');
    const mountPoint = unescapeMountPath(left[4] ?? '');
    if (mountPoint === '') continue;
    const controllers =
      fsType === 'cgroup' ? superOptions.split(',').filter((o) => o !== 'rw' && o !== 'ro') : [];
    out.push({ version: fsType === 'cgroup2' ? 2 : 1, mountPoint, root, controllers });
  }
  return out;
}

/** mountinfo writes space, tab, newline and backslash as octal escapes (`\040`). */
function unescapeMountPath(text: string): string {
  return text.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

/** The cgroup paths of a /proc/self/cgroup text: the v2 path (line `0::`) and each v1 controller's. */
export function parseProcCgroup(text: string): { v2?: string; v1: Map<string, string> } {
  const v1 = new Map<string, string>();
  let v2: string | undefined;
  for (const line of text.split('\n')) {
    const first = line.indexOf(':');
    const second = line.indexOf(':', first + 1);
    if (first < 0 || second < 0) continue;
    const id = line.slice(0, first);
    const controllers = line.slice(first + 1, second);
    const path = line.slice(second + 1);
    if (id === '0' && controllers === '') v2 = path;
    else for (const c of controllers.split(',')) if (c !== '') v1.set(c, path);
  }
  return v2 === undefined ? { v1 } : { v2, v1 };
}

/** `path` of the tree below a mount whose root is `root`, as a folder under `mountPoint`; undefined outside it. */
function folderOf(mount: CgroupMount, path: string): string | undefined {
  const root = mount.root.replace(/\/+$/, '');
  if (root !== '' && path !== root && !path.startsWith(`${root}/`)) return undefined;
  const rest = path.slice(root.length).replace(/^\/+/, '');
  return rest === '' ? mount.mountPoint : `${mount.mountPoint.replace(/\/+$/, '')}/${rest}`;
}

/**
 * Where the Worker's own memory cgroup may be, best first: the v2 folder (when the process has a v2
 * path and a cgroup2 mount; whether that tree offers `memory` is for the caller to read in
 * cgroup.controllers), then the v1 folder of the `memory` tree.
 */
export function memoryCgroupCandidates(procCgroup: string, mountinfo: string): MemoryCgroupCandidate[] {
  const mounts = parseCgroupMounts(mountinfo);
  const own = parseProcCgroup(procCgroup);
  const out: MemoryCgroupCandidate[] = [];
  const v2 = mounts.find((m) => m.version === 2);
  if (v2 !== undefined && own.v2 !== undefined) {
    const dir = folderOf(v2, own.v2);
    if (dir !== undefined) out.push({ version: 2, dir });
  }
  const v1 = mounts.find((m) => m.version === 1 && m.controllers.includes('memory'));
  const v1Path = own.v1.get('memory');
  if (v1 !== undefined && v1Path !== undefined) {
    const dir = folderOf(v1, v1Path);
    if (dir !== undefined) out.push({ version: 1, dir });
  }
  return out;
}

/** The OOM kills a cgroup counted (`oom_kill N` in v2 memory.events and v1 memory.oom_control); 0 if absent. */
export function oomKillsOf(eventsText: string): number {
  const m = /^oom_kill (\d+)$/m.exec(eventsText);
  return m === null ? 0 : Number(m[1]);
}

/** The prefix of the child cgroups a Worker makes for its Executors; the Worker's pid follows it. */
export const EXECUTOR_CGROUP_PREFIX = 'blockx-executor-';

/**
 * The child cgroup of the Executor `label` (js, python) of the Worker `workerPid`; `seq` tells apart the
 * supervisors of one process (`blockx up` runs several Workers in one).
 */
export function executorCgroupName(workerPid: number, seq: number, label: string): string {
  return `${EXECUTOR_CGROUP_PREFIX}${workerPid}-${seq}-${label}`;
}

/** The Worker pid a child cgroup's name carries, or undefined for a name that is not one of ours. */
export function workerPidOfCgroup(name: string): number | undefined {
  if (!name.startsWith(EXECUTOR_CGROUP_PREFIX)) return undefined;
  const m = /^(\d+)-\d+-[a-z]+$/.exec(name.slice(EXECUTOR_CGROUP_PREFIX.length));
  return m === null ? undefined : Number(m[1]);
}
