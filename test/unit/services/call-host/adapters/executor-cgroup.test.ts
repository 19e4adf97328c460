// The executor's cgroup (src/services/call-host/adapters/executor-cgroup.ts) against fake cgroup trees
// in a temp folder (plain files stand in for the kernel's): the child made where the host allows, its
// memory limit written, v1 taken when v2 offers no memory controller, leftovers of dead Workers removed,
// and a clear reason when nothing can be made. The real kernel's side is
// test/integration/services/call-host/executor-memory-ceiling.test.ts.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  openExecutorCgroup,
  WORKER_LEAF_CGROUP,
  type CgroupHost,
} from '../../../../../src/services/call-host/adapters/executor-cgroup.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A fake host: a v2 tree at <tmp>/v2 and a v1 memory tree at <tmp>/v1, the Worker (pid 500) in /svc. */
function fakeHost(v2Controllers: string | undefined, alive: readonly number[] = []) {
  const root = mkdtempSync(join(tmpdir(), 'bx-cgroup-'));
  dirs.push(root);
  const v2 = join(root, 'v2', 'svc');
  const v1 = join(root, 'v1', 'svc');
  mkdirSync(v2, { recursive: true });
  mkdirSync(v1, { recursive: true });
  if (v2Controllers !== undefined) {
    writeFileSync(join(v2, 'cgroup.controllers'), v2Controllers);
    writeFileSync(join(v2, 'cgroup.subtree_control'), '');
  }
  const host: CgroupHost = {
    procSelfCgroup: '4:memory:/svc\n0::/svc\n',
    mountinfo:
      `35 31 0:32 / ${join(root, 'v1')} rw - cgroup cgroup rw,memory\n` +
      `41 31 0:38 / ${join(root, 'v2')} rw - cgroup2 cgroup2 rw\n`,
    pid: 500,
    isAlive: (pid) => alive.includes(pid),
  };
  return { host, v1, v2 };
}

describe('openExecutorCgroup', () => {
  it('v2 with the memory controller: a child with memory.max, the controller given to children', () => {
    const { host, v2 } = fakeHost('cpu io memory pids');
    const r = openExecutorCgroup('python', 100, host);
    expect(r.kind).toBe('ok');
    if (r.kind !== 'ok') return;
    expect(r.cgroup.version).toBe(2);
    expect(r.cgroup.dir).toMatch(new RegExp(`^${v2}/blockx-executor-500-\\d+-python$`));
    expect(readFileSync(join(r.cgroup.dir, 'memory.max'), 'utf8')).toBe(String(100 * 1024 * 1024));
    expect(readFileSync(join(v2, 'cgroup.subtree_control'), 'utf8')).toBe('+memory');
    r.cgroup.add(4321);
    expect(readFileSync(join(r.cgroup.dir, 'cgroup.procs'), 'utf8')).toBe('4321');
    expect(r.cgroup.oomKills()).toBe(0);
    writeFileSync(join(r.cgroup.dir, 'memory.events'), 'oom 2\noom_kill 1\n');
    expect(r.cgroup.oomKills()).toBe(1);
  });

  it('v2 without the memory controller: v1’s memory tree, with memory.limit_in_bytes', () => {
    const { host, v1 } = fakeHost('cpu pids');
    const r = openExecutorCgroup('js', 64, host);
    expect(r.kind === 'ok' && r.cgroup.version).toBe(1);
    if (r.kind !== 'ok') return;
    expect(r.cgroup.dir).toMatch(new RegExp(`^${v1}/blockx-executor-500-\\d+-js$`));
    expect(readFileSync(join(r.cgroup.dir, 'memory.limit_in_bytes'), 'utf8')).toBe(String(64 * 1024 * 1024));
  });

  it('gives each supervisor of a process its own cgroup', () => {
    const { host } = fakeHost('memory');
    const [a, b] = [openExecutorCgroup('js', 64, host), openExecutorCgroup('js', 64, host)];
    expect(a.kind === 'ok' && b.kind === 'ok' && a.cgroup.dir !== b.cgroup.dir).toBe(true);
  });

  it('removes the empty cgroups of Workers that are gone, not those of live ones or others', () => {
    const { host, v2 } = fakeHost('memory', [77]);
    for (const name of ['blockx-executor-66-0-js', 'blockx-executor-77-0-js', 'other'])
      mkdirSync(join(v2, name));
    expect(openExecutorCgroup('js', 64, host).kind).toBe('ok');
    expect(
      ['blockx-executor-66-0-js', 'blockx-executor-77-0-js', 'other'].map((n) => existsSync(join(v2, n))),
    ).toEqual([false, true, true]);
  });

  it('says why when no tree can take it', () => {
    const { host } = fakeHost(undefined);
    const none = { ...host, procSelfCgroup: '0::/elsewhere\n', mountinfo: host.mountinfo.split('\n')[1]! };
    const r = openExecutorCgroup('js', 64, none);
    expect(r).toEqual({
      kind: 'unavailable',
      reason: expect.stringMatching(/^cgroup v2 .*\/elsewhere: cannot read cgroup.controllers \(ENOENT\)$/),
    });
    expect(openExecutorCgroup('js', 64, { ...host, mountinfo: '' })).toEqual({
      kind: 'unavailable',
      reason: 'no cgroup file system with the memory controller is mounted',
    });
  });
});

