// What a function can reach of its Worker's environment (docs/security.md § What a function can reach):
// a real Worker whose environment holds secrets (the storage URL, an etcd password) runs a JS and a
// Python function that read their whole environment. Neither sees the secrets; both see PATH and the
// names `executor.passEnv` lists.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlockxClient } from '../../src/client/client.js';
import { startCluster, type TestCluster } from '../support/cluster.js';

const dir = mkdtempSync(path.join(tmpdir(), 'blockx-executor-env-'));
writeFileSync(
  path.join(dir, 'read_env.ts'),
  'export default async function readEnv(): Promise<string[]> {\n  return Object.keys(process.env).sort();\n}\n',
);
writeFileSync(
  path.join(dir, 'read_env_py.py'),
  'import os\n\nasync def main(ctx):\n    return sorted(os.environ.keys())\n',
);

describe('an Executor gets none of its Worker’s secrets', () => {
  let cluster: TestCluster;
  let client: BlockxClient;

  beforeAll(async () => {
    cluster = await startCluster({
      workers: 1,
      functionsDir: dir,
      env: { BLOCKX_TEST_SECRET: 'correct horse', FN_REGION: 'eu-1' },
      configPatch: (doc) => {
        const deployments = doc['deployments'] as Record<string, { executor?: Record<string, unknown> }>;
        for (const d of Object.values(deployments)) d.executor = { ...d.executor, passEnv: ['FN_REGION'] };
      },
    });
    client = new BlockxClient({ coordinator: cluster.coordinatorAddr });
  }, 120_000);

  afterAll(async () => {
    client?.close();
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(['read_env', 'read_env_py'])(
    '%s sees PATH and passEnv, not the storage URL or other secrets',
    async (fn) => {
      const r = await client.run({
        functionCallConfig: { type: 'CallListCallConfig', config: { function: fn, callList: [[]] } },
        resultHandler: { type: 'ReturnValueResultHandler', config: {} },
      });
      expect(r.state, r.failureMessage).toBe('SUCCEEDED');
      const names = (r.pluginResults[0]?.result as string[][])[0]!;
      expect(names).toContain('PATH');
      expect(names).toContain('FN_REGION');
      // Of the Worker's own environment, only the passed names arrive (an interpreter may add its own).
      const allowed =
        /^(PATH|HOME|LANG|LANGUAGE|TZ|TMPDIR|TMP|TEMP|NODE_ENV|NODE_PATH|NODE_V8_COVERAGE|PYTHONPATH|PYTHONHOME|PYTHONDONTWRITEBYTECODE|PYTHONUNBUFFERED|VIRTUAL_ENV|BLOCKX_LOG_LEVEL|EXECUTOR_CPU_PROFILE|EXECUTOR_TRACE|LC_[A-Z]+|FN_REGION)$/;
      // A shell wrapper around the interpreter (a pyenv shim, say) sets its own few.
      const wrapper = fn === 'read_env_py' ? /^(SHLVL|PWD|OLDPWD|_|PYENV_\w+)$/ : /^$/;
      const leaked = Object.keys(cluster.env).filter(
        (n) => !allowed.test(n) && !wrapper.test(n) && names.includes(n),
      );
      expect(leaked).toEqual([]);
      expect(Object.keys(cluster.env)).toEqual(
        expect.arrayContaining(['BLOCKX_STORAGE_URL', 'ETCD_ENDPOINTS']),
      );
      for (const secret of ['BLOCKX_STORAGE_URL', 'BLOCKX_TEST_SECRET', 'ETCD_ENDPOINTS'])
        expect(names, secret).not.toContain(secret);
    },
  );
});
