// CapacitySampler against fixture cgroup files (no real /sys): cgroup v2 and v1 limits, the tightest
// limit on the path, and the host fallback when no limit binds.
import { describe, expect, it } from 'vitest';
import {
  CapacitySampler,
  childrenCpuUs,
  resolveCgroupLayout,
  statCpuUs,
  type CapacityProbe,
} from '../../../../../../src/services/worker/adapters/telemetry/capacity-sampler.js';

const GiB = 1024 ** 3;

interface Fixture {
  files: Record<string, string>;
  hostTotal?: number;
  hostAvailable?: number;
  cores?: number;
}

/** A probe over fixture files; `tick(us, cpu)` advances the clock and the host's busy ticks. */
function fixture(f: Fixture) {
  const files = { ...f.files };
  let nowUs = 1_000_000;
  let ticks = { idle: 1_000, total: 2_000 };
  let ownUs = 0;
  const probe: CapacityProbe = {
    ownTreeCpuUs: () => ownUs,
    readFile: (p) => files[p],
    hostMemory: () => ({ totalBytes: f.hostTotal ?? 64 * GiB, availableBytes: f.hostAvailable ?? 60 * GiB }),
    hostCpuTicks: () => ticks,
    processCpuUs: () => 0,
    hostCores: () => f.cores ?? 8,
    processRssBytes: () => 123,
    monotonicUs: () => nowUs,
  };
  return {
    probe,
    files,
    /** `us` of wall time pass on a host `hostBusyShare` busy, `ownShare` of it spent by the worker itself. */
    advance(us: number, hostBusyShare = 0.95, ownShare = 0): void {
      nowUs += us;
      // os.cpus() ticks are ms summed over the cores.
      const d = (us / 1000) * (f.cores ?? 8);
      ticks = { idle: ticks.idle + d * (1 - hostBusyShare), total: ticks.total + d };
      ownUs += ownShare * d * 1000;
    },
    /** The worker's own tree used `us` more CPU (e.g. inside a cgroup). */
    spend(us: number): void {
      ownUs += us;
    },
  };
}

const V2_CGROUP = {
  '/proc/self/cgroup': '0::/kubepods/pod1/ctr\n',
  '/sys/fs/cgroup/cgroup.controllers': 'cpu memory\n',
};
const CTR = '/sys/fs/cgroup/kubepods/pod1/ctr';
const POD = '/sys/fs/cgroup/kubepods/pod1';

describe('resolveCgroupLayout', () => {
  it('v2: our cgroup and its ancestors, leaf first', () => {
    const layout = resolveCgroupLayout((p) => (V2_CGROUP as Record<string, string>)[p]);
    expect(layout?.version).toBe('cgroup-v2');
    expect(layout?.cpu.map((l) => l.limitDir)).toEqual([
      CTR,
      POD,
      '/sys/fs/cgroup/kubepods',
      '/sys/fs/cgroup',
    ]);
  });

  it('v1 (this Debian box’s hybrid layout): per-controller mounts', () => {
    const files: Record<string, string> = {
      '/proc/self/cgroup': '4:memory:/api/x\n2:cpuacct:/\n1:cpu:/\n0::/\n',
      '/sys/fs/cgroup/cpu/cgroup.procs': '1\n',
    };
    const layout = resolveCgroupLayout((p) => files[p]);
    expect(layout?.version).toBe('cgroup-v1');
    expect(layout?.memory.map((l) => l.limitDir)).toEqual([
      '/sys/fs/cgroup/memory/api/x',
      '/sys/fs/cgroup/memory/api',
      '/sys/fs/cgroup/memory',
    ]);
    expect(layout?.cpu).toEqual([{ limitDir: '/sys/fs/cgroup/cpu', usageDir: '/sys/fs/cgroup/cpuacct' }]);
  });

  it('no /proc/self/cgroup (not Linux): undefined', () => {
    expect(resolveCgroupLayout(() => undefined)).toBeUndefined();
  });
});

