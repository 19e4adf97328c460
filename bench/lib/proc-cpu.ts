// CPU time of a process and of its descendants, from /proc (Linux): utime + stime of /proc/<pid>/stat, in
// clock ticks (`getconf CLK_TCK`, 100 on common kernels: 10 ms resolution). For the CPU a bench's
// processes spend between two snapshots, descendants included that started meanwhile (one that exited
// between the snapshots is not counted: the bench reports how many it saw). A descendant whose command
// line has an `executor` argument (`blockx executor`, or the `unshare` that starts one in a PID namespace
// of its own) counts as an Executor; the others (under `blockx up`, its Worker processes) do not.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    const n = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    ticksPerSecond = Number.isFinite(n) && n > 0 ? n : 100;
  }
  return ticksPerSecond;
}

interface ProcStat {
  readonly ppid: number;
  /** utime + stime, ms. */
  readonly cpuMs: number;
  /** cutime + cstime: what it reaped of its exited children, ms. */
  readonly reapedMs: number;
}

/** The fields after `(comm)`: state is [0], ppid [1], utime [11], stime [12], cutime [13], cstime [14]. */
function readStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined; // gone
  }
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const ms = (a: number, b: number): number =>
    ((Number(fields[a]) + Number(fields[b])) * 1000) / clockTicks();
  return { ppid: Number(fields[1]), cpuMs: ms(11, 12), reapedMs: ms(13, 14) };
}

/** Every process now: pid → its stat. */
function procTable(): Map<number, ProcStat> {
  const stats = new Map<number, ProcStat>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat !== undefined) stats.set(Number(entry), stat);
  }
  return stats;
}

/** The descendants of `pid` in `stats` (children, their children, …). */
function descendantsOf(pid: number, stats: ReadonlyMap<number, ProcStat>): number[] {
  const kids = new Map<number, number[]>();
  for (const [p, stat] of stats) kids.set(stat.ppid, [...(kids.get(stat.ppid) ?? []), p]);
  const out: number[] = [];
  const todo = [...(kids.get(pid) ?? [])];
  for (let p = todo.pop(); p !== undefined; p = todo.pop()) {
    out.push(p);
    todo.push(...(kids.get(p) ?? []));
  }
  return out;
}

export interface CpuSnapshot {
  readonly pid: number;
  readonly cpuMs: number;
  /** Every descendant (children, their children, …): pid → CPU ms. */
  readonly children: ReadonlyMap<number, number>;
  /** The descendants that are Executors (an `executor` argument on their command line). */
  readonly executors: ReadonlySet<number>;
}

function isExecutor(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('executor');
  } catch {
    return false; // gone
  }
}

export function cpuSnapshot(pid: number): CpuSnapshot {
  const stats = procTable();
  const children = new Map<number, number>();
  const executors = new Set<number>();
  for (const p of descendantsOf(pid, stats)) {
    children.set(p, (stats.get(p) as ProcStat).cpuMs);
    if (isExecutor(p)) executors.add(p);
  }
  return { pid, cpuMs: stats.get(pid)?.cpuMs ?? Number.NaN, children, executors };
}

export interface CpuSpent {
  /** The process itself, ms. */
  readonly mainMs: number;
  /** All its descendants, ms (one new since `before` counts from 0). */
  readonly childrenMs: number;
  /** Of them, the Executors (and their PID-namespace wrappers), ms. */
  readonly executorMs: number;
  /** Of them, the others (under `blockx up`: its Worker processes), ms. */
  readonly othersMs: number;
  /** Descendants seen at the end. */
  readonly children: number;
  /** Of them, Executor processes (node, without the wrappers that started them). */
  readonly executors: number;
}

export function cpuSpent(before: CpuSnapshot, after: CpuSnapshot): CpuSpent {
  let executorMs = 0;
  let othersMs = 0;
  for (const [pid, ms] of after.children) {
    const spent = ms - (before.children.get(pid) ?? 0);
    if (after.executors.has(pid)) executorMs += spent;
    else othersMs += spent;
  }
  const nodes = [...after.executors].filter((pid) => {
    try {
      const argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
      return argv0.split('/').pop() !== 'unshare';
    } catch {
      return false;
    }
  });
  return {
    mainMs: after.cpuMs - before.cpuMs,
    childrenMs: executorMs + othersMs,
    executorMs,
    othersMs,
    children: after.children.size,
    executors: nodes.length,
  };
}

/**
 * CPU ms of this process's children that have exited and been waited for (cutime + cstime of
 * /proc/self/stat). The difference across one awaited child run (a CLI command the bench spawned and saw
 * exit) is that command's CPU, as long as no other child of the bench exits meanwhile.
 */
export function reapedChildrenCpuMs(): number {
  return readStat(process.pid)?.reapedMs ?? Number.NaN;
}

/**
 * CPU ms of `pid` and every descendant alive now, each process's own plus what it reaped of its exited
 * children (utime + stime + cutime + cstime). The difference of two readings is what the tree spent between
 * them, less what descendants that exited unreaped took.
 */
export function treeCpuMs(pid: number): number {
  const stats = procTable();
  let total = 0;
  for (const p of [pid, ...descendantsOf(pid, stats)]) {
    const stat = stats.get(p);
    if (stat !== undefined) total += stat.cpuMs + stat.reapedMs;
  }
  return total;
}
