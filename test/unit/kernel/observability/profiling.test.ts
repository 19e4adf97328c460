import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProfilingError } from '../../../../src/kernel/observability/errors.js';
import {
  PROFILING_VARIABLES,
  executorFileId,
  profileFileFor,
  startProfiling,
  type ProfiledRole,
} from '../../../../src/kernel/observability/profiling.js';

describe('profileFileFor', () => {
  it.each<[ProfiledRole, string, string]>([
    ['coordinator', '/tmp/c.cpuprofile', '/tmp/c.cpuprofile'],
    ['coordinator', '/tmp/c-%p.cpuprofile', '/tmp/c-42.cpuprofile'],
    ['worker', '/tmp/w.json', '/tmp/w.json'],
    ['worker', '/tmp/%p/w-%p.json', '/tmp/42/w-42.json'],
    // An executor's file always names its pid: `%p` where the name says, else before the extension.
    ['executor', '/tmp/e.cpuprofile', '/tmp/e.42.cpuprofile'],
    ['executor', '/tmp/e', '/tmp/e.42'],
    ['executor', '/tmp/dir.d/trace', '/tmp/dir.d/trace.42'],
    ['executor', '/tmp/e-%p.json', '/tmp/e-42.json'],
  ])('%s %s → %s', (role, value, file) => {
    expect(profileFileFor(role, value, 42)).toBe(file);
  });
});

describe('executorFileId', () => {
  it('is the pid, or for PID 1 of a namespace of its own (every such Executor) 1 and a random suffix', () => {
    expect(executorFileId(4242, () => 'x')).toBe('4242');
    expect(executorFileId(1, () => '0a1b2c3d')).toBe('1-0a1b2c3d');
    expect(
      profileFileFor(
        'executor',
        '/tmp/e.cpuprofile',
        executorFileId(1, () => 'ab'),
      ),
    ).toBe('/tmp/e.1-ab.cpuprofile');
    // Two Executors in namespaces of their own name two files (the default suffix: 8 random hex digits).
    const [a, b] = [executorFileId(1), executorFileId(1)];
    expect(a).toMatch(/^1-[0-9a-f]{8}$/);
    expect(a).not.toBe(b);
  });

  it('startProfiling names an Executor that is PID 1 apart from another', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bx-prof-'));
    try {
      const env = { EXECUTOR_CPU_PROFILE: join(dir, 'e.cpuprofile') };
      const files: string[] = [];
      for (let i = 0; i < 2; i++) {
        const p = await startProfiling('executor', env, 1);
        files.push(...p.files);
        expect(await p.stop()).toEqual([]);
      }
      expect(files[0]).not.toBe(files[1]);
      expect(readdirSync(dir).sort()).toEqual(files.map((f) => basename(f)).sort());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('startProfiling', () => {
  it('does nothing when no variable is set (an empty one counts as unset)', async () => {
    const profiling = await startProfiling('worker', { WORKER_CPU_PROFILE: '', COORDINATOR_TRACE: '/x' });
    expect(profiling.files).toEqual([]);
    expect(await profiling.stop()).toEqual([]);
  });

  it.each(
    Object.entries(PROFILING_VARIABLES).flatMap(([role, v]) => [
      [role as ProfiledRole, v.cpuProfile],
      [role as ProfiledRole, v.trace],
    ]),
  )(
    '%s: %s naming a file in a missing folder is a ProfilingError with the variable and file',
    async (role, variable) => {
      const err = await startProfiling(role, { [variable]: '/no-such-folder/f.json' }, 7).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ProfilingError);
      expect(err).toMatchObject({
        code: 'PROFILE_FILE_UNWRITABLE',
        variable,
        file: role === 'executor' ? '/no-such-folder/f.7.json' : '/no-such-folder/f.json',
      });
    },
  );
});