describe('CapacitySampler', () => {
  it('cgroup v2 with a 2-core quota: cpu is the cgroup’s usage (none of it ours here) over the quota, not the busy host', () => {
    const fx = fixture({
      files: {
        ...V2_CGROUP,
        [`${CTR}/cpu.max`]: '200000 100000\n',
        [`${CTR}/cpu.stat`]: 'usage_usec 5000000\nuser_usec 1\n',
      },
    });
    const s = new CapacitySampler(fx.probe);
    expect(s.sample().cpuPercent).toBe(0); // first sample: no delta yet
    fx.advance(1_000_000, 0.99); // the host is 99 % busy with others' work ...
    fx.files[`${CTR}/cpu.stat`] = 'usage_usec 5500000\n'; // ... we used 0.5 core-seconds in 1 s
    expect(s.sample().cpuPercent).toBeCloseTo(0.25); // 0.5 / (1 s × 2 cores)
    expect(s.sources().cpu).toBe('cgroup-v2');
  });

  it('cgroup v2: the worker’s own use is not counted, only what the cgroup’s other processes took', () => {
    const fx = fixture({
      files: {
        ...V2_CGROUP,
        [`${CTR}/cpu.max`]: '200000 100000\n',
        [`${CTR}/cpu.stat`]: 'usage_usec 5000000\n',
      },
    });
    const s = new CapacitySampler(fx.probe);
    s.sample();
    fx.advance(1_000_000, 0.99);
    fx.spend(1_900_000); // the worker saturated its 2 cores with its own tasks ...
    fx.files[`${CTR}/cpu.stat`] = 'usage_usec 7000000\n'; // ... and a sidecar took 0.1 core-second
    expect(s.sample().cpuPercent).toBeCloseTo(0.05);
  });

  it('the tightest quota on the path binds, and its level’s usage is used', () => {
    const fx = fixture({
      files: {
        ...V2_CGROUP,
        [`${CTR}/cpu.max`]: 'max 100000\n',
        [`${POD}/cpu.max`]: '50000 100000\n', // half a core for the whole pod
        [`${POD}/cpu.stat`]: 'usage_usec 0\n',
        [`${CTR}/cpu.stat`]: 'usage_usec 0\n',
      },
    });
    const s = new CapacitySampler(fx.probe);
    s.sample();
    fx.advance(1_000_000);
    fx.files[`${POD}/cpu.stat`] = 'usage_usec 400000\n';
    expect(s.sample().cpuPercent).toBeCloseTo(0.8);
  });

  it('no quota: a worker saturating the host with its own tasks is not "busy"; others loading it are', () => {
    const fx = fixture({ files: {}, cores: 2 });
    const s = new CapacitySampler(fx.probe);
    fx.advance(1_000_000, 0.97, 0.9); // 97 % busy, 90 points of it this worker and its Executor
    expect(s.sample().cpuPercent).toBeCloseTo(0.07);
    fx.advance(1_000_000, 0.97, 0); // the same load, all of it someone else's
    expect(s.sample().cpuPercent).toBeCloseTo(0.97);
    expect(s.sources().cpu).toBe('host');
  });

  it('/proc stat lines: utime+stime, cutime+cstime for reaped children; live children summed', () => {
    // pid (comm with spaces) state ppid … field 14 utime, 15 stime, 16 cutime, 17 cstime (USER_HZ 100).
    const stat = (pid: number, u: number, st: number, cu = 0, cs = 0) =>
      `${pid} (node worker x) S 1 ${pid} ${pid} 0 -1 0 0 0 0 0 ${u} ${st} ${cu} ${cs} 20 0 9 0`;
    expect(statCpuUs(stat(7, 150, 50), false)).toBe(2_000_000);
    expect(statCpuUs(stat(7, 150, 50, 10, 10), true)).toBe(2_200_000);
    expect(statCpuUs(undefined, true)).toBe(0);
    const files: Record<string, string> = {
      '/proc/self/stat': stat(7, 999, 999, 30, 20),
      '/proc/self/task/7/children': '11 12\n',
      '/proc/11/stat': stat(11, 100, 0),
      '/proc/12/stat': stat(12, 40, 60),
    };
    // reaped 0.5 s + live 1 s + 1 s
    expect(childrenCpuUs((p) => files[p])).toBe(2_500_000);
    expect(childrenCpuUs(() => undefined)).toBe(0);
  });

  it('no quota ("max", or above the host’s cores): host-wide busy share, said so in sources()', () => {
    for (const quota of ['max 100000\n', '1600000 100000\n']) {
      const fx = fixture({
        files: { ...V2_CGROUP, [`${CTR}/cpu.max`]: quota, [`${CTR}/cpu.stat`]: 'usage_usec 0\n' },
      });
      const s = new CapacitySampler(fx.probe);
      fx.advance(1_000_000, 0.95);
      expect(s.sample().cpuPercent).toBeCloseTo(0.95);
      expect(s.sources().cpu).toBe('host');
    }
  });

  it('cgroup v2 memory: limit, usage without inactive page cache, available capped by the host', () => {
    const fx = fixture({
      files: {
        ...V2_CGROUP,
        [`${CTR}/memory.max`]: `${2 * GiB}\n`,
        [`${CTR}/memory.current`]: `${1.5 * GiB}\n`,
        [`${CTR}/memory.stat`]: `anon 1\nfile 2\ninactive_file ${0.5 * GiB}\nactive_file 3\n`,
      },
    });
    const m = new CapacitySampler(fx.probe).sample();
    expect(m).toMatchObject({
      memoryTotalBytes: 2 * GiB,
      memoryAvailableBytes: 1 * GiB,
      processRssBytes: 123,
    });
    expect(m.memoryPercent).toBeCloseTo(0.5);

    const tight = fixture({ files: fx.files, hostAvailable: 0.25 * GiB });
    const t = new CapacitySampler(tight.probe).sample();
    expect(t.memoryAvailableBytes).toBe(0.25 * GiB);
    expect(t.memoryPercent).toBeCloseTo(0.875);
  });

  it('cgroup v1: cfs quota and cpuacct usage (ns), memory.limit_in_bytes; "unlimited" falls back to the host', () => {
    const fx = fixture({
      files: {
        '/proc/self/cgroup': '5:memory:/\n3:cpu,cpuacct:/\n0::/\n',
        '/sys/fs/cgroup/cpu,cpuacct/cgroup.procs': '1\n',
        '/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us': '100000\n',
        '/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us': '100000\n',
        '/sys/fs/cgroup/cpu,cpuacct/cpuacct.usage': '0\n',
        '/sys/fs/cgroup/memory/memory.limit_in_bytes': '9223372036854771712\n',
        '/sys/fs/cgroup/memory/memory.usage_in_bytes': '5013504\n',
      },
      hostTotal: 32 * GiB,
      hostAvailable: 8 * GiB,
    });
    const s = new CapacitySampler(fx.probe);
    s.sample();
    fx.advance(2_000_000);
    fx.files['/sys/fs/cgroup/cpu,cpuacct/cpuacct.usage'] = `${1_000_000_000}\n`; // 1 s of CPU in 2 s, 1 core
    const m = s.sample();
    expect(m.cpuPercent).toBeCloseTo(0.5);
    expect(m).toMatchObject({
      memoryTotalBytes: 32 * GiB,
      memoryAvailableBytes: 8 * GiB,
      memoryPercent: 0.75,
    });
    expect(s.sources()).toEqual({ cpu: 'cgroup-v1', memory: 'host' });
  });

  it('no cgroup at all: the host, as before', () => {
    const fx = fixture({ files: {}, hostTotal: 16 * GiB, hostAvailable: 4 * GiB });
    const s = new CapacitySampler(fx.probe);
    fx.advance(1_000_000, 0.5);
    expect(s.sample()).toMatchObject({ cpuPercent: 0.5, memoryPercent: 0.75, memoryTotalBytes: 16 * GiB });
    expect(s.sources()).toEqual({ cpu: 'host', memory: 'host' });
  });
});
