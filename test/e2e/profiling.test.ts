// `blockx coordinator` with COORDINATOR_CPU_PROFILE and COORDINATOR_TRACE (docs/performance.md §
// Profiling), on a real etcd: stopped with SIGTERM, it leaves both files. The other roles and the bad
// paths are covered by test/process/profiling.test.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, REPO, cleanEnv } from '../support/cli.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { freePort } from '../support/ports.js';
import { captureOutput, spawnTracked, stopGroup, waitForLine } from '../support/processes.js';
import { expectCpuProfile, expectTrace } from '../support/profile-files.js';

const dir = mkdtempSync(path.join(tmpdir(), 'blockx-profiling-e2e-'));
let etcd: EtcdServer | undefined;

beforeAll(async () => {
  etcd = await startEtcd();
});

afterAll(async () => {
  await etcd?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('blockx coordinator profiling', () => {
  it('writes its CPU profile and trace (%p = its pid) when SIGTERM stops it', async () => {
    const child = spawnTracked(process.execPath, [BIN, 'coordinator', '--deployment', 'block'], {
      cwd: REPO,
      env: cleanEnv({
        ETCD_ENDPOINTS: etcd?.endpoint,
        COORDINATOR_LISTEN: `127.0.0.1:${await freePort()}`,
        BLOCKX_LOG_LEVEL: 'info',
        COORDINATOR_CPU_PROFILE: path.join(dir, 'coordinator-%p.cpuprofile'),
        COORDINATOR_TRACE: path.join(dir, 'coordinator.trace.json'),
      }),
    });
    const output = captureOutput(child);
    try {
      await waitForLine(child, /"msg":"coordinator listening"/, 30_000);
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited, output.text()).toBe(0);
    } finally {
      await stopGroup(child, 'SIGKILL', 1_000);
    }
    const pid = child.pid as number;
    expectCpuProfile(path.join(dir, `coordinator-${pid}.cpuprofile`));
    expectTrace(path.join(dir, 'coordinator.trace.json'), pid);
  });
});
