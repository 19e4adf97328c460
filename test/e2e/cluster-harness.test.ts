// The cluster harness (test/support/cluster.ts) end to end: a real etcd, `blockx coordinator` and two
// `blockx worker` processes on one SQLite file; hello-world through `blockx submit` (the coordinator found
// from the harness's env and config alone); a SIGKILLed worker dropped by the coordinator once its lease
// expires; and stop() leaving no process behind (every process group it started is gone).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster } from '../support/cluster.js';
import type { TestCluster } from '../support/cluster.js';
import { eventually } from '../support/eventually.js';

/** Whether any process of group `pgid` is alive (signal 0 checks without signalling). */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether group `pgid` goes within `timeoutMs` (a SIGKILLed process is a zombie until its new parent reaps it). */
const groupGone = (pgid: number, timeoutMs = 2_000): Promise<boolean> =>
  eventually(() => !groupAlive(pgid), {
    timeoutMs,
    intervalMs: 20,
    message: `process group ${pgid} gone`,
  }).then(
    () => true,
    () => false,
  );

describe('test/support/cluster.ts: a real coordinator + 2 workers on SQLite', () => {
  let cluster: TestCluster | undefined;
  const c = (): TestCluster => {
    if (cluster === undefined) throw new Error('the cluster did not start');
    return cluster;
  };

  beforeAll(async () => {
    cluster = await startCluster({ workers: 2 });
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('starts both workers, and the coordinator routes to both', async () => {
    const view = await c().status();
    const routable = view.workers.filter((w) => w.routable).map((w) => w.workerAddr);
    expect(routable.sort()).toEqual(
      c()
        .workers.map((w) => w.addr)
        .sort(),
    );
    expect(view.registryPrefixes).toEqual([c().registryPrefix]);
    expect(c().registryPrefix).toMatch(/^\/blockx\/test-[0-9a-f]+\/lanes\/default\/workers\/$/);
  });

  it('runs examples/tasks/hello-world.json with `blockx submit` through the coordinator', async () => {
    const r = await c().cli(['submit', 'examples/tasks/hello-world.json', '--json']);
    expect(r.code, `${r.stdout}${r.stderr}\n${c().output()}`).toBe(0);
    const outcome = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}') as {
      state?: string;
      workerAddr?: string;
      pluginResults?: { pluginName: string; result?: unknown }[];
    };
    expect(outcome.state).toBe('SUCCEEDED');
    expect(c().workers.map((w) => w.addr)).toContain(outcome.workerAddr);
    expect(outcome.pluginResults?.[0]).toMatchObject({
      pluginName: 'ReturnValueResultHandler',
      result: ['hello, ct2', 'hello, blockx'],
    });
  });

  it('a SIGKILLed worker is dropped by the coordinator', async () => {
    const [victim, survivor] = c().workers;
    if (victim === undefined || survivor === undefined) throw new Error('expected 2 workers');
    const pgid = victim.child.pid ?? 0;
    await victim.kill('SIGKILL');
    expect(await groupGone(pgid)).toBe(true); // the worker's executor went with it
    await c().waitForRoutable(1, 15_000);
    const view = await c().status();
    expect(view.workers.filter((w) => w.routable).map((w) => w.workerAddr)).toEqual([survivor.addr]);
  });

  it('stop() leaves no process behind', async () => {
    const pids = [...c().pids(), c().etcd.pid ?? 0];
    expect(pids.length).toBe(3); // coordinator, the surviving worker, etcd
    expect(pids.every(groupAlive)).toBe(true);
    await c().stop();
    const left = [];
    for (const pid of pids) if (!(await groupGone(pid))) left.push(pid);
    expect(left).toEqual([]);
    expect(c().pids()).toEqual([]);
  });
});
