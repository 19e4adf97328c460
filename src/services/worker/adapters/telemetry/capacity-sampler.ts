// The capacity figures of a heartbeat (`cpuPercent`, `memoryPercent`, `memoryAvailableBytes`,
// `memoryTotalBytes`, `processRssBytes`), measured against what THIS worker can use. docs/health.md says
// what each field means; this file is where they come from.
//
// A worker in a container or a systemd slice is bounded by its cgroup, not by the host: an idle worker
// on a host busy with other processes is not busy, and a worker with a 2 GiB memory limit on a 64 GiB
// host is full at 2 GiB. So, per sample:
//
//  - cpu: the share of the CPU this worker may use that OTHER processes took since the previous sample —
//    busy time minus this worker's own (its process and its children, the Executor among them). The
//    red line is there to stop routing to a machine someone else is loading; the worker's own tasks are
//    already bounded by its slots, and counting them made a worker that saturated its CPU with its own
//    tasks unroutable (measured: a 300-block backfill under `blockx up` drew 754 NoExecutableSlot
//    answers, "cpu 0.95 > 0.90 on 2 workers", each a client backoff; docs/health.md). The capacity is
//    the cgroup's CPU quota when one binds (v2 `cpu.max`, v1 `cpu.cfs_quota_us`/`cpu.cfs_period_us`, the
//    tightest on the path from our cgroup to the root, capped at the host's cores), with the cgroup's
//    usage (v2 `cpu.stat` usage_usec, v1 `cpuacct.usage`) as busy time; without a quota, the host's
//    cores and busy ticks (os.cpus()).
//  - memory: the cgroup's memory limit when one binds (v2 `memory.max`, v1 `memory.limit_in_bytes`, below
//    the host's total), with usage = `memory.current` (v1 `memory.usage_in_bytes`) minus reclaimable
//    page cache (`inactive_file`); available = limit − usage, never above the host's available memory.
//    Without a limit: the host (os.totalmem / os.freemem).
//  - processRssBytes: this process's resident set.
//
// File reads go through an injected `CapacityProbe`, so the logic is tested against fixture contents
// (test/unit/services/worker/adapters/telemetry/capacity-sampler.test.ts). Limits are re-read every sample (a
// container can be resized); the cgroup path is resolved once.

import { readFileSync } from 'node:fs';
import os from 'node:os';
import type { HostMetrics, HostMetricsSource } from './heartbeat-publisher.js';

/** Everything the sampler reads. `readFile` returns undefined for a missing or unreadable file. */
export interface CapacityProbe {
  readFile(path: string): string | undefined;
  hostMemory(): { readonly totalBytes: number; readonly availableBytes: number };
  /** Summed os.cpus() tick counters; undefined where the platform reports none. */
  hostCpuTicks(): { readonly idle: number; readonly total: number } | undefined;
  /** This process's CPU time in µs (user + system), for hosts without tick counters. */
  processCpuUs(): number;
  /**
   * CPU time in µs of this process and its children (live ones from /proc, reaped ones from our
   * cutime/cstime): what the worker itself used. Default: processCpuUs.
   */
  ownTreeCpuUs?(): number;
  hostCores(): number;
  processRssBytes(): number;
  /** A monotonic clock in µs. */
  monotonicUs(): number;
}

