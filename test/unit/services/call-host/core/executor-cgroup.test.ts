// Where an Executor's memory ceiling can live (src/services/call-host/core/executor-cgroup.ts): the
// Worker's own memory cgroup read from /proc/self/cgroup and /proc/self/mountinfo texts of the host
// shapes met in practice, the OOM count, and the names of the child cgroups.
import { describe, expect, it } from 'vitest';
import {
  executorCgroupName,
  memoryCgroupCandidates,
  oomKillsOf,
  parseCgroupMounts,
  workerPidOfCgroup,
} from '../../../../../src/services/call-host/core/executor-cgroup.js';

const mount = (id: number, root: string, point: string, fs: string, opts: string) =>
  `${id} 23 0:${id} ${root} ${point} rw,relatime shared:${id} - ${fs} ${fs} ${opts}`;

// A hybrid host: v1 trees per controller (memory among them) and an empty v2 tree beside them.
const HYBRID = [
  '23 1 0:21 / / rw,relatime - ext4 /dev/vda rw',
  mount(31, '/', '/sys/fs/cgroup', 'tmpfs', 'rw,mode=755'),
  mount(32, '/', '/sys/fs/cgroup/cpu', 'cgroup', 'rw,cpu'),
  mount(35, '/', '/sys/fs/cgroup/memory', 'cgroup', 'rw,memory'),
  mount(41, '/', '/sys/fs/cgroup/unified', 'cgroup2', 'rw'),
].join('\n');
const HYBRID_SELF = '8:pids:/\n4:memory:/process_api/abc\n1:cpu:/\n0::/\n';

// A v2-only host (systemd), the Worker in a service's cgroup.
const UNIFIED = mount(29, '/', '/sys/fs/cgroup', 'cgroup2', 'rw,nsdelegate,memory_recursiveprot');
const UNIFIED_SELF = '0::/system.slice/blockx.service\n';

// A container that sees a bind of its own subtree (root not /), and a mount point with a space.
const BOUND = mount(40, '/kubepods/pod1', '/sys/fs/cgroup', 'cgroup2', 'rw');
const SPACED = mount(40, '/', '/mnt/my\\040cgroups', 'cgroup2', 'rw');

describe('memoryCgroupCandidates', () => {
  it.each([
    {
      name: 'hybrid host: the v2 folder first (its controllers decide), then the v1 memory tree',
      self: HYBRID_SELF,
      mountinfo: HYBRID,
      want: [
        { version: 2, dir: '/sys/fs/cgroup/unified' },
        { version: 1, dir: '/sys/fs/cgroup/memory/process_api/abc' },
      ],
    },
    {
      name: 'v2 only: the service’s folder',
      self: UNIFIED_SELF,
      mountinfo: UNIFIED,
      want: [{ version: 2, dir: '/sys/fs/cgroup/system.slice/blockx.service' }],
    },
    {
      name: 'a bound subtree: the path below its root',
      self: '0::/kubepods/pod1/ctr\n',
      mountinfo: BOUND,
      want: [{ version: 2, dir: '/sys/fs/cgroup/ctr' }],
    },
    {
      name: 'a bound subtree that does not hold the process: nothing',
      self: '0::/kubepods/pod2/ctr\n',
      mountinfo: BOUND,
      want: [],
    },
    {
      name: 'an escaped mount point',
      self: '0::/a\n',
      mountinfo: SPACED,
      want: [{ version: 2, dir: '/mnt/my cgroups/a' }],
    },
    {
      name: 'no memory tree in v1 and no v2 line: nothing',
      self: '1:cpu:/\n',
      mountinfo: mount(32, '/', '/sys/fs/cgroup/cpu', 'cgroup', 'rw,cpu'),
      want: [],
    },
  ])('$name', ({ self, mountinfo, want }) => {
    expect(memoryCgroupCandidates(self, mountinfo)).toEqual(want);
  });

  it('reads v1 controllers from the super options and v2 mounts without any', () => {
    expect(parseCgroupMounts(HYBRID).map((m) => [m.version, m.mountPoint, m.controllers])).toEqual([
      [1, '/sys/fs/cgroup/cpu', ['cpu']],
      [1, '/sys/fs/cgroup/memory', ['memory']],
      [2, '/sys/fs/cgroup/unified', []],
    ]);
  });
});

describe('oomKillsOf', () => {
  it.each([
    ['v2 memory.events', 'low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n', 2],
    ['v1 memory.oom_control', 'oom_kill_disable 0\nunder_oom 0\noom_kill 5\n', 5],
    ['an older v1 kernel without the line', 'oom_kill_disable 0\nunder_oom 0\n', 0],
    ['oom_group_kill alone is not oom_kill', 'oom_group_kill 4\n', 0],
  ])('%s', (_name, text, want) => {
    expect(oomKillsOf(text)).toBe(want);
  });
});

describe('executor cgroup names', () => {
  it('carry the Worker pid, the supervisor’s number and the executor; only ours are read back', () => {
    expect(executorCgroupName(4242, 3, 'python')).toBe('blockx-executor-4242-3-python');
    expect(workerPidOfCgroup(executorCgroupName(4242, 0, 'js'))).toBe(4242);
    for (const other of [
      'blockx-executor-x-0-js',
      'system.slice',
      'blockx-executor-12-js',
      'blockx-executor-1-0-J',
    ])
      expect(workerPidOfCgroup(other), other).toBeUndefined();
  });
});