/**
 * The kernel's "no internal processes" rule on a fake v2 tree: enabling a controller for the children of
 * a cgroup that holds processes is EBUSY; writing a pid into a cgroup.procs moves it there (`refuse`:
 * the move fails with that code instead).
 */
function v2Kernel(refuse?: string): (file: string, text: string) => void {
  const fail = (code: string) => Object.assign(new Error(code), { code });
  return (file, text) => {
    const dir = join(file, '..');
    if (file.endsWith('cgroup.subtree_control')) {
      const procs = existsSync(join(dir, 'cgroup.procs'))
        ? readFileSync(join(dir, 'cgroup.procs'), 'utf8')
        : '';
      if (procs.trim() !== '') throw fail('EBUSY');
    } else if (file.endsWith('cgroup.procs')) {
      if (refuse !== undefined) throw fail(refuse);
      const from = join(dir, '..', 'cgroup.procs');
      const left = readFileSync(from, 'utf8')
        .split('\n')
        .filter((p) => p !== '' && p !== text);
      writeFileSync(from, left.join('\n'));
      const there = existsSync(file) ? readFileSync(file, 'utf8') : '';
      writeFileSync(file, `${there}${text}\n`);
      return;
    }
    writeFileSync(file, text);
  };
}

describe('a v2 cgroup that holds the Worker (a systemd service)', () => {
  it('moves its processes into a leaf, gives its children the memory controller, and makes the Executor beside the leaf', () => {
    const { host, v2 } = fakeHost('memory pids');
    writeFileSync(join(v2, 'cgroup.procs'), '500\n501\n');
    const r = openExecutorCgroup('js', 64, { ...host, writeFile: v2Kernel() });
    expect(r.kind, JSON.stringify(r)).toBe('ok');
    if (r.kind !== 'ok') return;
    const leaf = join(v2, WORKER_LEAF_CGROUP);
    expect(readFileSync(join(leaf, 'cgroup.procs'), 'utf8')).toBe('500\n501\n');
    expect(readFileSync(join(v2, 'cgroup.procs'), 'utf8')).toBe('');
    expect(readFileSync(join(v2, 'cgroup.subtree_control'), 'utf8')).toBe('+memory');
    expect(r.cgroup.dir).toMatch(new RegExp(`^${v2}/blockx-executor-500-\\d+-js$`));
    // The next supervisor of the same Worker, which now reads itself in the leaf: beside it, not below.
    const next = openExecutorCgroup('python', 64, {
      ...host,
      procSelfCgroup: `4:memory:/svc\n0::/svc/${WORKER_LEAF_CGROUP}\n`,
      writeFile: v2Kernel(),
    });
    expect(next.kind === 'ok' && next.cgroup.dir).toMatch(
      new RegExp(`^${v2}/blockx-executor-500-\\d+-python$`),
    );
  });

  it('says what failed and what to do when the processes cannot be moved', () => {
    const { host, v2 } = fakeHost('memory');
    writeFileSync(join(v2, 'cgroup.procs'), '500\n');
    // With v1's memory tree unmounted, nothing else can take the Executor.
    const r = openExecutorCgroup('js', 64, {
      ...host,
      mountinfo: host.mountinfo.split('\n')[1]!,
      writeFile: v2Kernel('EACCES'),
    });
    expect(r.kind).toBe('unavailable');
    expect(r.kind === 'unavailable' && r.reason).toMatch(
      new RegExp(`moving them into ${v2}/${WORKER_LEAF_CGROUP} failed \\(EACCES\\).*Delegate=yes`),
    );
  });
});