/** A file's text, or undefined when it is missing or unreadable. */
function readTextFile(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

export function nodeCapacityProbe(): CapacityProbe {
  return {
    readFile: readTextFile,
    hostMemory: () => {
      const totalBytes = os.totalmem();
      return { totalBytes, availableBytes: Math.min(os.freemem(), totalBytes) };
    },
    hostCpuTicks: () => {
      const cpus = os.cpus();
      if (cpus.length === 0) return undefined;
      let idle = 0;
      let total = 0;
      for (const { times } of cpus) {
        idle += times.idle;
        total += times.user + times.nice + times.sys + times.idle + times.irq;
      }
      return { idle, total };
    },
    processCpuUs: () => {
      const u = process.cpuUsage();
      return u.user + u.system;
    },
    ownTreeCpuUs: () => {
      const u = process.cpuUsage();
      return u.user + u.system + childrenCpuUs(readTextFile);
    },
    hostCores: () => Math.max(1, os.availableParallelism()),
    processRssBytes: () => process.memoryUsage.rss(),
    monotonicUs: () => Number(process.hrtime.bigint() / 1000n),
  };
}

/** Linux's USER_HZ: the unit of the times in /proc/<pid>/stat (100 on every mainstream kernel). */
const CLOCK_TICKS_PER_S = 100;

/** utime + stime (fields 14, 15) and, with `reaped`, cutime + cstime (16, 17) of a /proc stat line, in µs. */
export function statCpuUs(stat: string | undefined, reaped: boolean): number {
  if (stat === undefined) return 0;
  // The command name (field 2) is in parentheses and may hold spaces: split after its closing one.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state), so field n is fields[n − 3].
  const ticks = (n: number): number => Number(fields[n - 3]) || 0;
  const total = ticks(14) + ticks(15) + (reaped ? ticks(16) + ticks(17) : 0);
  return (total * 1_000_000) / CLOCK_TICKS_PER_S;
}

/** CPU of this process's children: live ones (/proc/self/task/<tid>/children) plus the reaped ones. */
export function childrenCpuUs(read: (path: string) => string | undefined): number {
  const self = read('/proc/self/stat');
  if (self === undefined) return 0;
  const reaped = statCpuUs(self, true) - statCpuUs(self, false);
  // Children of the main thread (the Executor is spawned from it; other threads spawn none).
  const pid = Number(self.slice(0, self.indexOf(' ')));
  const children = (read(`/proc/self/task/${pid}/children`) ?? '').trim().split(/\s+/).filter(Boolean);
  let live = 0;
  for (const child of children) live += statCpuUs(read(`/proc/${child}/stat`), false);
  return reaped + live;
}

/** Where a figure came from (logged once at start, see docs/health.md). */
export type CapacitySource = 'cgroup-v2' | 'cgroup-v1' | 'host' | 'process';

/** One level of the cgroup path: where its limit and its usage are read. */
interface CgroupLevel {
  readonly limitDir: string;
  readonly usageDir: string;
}

interface CgroupLayout {
  readonly version: 'cgroup-v2' | 'cgroup-v1';
  readonly cpu: readonly CgroupLevel[];
  readonly memory: readonly CgroupLevel[];
}

const ROOT = '/sys/fs/cgroup';

function joinPath(dir: string, rel: string): string {
  const clean = rel.split('/').filter((p) => p !== '' && p !== '.' && p !== '..');
  return clean.length === 0 ? dir : `${dir}/${clean.join('/')}`;
}

/** `dir` and its ancestors up to `mount`, leaf first. */
function upTo(mount: string, rel: string): string[] {
  const parts = rel.split('/').filter((p) => p !== '' && p !== '.' && p !== '..');
  const dirs: string[] = [];
  for (let n = parts.length; n >= 0; n--) dirs.push(joinPath(mount, parts.slice(0, n).join('/')));
  return dirs;
}

/** Same levels for limit and usage (v2; v1 with co-mounted controllers). */
function levels(limitMount: string, usageMount: string, rel: string): CgroupLevel[] {
  const limits = upTo(limitMount, rel);
  const usages = upTo(usageMount, rel);
  return limits.map((limitDir, i) => ({ limitDir, usageDir: usages[i] ?? limitDir }));
}

/** Reads /proc/self/cgroup once: v2 when the unified hierarchy is mounted at /sys/fs/cgroup, else v1. */
export function resolveCgroupLayout(read: CapacityProbe['readFile']): CgroupLayout | undefined {
  const text = read('/proc/self/cgroup');
  if (text === undefined) return undefined;
  const lines = text
    .split('\n')
    .map((l) => /^(\d+):([^:]*):(.*)$/.exec(l.trim()))
    .filter((m): m is RegExpExecArray => m !== null);
  const unified = lines.find((m) => m[1] === '0' && m[2] === '');
  if (unified !== undefined && read(`${ROOT}/cgroup.controllers`) !== undefined) {
    const all = levels(ROOT, ROOT, unified[3] ?? '/');
    return { version: 'cgroup-v2', cpu: all, memory: all };
  }
  const v1 = (controller: string): { mount: string; rel: string } | undefined => {
    const m = lines.find((l) => (l[2] ?? '').split(',').includes(controller));
    if (m === undefined) return undefined;
    const names = m[2] ?? '';
    // Mounted under the joined name (cpu,cpuacct) or, with symlinks, under each controller's own name.
    const mount =
      read(`${ROOT}/${names}/cgroup.procs`) !== undefined ? `${ROOT}/${names}` : `${ROOT}/${controller}`;
    return { mount, rel: m[3] ?? '/' };
  };
  const cpu = v1('cpu');
  const acct = v1('cpuacct');
  const memory = v1('memory');
  if (cpu === undefined && memory === undefined) return undefined;
  return {
    version: 'cgroup-v1',
    cpu: cpu === undefined || acct === undefined ? [] : levels(cpu.mount, acct.mount, cpu.rel),
    memory: memory === undefined ? [] : levels(memory.mount, memory.mount, memory.rel),
  };
}

function numberIn(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const v = Number(text.trim());
  return Number.isFinite(v) ? v : undefined;
}

/** `key value` lines (cpu.stat, memory.stat). */
function statField(text: string | undefined, key: string): number | undefined {
  if (text === undefined) return undefined;
  const m = new RegExp(`^${key} (\\d+)$`, 'm').exec(text);
  return m === null ? undefined : Number(m[1]);
}

/** CPU cores a level's quota allows; undefined when it sets none. */
function quotaCores(layout: CgroupLayout, read: CapacityProbe['readFile'], dir: string): number | undefined {
  if (layout.version === 'cgroup-v2') {
    const [quota, period] = (read(`${dir}/cpu.max`) ?? '').trim().split(/\s+/);
    const q = Number(quota);
    const p = Number(period);
    return quota !== 'max' && q > 0 && p > 0 ? q / p : undefined;
  }
  const q = numberIn(read(`${dir}/cpu.cfs_quota_us`));
  const p = numberIn(read(`${dir}/cpu.cfs_period_us`));
  return q !== undefined && p !== undefined && q > 0 && p > 0 ? q / p : undefined;
}

/** CPU time used by a level, µs. */
function cpuUsageUs(layout: CgroupLayout, read: CapacityProbe['readFile'], dir: string): number | undefined {
  if (layout.version === 'cgroup-v2') return statField(read(`${dir}/cpu.stat`), 'usage_usec');
  const ns = numberIn(read(`${dir}/cpuacct.usage`));
  return ns === undefined ? undefined : ns / 1000;
}

/** A level's memory limit (bytes); undefined when none. */
function memoryLimit(layout: CgroupLayout, read: CapacityProbe['readFile'], dir: string): number | undefined {
  const file = layout.version === 'cgroup-v2' ? 'memory.max' : 'memory.limit_in_bytes';
  const v = numberIn(read(`${dir}/${file}`)); // v2 "max" → NaN → undefined
  return v !== undefined && v > 0 ? v : undefined;
}

/** A level's memory in use, bytes, without reclaimable page cache. */
function memoryUsed(layout: CgroupLayout, read: CapacityProbe['readFile'], dir: string): number | undefined {
  const v2 = layout.version === 'cgroup-v2';
  const usage = numberIn(read(`${dir}/${v2 ? 'memory.current' : 'memory.usage_in_bytes'}`));
  if (usage === undefined) return undefined;
  const inactive = statField(read(`${dir}/memory.stat`), v2 ? 'inactive_file' : 'total_inactive_file') ?? 0;
  return Math.max(0, usage - inactive);
}

/** The tightest binding limit on the path and the level it is set at. */
function tightest(
  levelsOf: readonly CgroupLevel[],
  limitOf: (dir: string) => number | undefined,
  bindsBelow: number,
): { level: CgroupLevel; limit: number } | undefined {
  let best: { level: CgroupLevel; limit: number } | undefined;
  for (const level of levelsOf) {
    const limit = limitOf(level.limitDir);
    if (limit !== undefined && limit < (best?.limit ?? Number.POSITIVE_INFINITY)) best = { level, limit };
  }
  return best !== undefined && best.limit < bindsBelow ? best : undefined;
}

/** `v` clamped to [0, 1]; NaN and negatives are 0. */
export function clampFraction(v: number): number {
  if (!Number.isFinite(v) || v <= 0) return 0;
  return v >= 1 ? 1 : v;
}

interface CpuMark {
  readonly key: string;
  readonly usedUs: number;
  readonly atUs: number;
}

export class CapacitySampler implements HostMetricsSource {
  private readonly probe: CapacityProbe;
  private readonly layout: CgroupLayout | undefined;
  private prevCpu: CpuMark | undefined;
  private prevTicks: { idle: number; total: number; ownUs: number } | undefined;
  private lastCpu = 0;
  private cpuSource: CapacitySource = 'host';
  private memorySource: CapacitySource = 'host';

  constructor(probe: CapacityProbe = nodeCapacityProbe()) {
    this.probe = probe;
    this.layout = resolveCgroupLayout(probe.readFile);
    const ticks = probe.hostCpuTicks();
    this.prevTicks = ticks === undefined ? undefined : { ...ticks, ownUs: this.ownUs() };
    this.prevCpu = { key: 'process', usedUs: probe.processCpuUs(), atUs: probe.monotonicUs() };
  }

  /** Where the last sample's cpu and memory figures came from. */
  sources(): { cpu: CapacitySource; memory: CapacitySource } {
    return { cpu: this.cpuSource, memory: this.memorySource };
  }

  sample(): HostMetrics {
    const host = this.probe.hostMemory();
    const mem = this.memory(host);
    return {
      cpuPercent: this.cpu(),
      memoryPercent: mem.total > 0 ? clampFraction(1 - mem.available / mem.total) : 0,
      memoryAvailableBytes: mem.available,
      memoryTotalBytes: mem.total,
      processRssBytes: this.probe.processRssBytes(),
    };
  }

  private memory(host: { totalBytes: number; availableBytes: number }): { total: number; available: number } {
    const layout = this.layout;
    if (layout !== undefined) {
      const read = this.probe.readFile;
      const bound = tightest(layout.memory, (dir) => memoryLimit(layout, read, dir), host.totalBytes);
      const used = bound === undefined ? undefined : memoryUsed(layout, read, bound.level.usageDir);
      if (bound !== undefined && used !== undefined) {
        this.memorySource = layout.version;
        const available = Math.max(0, Math.min(bound.limit - used, host.availableBytes));
        return { total: bound.limit, available };
      }
    }
    this.memorySource = 'host';
    return { total: host.totalBytes, available: Math.max(0, Math.min(host.availableBytes, host.totalBytes)) };
  }

  private cpu(): number {
    const layout = this.layout;
    const cores = this.probe.hostCores();
    if (layout !== undefined) {
      const read = this.probe.readFile;
      const bound = tightest(layout.cpu, (dir) => quotaCores(layout, read, dir), cores + 1e-9);
      const usedUs = bound === undefined ? undefined : cpuUsageUs(layout, read, bound.level.usageDir);
      if (bound !== undefined && usedUs !== undefined) {
        this.cpuSource = layout.version;
        // Busy time of the cgroup minus our own: what the cgroup's other processes took.
        const othersUs = usedUs - this.ownUs();
        return this.cpuShare(`cgroup:${bound.level.usageDir}`, othersUs, Math.min(bound.limit, cores));
      }
    }
    const ticks = this.probe.hostCpuTicks();
    if (ticks !== undefined) {
      this.cpuSource = 'host';
      const prev = this.prevTicks;
      const now = { ...ticks, ownUs: this.ownUs() };
      this.prevTicks = now;
      // os.cpus() times are milliseconds summed over the cores.
      const dTotal = prev === undefined ? 0 : now.total - prev.total;
      if (prev !== undefined && dTotal > 0) {
        const busyMs = dTotal - (now.idle - prev.idle);
        const ownMs = (now.ownUs - prev.ownUs) / 1000;
        this.lastCpu = clampFraction((busyMs - ownMs) / dTotal);
      }
      return this.lastCpu;
    }
    // Nothing to compare with: our own use is all we know, and it is ours, so it does not count.
    this.cpuSource = 'process';
    return 0;
  }

  private ownUs(): number {
    return this.probe.ownTreeCpuUs?.() ?? this.probe.processCpuUs();
  }

  /** CPU used since the previous mark of the same source, over wall time × cores. */
  private cpuShare(key: string, usedUs: number, cores: number): number {
    const atUs = this.probe.monotonicUs();
    const prev = this.prevCpu;
    if (prev === undefined || prev.key !== key) {
      // A new source (first sample, or the binding level changed): no delta yet.
      this.prevCpu = { key, usedUs, atUs };
      return this.lastCpu;
    }
    const elapsedUs = atUs - prev.atUs;
    if (elapsedUs <= 0) return this.lastCpu;
    this.prevCpu = { key, usedUs, atUs };
    this.lastCpu = clampFraction((usedUs - prev.usedUs) / (elapsedUs * cores));
    return this.lastCpu;
  }
}
