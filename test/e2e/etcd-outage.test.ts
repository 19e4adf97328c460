// Placement through an etcd outage (issue 31, item 1): real etcd, `blockx coordinator` and three
// `blockx worker` (test/support/cluster.ts) with the default heartbeat timeout and watch grace (10 s each;
// the harness shortens them, this test puts them back). Under a steady load of tasks, etcd is SIGKILLed for
// 5 s and restarted on its data. No heartbeat reaches the Coordinator meanwhile, so what it knows of the
// Workers' slots comes from their answers to RequestTaskSlot(s) (docs/placement.md § Capacity from the
// Workers' answers). An outage shorter than the grace must be invisible: no run is refused NO_CAPACITY
// (the client does not retry here, so every refusal would surface), none fails, none is lost, and tasks
// keep completing while etcd is down.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlockxClient } from '../../src/client/client.js';
import { startEtcd } from '../support/etcd.js';
import type { EtcdServer } from '../support/etcd.js';
import { startCluster } from '../support/cluster.js';
import type { TestCluster } from '../support/cluster.js';

const OUTAGE_MS = 5_000;
const LANES = 12;
const HELLO = {
  functionCallConfig: { type: 'CallListCallConfig', config: { function: 'hello_world', callList: [['x']] } },
  resultHandler: { type: 'ReturnValueResultHandler', config: {} },
  taskTimeoutMs: 30_000,
};

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('placement through an etcd outage (real etcd and processes)', () => {
  let etcd: EtcdServer;
  let cluster: TestCluster;
  let client: BlockxClient;

  beforeAll(async () => {
    etcd = await startEtcd();
    cluster = await startCluster({
      workers: 3,
      etcd,
      taskSlots: 16,
      configPatch: (doc) => {
        const deployments = doc.deployments as Record<string, Record<string, Record<string, unknown>>>;
        Object.assign(deployments.block!.coordinator!, {
          heartbeatTimeoutMs: 10_000,
          watchGracePeriodMs: 10_000,
        });
      },
    });
    // No retries: a NO_CAPACITY (or any other refusal) reaches the caller instead of being absorbed.
    client = new BlockxClient({
      coordinator: cluster.coordinatorAddr,
      rpcTimeoutMs: 10_000,
      maxReserveAttempts: 1,
      batching: 'off',
    });
  }, 90_000);
  afterAll(async () => {
    client?.close();
    await cluster?.stop();
    await etcd?.stop();
  });

  it(`a ${OUTAGE_MS / 1000} s outage under load: 0 NO_CAPACITY, 0 failed or lost tasks, completions throughout`, async () => {
    let stop = false;
    let seq = 0;
    const started: string[] = [];
    const succeeded = new Set<string>();
    const failures: string[] = [];
    const completedAt: number[] = [];
    const lane = async (l: number): Promise<void> => {
      while (!stop) {
        const taskId = `outage-${l}-${seq++}`;
        started.push(taskId);
        try {
          const r = await client.run({ taskId, ...HELLO });
          if (r.success) {
            succeeded.add(taskId);
            completedAt.push(Date.now());
          } else failures.push(`${taskId}: FAILED`);
        } catch (err) {
          const e = err as { code?: string; message?: string };
          failures.push(`${taskId}: ${e.code ?? ''} ${e.message ?? String(err)}`);
        }
      }
    };
    const lanes = Array.from({ length: LANES }, (_, l) => lane(l));
    await sleep(2_000);
    const killedAt = Date.now();
    await etcd.kill();
    await sleep(OUTAGE_MS);
    const restartedAt = Date.now();
    await etcd.restart();
    await sleep(3_000);
    stop = true;
    await Promise.all(lanes);

    const during = completedAt.filter((t) => t >= killedAt && t < restartedAt).length;
    // The longest stretch without a completion while etcd was down (a stop of placement shows as one).
    const times = [killedAt, ...completedAt.filter((t) => t >= killedAt && t < restartedAt), restartedAt];
    let longestGap = 0;
    for (let i = 1; i < times.length; i++) longestGap = Math.max(longestGap, times[i]! - times[i - 1]!);
    console.log(
      `etcd outage ${restartedAt - killedAt} ms: ${started.length} tasks, ${succeeded.size} succeeded, ` +
        `${during} completed during the outage, longest gap ${longestGap} ms, ${failures.length} failed`,
    );
    const noCapacity = failures.filter((f) => f.includes('NO_CAPACITY'));
    expect(noCapacity.slice(0, 5), cluster.output()).toEqual([]);
    expect(failures.slice(0, 5), cluster.output()).toEqual([]);
    // Nothing lost: every task started has its result.
    expect(succeeded.size).toBe(started.length);
    expect(during).toBeGreaterThan(LANES);
    expect(longestGap).toBeLessThan(2_000);
  }, 60_000);
});
