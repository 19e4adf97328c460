// The Executor's environment (src/services/call-host/adapters/executor-env.ts): the fixed list, the
// locale and passEnv by name; nothing else of the Worker's.
import { describe, expect, it } from 'vitest';
import { executorEnvironment } from '../../../../../src/services/call-host/adapters/executor-env.js';

describe('executorEnvironment', () => {
  const worker = {
    PATH: '/usr/bin',
    HOME: '/root',
    LANG: 'C.UTF-8',
    LC_ALL: 'C',
    TZ: 'UTC',
    PYTHONPATH: '/opt/py',
    BLOCKX_LOG_LEVEL: 'debug',
    EXECUTOR_CPU_PROFILE: '/tmp/x.cpuprofile',
    ETCD_PASSWORD: 'secret',
    BLOCKX_STORAGE_URL: 'postgres://u:p@db/x',
    BLOCKX_TLS_KEY: '/etc/blockx/node-key.pem',
    AWS_SECRET_ACCESS_KEY: 'k',
    FN_REGION: 'eu-1',
    LC_lower: 'not a locale variable',
    EMPTY: undefined,
  };

  const FIXED = [
    'BLOCKX_LOG_LEVEL',
    'EXECUTOR_CPU_PROFILE',
    'HOME',
    'LANG',
    'LC_ALL',
    'PATH',
    'PYTHONPATH',
    'TZ',
  ];
  it.each([
    [[], FIXED],
    [['FN_REGION'], [...FIXED, 'FN_REGION'].sort()],
    [['AWS_SECRET_ACCESS_KEY', 'NOT_SET'], [...FIXED, 'AWS_SECRET_ACCESS_KEY'].sort()],
  ])('passEnv %j gives exactly %j', (passEnv, names) => {
    const env = executorEnvironment(worker, passEnv);
    expect(Object.keys(env).sort()).toEqual(names);
    for (const n of names) expect(env[n]).toBe(worker[n as keyof typeof worker]);
  });
});
