// A supervised follow job's restarts reach every Coordinator's dashboard through etcd (docs/follow.md §
// Watching a job): a Coordinator and a Worker on etcd, the Coordinator serving its dashboard, a generated
// chain in the cluster's SQLite file, and `blockx jobs run transfers` (a `jobs:` entry of the config) as the
// supervisor. The dashboard shows the job running at the head with 0 restarts; a final block whose hash
// changes makes every run stop with REORG_BEYOND_FINALITY and the supervisor start it again, and the
// dashboard shows the growing restart count and the error, read from etcd (the Coordinator opens no
// storage database).
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FollowJobView } from '../../src/contracts/dashboard.js';
import { startCluster, type TestCluster } from '../support/cluster.js';
import { REPO } from '../support/cli.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { dashboardFollowJob, rehashCanonicalBlock } from '../support/follow-jobs.js';
import { freePort } from '../support/ports.js';

const STEP_MS = 90_000;

let etcd: EtcdServer;
let cluster: TestCluster;
let runner: ChildProcess | undefined;
let out = '';
let dashboard = '';

beforeAll(async () => {
  etcd = await startEtcd();
  const port = await freePort();
  dashboard = `http://127.0.0.1:${port}/api/snapshot`;
  cluster = await startCluster({
    workers: 1,
    etcd,
    env: { BLOCKX_DASHBOARD_LISTEN_ADDR: `127.0.0.1:${port}` },
    configPatch: (doc) => {
      doc['jobs'] = {
        transfers: {
          template: path.join(REPO, 'examples/tasks/block-table-transfers.json'),
          from: 1,
          finality: 5,
          pollIntervalMs: 200,
          restartInitialBackoffMs: 300,
          restartMaxBackoffMs: 60_000,
        },
      };
    },
  });
  for (const args of [
    ['db', 'migrate'],
    ['data', 'generate', '--chain', '1', '--blocks', '30'],
  ]) {
    const r = await cluster.cli(args);
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
  }
}, 180_000);

afterAll(async () => {
  runner?.kill('SIGKILL');
  await cluster?.stop();
  await etcd?.stop();
});

/** The dashboard's only follow job, once `check` accepts it (while the runner runs). */
const onDashboard = (check: (job: FollowJobView) => boolean) =>
  dashboardFollowJob(dashboard, (j) => runner?.exitCode === null && check(j), { timeoutMs: STEP_MS });

describe('a supervised follow job on etcd', () => {
  it(
    "shows on the Coordinator's dashboard with its supervisor's restarts and its error",
    async () => {
      runner = cluster.spawnCli(['jobs', 'run', 'transfers']);
      runner.stdout?.on('data', (d: Buffer) => (out += d.toString()));
      runner.stderr?.on('data', (d: Buffer) => (out += d.toString()));
      const first = await onDashboard((j) => j.state === 'running' && j.head === 30);
      expect(first).toMatchObject({
        kind: 'follow',
        chainId: 1,
        finalized: 25,
        restarts: 0,
        lastError: null,
      });
      expect(first.runner).toMatch(new RegExp(`pid ${runner.pid}$`));

      // Block 25 is final (head 30, finality 5): a new hash there stops each run; the supervisor restarts it.
      rehashCanonicalBlock(cluster.storageUrl.replace(/^sqlite:/, ''), 25, '0xdeep');
      // Each run starts by clearing lastError (it is running again) and sets it when it stops: a report
      // taken between a restart and that run's failure shows the restarts without the error (seen at
      // load 9-16), so the view awaited is the one with both.
      const restarted = await onDashboard((j) => (j.restarts ?? 0) >= 2 && j.lastError !== null);
      expect(restarted.lastError).toContain('block 25 was final');
      expect(restarted.jobId).toBe(first.jobId);
      expect(out).toMatch(/restarting in 600 ms \(2 failure\(s\) in a row\)/);
    },
    3 * STEP_MS,
  );
});
