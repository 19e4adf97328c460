// User-caused failures do not make a worker unroutable (issue 14): a real `blockx worker` publishing to
// a real etcd runs 10 tasks whose function throws or does not exist, and the errorRate of its heartbeat
// stays 0 while the tasks fail CALL_FAILED. Before, two such failures put it above the 0.5 red line.
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseWorkerHeartbeat, type WorkerHeartbeat } from '../../src/contracts/heartbeat.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { eventually } from '../support/eventually.js';
import { callListTask, submit, terminalOf } from '../support/worker-tasks.js';
import { ensureBuilt, spawnWorker, type SpawnedWorker } from '../process/worker-health-harness.js';

const PREFIX = '/blockx/e2e/lanes/health/workers/';
const THROWS = `export default (ctx, n) => { throw new Error('user bug #' + n); };\n`;

let etcd: EtcdServer | undefined;
let raw: Etcd3 | undefined;
let w: SpawnedWorker | undefined;

beforeAll(async () => {
  ensureBuilt();
  etcd = await startEtcd();
  raw = new Etcd3({ hosts: etcd.endpoint });
  w = await spawnWorker({
    functions: { 'throws.mjs': THROWS },
    env: { ETCD_ENDPOINTS: etcd.endpoint, WORKER_REGISTRY_PREFIX: PREFIX, WORKER_HEARTBEAT_INTERVAL: '100' },
  });
});

afterAll(async () => {
  w?.client.close();
  await w?.stop();
  raw?.close();
  await etcd?.stop();
});

async function heartbeat(): Promise<WorkerHeartbeat | undefined> {
  const v = await raw!.get(`${PREFIX}${w!.addr}`).string();
  if (v === null) return undefined;
  const r = parseWorkerHeartbeat(v);
  return r.ok ? r.value : undefined;
}

describe('a worker whose tasks fail through the user’s fault', () => {
  it('keeps publishing errorRate 0 (stays routable)', async () => {
    const { client, output } = w!;
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      // Half throw, half call a function that does not exist (a typo in the task).
      const id = `user-fail-${i}`;
      ids.push(id);
      const task =
        i % 2 === 0 ? callListTask(id, 'throws', [[i]]) : callListTask(id, 'no_such_function', [[i]]);
      expect((await submit(client, task)).state).toBe('TASK_STATE_RUNNING');
    }
    for (const id of ids) {
      const done = await terminalOf(client, id, 30_000);
      expect(done.state, output.text()).toBe('FAILED');
      expect(done.result?.executeResult.failureCode).toBe('CALL_FAILED');
    }
    // A heartbeat built after the last failure converged.
    const after = Date.now();
    const hb = await eventually(
      async () => {
        const latest = await heartbeat();
        expect(latest, 'a heartbeat published after the failures').toBeDefined();
        expect(latest?.lastHeartbeatMs).toBeGreaterThan(after);
        return latest;
      },
      { timeoutMs: 10_000, intervalMs: 50, message: 'a heartbeat published after the failures' },
    );
    expect(hb?.errorRate).toBe(0);
  });
});
