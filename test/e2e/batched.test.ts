// The batched protocol end to end (issue 15; docs/batched-protocol.md): a real Coordinator and 2 real
// Workers (each with its Executor) from the built CLI, registered in a real etcd, and the TypeScript client
// over real sockets. Thousands of tasks go through ReserveWorkerSlots and one RunTasks stream per Worker;
// every task gets exactly its own result; concurrent run() calls share the path; a Worker SIGKILLed in
// the middle of a batch costs only the tasks it had admitted, each reported as lost, and nothing hangs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlockxClient } from '../../src/client/client.js';
import { ClientErrorCode } from '../../src/client/errors.js';
import { startCluster, type TestCluster } from '../support/cluster.js';

const helloTask = (taskId: string) => ({
  taskId,
  functionCallConfig: {
    type: 'CallListCallConfig',
    config: { function: 'hello_world', callList: [[taskId]] },
  },
  resultHandler: { type: 'ReturnValueResultHandler', config: {} },
});

function outputsOf(pluginResults: readonly { result?: unknown }[]): unknown {
  return pluginResults[0]?.result;
}

describe('batched protocol on a real cluster (etcd + coordinator + 2 workers)', () => {
  let cluster: TestCluster;
  let client: BlockxClient;

  beforeAll(async () => {
    cluster = await startCluster({ workers: 2, taskSlots: 64 });
    client = new BlockxClient({ coordinator: cluster.coordinatorAddr });
  }, 90_000);

  afterAll(async () => {
    client?.close();
    await cluster?.stop();
  });

  it('runMany: 3,000 tasks, each with its own result, spread over both workers', async () => {
    const ids = Array.from({ length: 3_000 }, (_, i) => `many-${i}`);
    const out = await client.runMany(ids.map(helloTask));
    const failures = out.filter((o) => !o.ok || !o.result.success);
    expect(failures.slice(0, 3)).toEqual([]);
    const seen = new Map<string, string>();
    for (const o of out) {
      if (!o.ok) continue;
      expect(outputsOf(o.result.pluginResults)).toEqual([`hello, ${o.result.taskId}`]);
      seen.set(o.result.taskId, o.result.workerAddr);
    }
    expect([...seen.keys()].sort()).toEqual([...ids].sort());
    const byWorker = new Set(seen.values());
    expect(byWorker).toEqual(new Set(cluster.workers.map((w) => w.addr)));
  }, 120_000);

  it('64 concurrent run() calls of one client all succeed through the shared streams', async () => {
    const results = await Promise.all(
      Array.from({ length: 64 }, (_, i) => client.run(helloTask(`conc-${i}`))),
    );
    for (const [i, r] of results.entries()) {
      expect(r.success).toBe(true);
      expect(outputsOf(r.pluginResults)).toEqual([`hello, conc-${i}`]);
    }
  }, 60_000);

  it('a worker killed mid-batch: every task settles, a lost one is UNAVAILABLE, the rest succeed', async () => {
    const ids = Array.from({ length: 4_000 }, (_, i) => `kill-${i}`);
    let settled = 0;
    let killed: Promise<void> | undefined;
    const victim = cluster.workers[0];
    if (victim === undefined) throw new Error('no worker');
    const out = await client.runMany(ids.map(helloTask), {
      onSettled: () => {
        settled++;
        if (settled === 500) killed = victim.kill('SIGKILL');
      },
    });
    await killed;
    expect(out).toHaveLength(ids.length);
    let lost = 0;
    for (const o of out) {
      if (o.ok) {
        expect(o.result.success).toBe(true);
        continue;
      }
      lost++;
      expect(o.error.code, o.error.message).toBe(ClientErrorCode.UNAVAILABLE);
    }
    // Only tasks the dead worker had admitted can be lost: at most its 64 slots (its stream's credits).
    // Those merely reserved or sent to it, unanswered, were placed again and succeeded elsewhere.
    expect(lost).toBeLessThanOrEqual(64);
    await victim.restart();
    await cluster.waitForRoutable(2);
  }, 120_000);
});
