// CPU time of a process and of its direct children, from /proc (Linux): utime + stime of
// /proc/<pid>/stat, in clock ticks (`getconf CLK_TCK`, 100 on common kernels: 10 ms resolution). For the
// CPU a bench's child processes spend between two snapshots, children included that started meanwhile
// (a child that exited between the snapshots is not counted: the bench reports how many it saw).
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
  const ticks = Number(fields[11]) + Number(fields[12]);
  return { ppid: Number(fields[1]), cpuMs: (ticks * 1000) / clockTicks() };
}

export interface CpuSnapshot {
  readonly pid: number;
  readonly cpuMs: number;
  /** Direct children: pid → CPU ms. */
  readonly children: ReadonlyMap<number, number>;
}

export function cpuSnapshot(pid: number): CpuSnapshot {
  const children = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat?.ppid === pid) children.set(Number(entry), stat.cpuMs);
  }
  return { pid, cpuMs: readStat(pid)?.cpuMs ?? Number.NaN, children };
}

export interface CpuSpent {
  /** The process itself, ms. */
  readonly mainMs: number;
  /** Its children, ms (a child new since `before` counts from 0). */
  readonly childrenMs: number;
  /** Children seen at the end. */
  readonly children: number;
}

export function cpuSpent(before: CpuSnapshot, after: CpuSnapshot): CpuSpent {
  let childrenMs = 0;
  for (const [pid, ms] of after.children) childrenMs += ms - (before.children.get(pid) ?? 0);
  return { mainMs: after.cpuMs - before.cpuMs, childrenMs, children: after.children.size };
}

/**
 * CPU ms of this process's children that have exited and been waited for (cutime + cstime of
 * /proc/self/stat). The difference across one awaited child run (a CLI command the bench spawned and saw
 * exit) is that command's CPU, as long as no other child of the bench exits meanwhile.
 */
export function reapedChildrenCpuMs(): number {
  const text = readFileSync('/proc/self/stat', 'utf8');
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / clockTicks();
}
