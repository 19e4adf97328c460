import { describe, expect, it } from 'vitest';
import { ProfilingError } from '../../../../src/kernel/observability/errors.js';
import {
  PROFILING_VARIABLES,
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
