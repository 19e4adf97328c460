// `blockx worker` with ETCD_ENDPOINTS set publishes its heartbeat to a REAL etcd: the key
// `<worker.registryPrefix><advertised addr>` appears with a lease and the worker's slot figures, is
// refreshed every WORKER_HEARTBEAT_INTERVAL, and is deleted on a clean shutdown (SIGTERM → drain). Runs
// the built CLI (`node bin/blockx.js`); builds dist/ first when it is missing.
import { execFileSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseWorkerHeartbeat } from '../../src/contracts/heartbeat.js';
import type { WorkerHeartbeat } from '../../src/contracts/heartbeat.js';
import { startEtcd } from '../support/etcd.js';
import type { EtcdServer } from '../support/etcd.js';
import { spawnTracked, stopGroup, waitForExit, waitForLine } from '../support/processes.js';
import { eventually, present } from '../support/eventually.js';

const REPO = path.resolve(import.meta.dirname, '../..');
const CLI = path.join(REPO, 'bin/blockx.js');
const PREFIX = '/blockx/e2e/lanes/hb/workers/'; // v2 form: proves worker.registryPrefix is used

/** The environment without any BlockX / etcd variable of the caller's shell. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) =>
        !/^(BLOCKX_|WORKER_|COORDINATOR_|ETCD_|TASK_DEADLINE_MS|MAX_TASK_TIMEOUT_MS|RESULT_RETENTION_MS|WATCH_DISCONNECT_GRACE_MS|CALL_DEADLINE_MS)/.test(
          k,
        ),
    ),
  );
}

// How this file has always polled: every 25 ms, for 10_000 ms unless a call says otherwise.
const POLL = { timeoutMs: 10_000, intervalMs: 25 } as const;

function heartbeatOf(value: string): WorkerHeartbeat {
  const r = parseWorkerHeartbeat(value);
  if (!r.ok) throw r.error;
  return r.value;
}

describe('blockx worker with ETCD_ENDPOINTS (real etcd, built CLI)', () => {
  let etcd: EtcdServer;
  let raw: Etcd3;
  const children: ChildProcess[] = [];

  beforeAll(() => {
    if (!existsSync(path.join(REPO, 'dist/cli/main.js'))) {
      execFileSync('npm', ['run', 'build'], { cwd: REPO, stdio: 'ignore' });
    }
  });
  beforeAll(async () => {
    etcd = await startEtcd();
    raw = new Etcd3({ hosts: etcd.endpoint });
  });

  afterAll(async () => {
    await Promise.all(children.map((c) => stopGroup(c, 'SIGKILL', 1_000)));
    raw?.close();
    await etcd?.stop();
  });

  async function startWorker(env: Record<string, string>): Promise<{ child: ChildProcess; addr: string }> {
    const child = spawnTracked(
      process.execPath,
      [CLI, 'worker', '--deployment', 'block', '--config', path.join(REPO, 'blockx.config.yaml')],
      {
        cwd: REPO,
        env: {
          ...cleanEnv(),
          ETCD_ENDPOINTS: etcd.endpoint,
          WORKER_LISTEN: '127.0.0.1:0',
          WORKER_REGISTRY_PREFIX: PREFIX,
          BLOCKX_LOG_LEVEL: 'warn',
          ...env,
        },
      },
    );
    children.push(child);
    const line = await waitForLine(child, /^worker listening on \S+/, 30_000);
    const addr = /^worker listening on (\S+)/.exec(line)?.[1] ?? '';
    return { child, addr };
  }

  it('registers under worker.registryPrefix with a lease, refreshes, and removes the key on SIGTERM', async () => {
    const { child, addr } = await startWorker({ WORKER_TASK_SLOTS: '7', WORKER_HEARTBEAT_INTERVAL: '100' });
    const key = `${PREFIX}${addr}`;

    const first = await eventually(async () => present(await raw.get(key).string(), 'the heartbeat key'), {
      ...POLL,
      message: 'the heartbeat key',
    });
    const hb = heartbeatOf(first);
    expect(hb).toMatchObject({ workerAddr: addr, taskSlots: 7, reservedSlots: 0, runningTasks: 0 });

    // A leased key (a crash would let it expire) ...
    const kv = await raw.get(key).exec();
    expect(kv.kvs[0]?.lease).not.toBe('0');
    // ... refreshed every interval.
    await eventually(
      async () => {
        const v = await raw.get(key).string();
        return v !== null && heartbeatOf(v).lastHeartbeatMs > hb.lastHeartbeatMs;
      },
      { ...POLL, message: 'a newer heartbeat' },
    );

    const exited = waitForExit(child);
    child.kill('SIGTERM');
    await exited;
    expect(child.exitCode).toBe(0);
    expect(await raw.get(key).string()).toBeNull();
  });

  it('a worker without ETCD_ENDPOINTS writes nothing to etcd', async () => {
    const { child, addr } = await startWorker({ ETCD_ENDPOINTS: '' });
    await new Promise((r) => setTimeout(r, 500)); // several default 200 ms heartbeat intervals
    expect(await raw.getAll().prefix(PREFIX).keys()).not.toContain(`${PREFIX}${addr}`);
    expect(await raw.getAll().prefix(PREFIX).keys()).toEqual([]);
    await stopGroup(child, 'SIGTERM', 5_000);
  });
});
