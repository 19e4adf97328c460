// An Executor that crashes repeatedly must not keep its Worker out of rotation (issue 31, item 3): real
// etcd, `blockx coordinator` and two `blockx worker` (test/support/cluster.ts). Under a steady stream of
// ReserveWorkerSlot calls, worker 0's Executor is SIGKILLed several times, a few seconds apart. While it
// restarts the Worker answers Unavailable "not ready" — the Coordinator counts that as backpressure, not
// as a failure (docs/coordinator.md § Penalties and the circuit breaker), so once the new Executor is
// ready the Worker takes reservations again within 2 s. Before, three such answers opened the breaker for
// its 10 s cooldown.
//
// When the Executor is ready again is learnt from the Worker itself: a direct RequestTaskSlot probe (a
// short ttl) is refused Unavailable from when the Worker sees the loss until then. The Worker must not
// log the restart backoff as a stall of its own event loop either (item 4).
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCoordinatorClient, createWorkerClient, unaryCall } from '../../src/grpc/clients.js';
import type { CoordinatorServiceClient, WorkerServiceClient } from '../../src/grpc/proto.js';
import type {
  RequestTaskSlotResponseWireOut,
  ReserveWorkerSlotResponseWireOut,
} from '../../src/grpc/wire-types.js';
import { startCluster } from '../support/cluster.js';
import type { TestCluster } from '../support/cluster.js';

const KILLS = 8;
// After each kill's gap is measured, worker 0 takes the load this long before the next kill. The breaker
// counts failures since the last success (docs/coordinator.md § Penalties and the circuit breaker), so a
// second of successes ends the streak as surely as the 3 s this waited before (issue 27, item 6).
const KILL_SPACING_MS = 1_000;
const ROUTABLE_WITHIN_MS = 2_000;
// The supervisor's restart delay doubles from 100 ms per kill and the streak is forgiven only after 10 s
// ready (docs/executor.md § Sequences, Executor loss). Capped at 800 ms here instead of the default 5 s,
// which added about 11 s of waiting over the eight kills and tests nothing more (a timing knob).
const RESTART_BACKOFF_MAX_MS = 800;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The pid of the Executor child of the Worker process `workerPid`, or undefined while none runs. */
function executorPid(workerPid: number): number | undefined {
  try {
    const out = execFileSync('pgrep', ['-P', String(workerPid), '-f', 'executor'], { encoding: 'utf8' });
    const pid = Number(out.trim().split('\n')[0]);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined; // pgrep exits 1 when nothing matches
  }
}

describe('an executor restarting keeps its worker in rotation (real etcd and processes)', () => {
  let cluster: TestCluster;
  let coordinator: CoordinatorServiceClient;
  let worker0: WorkerServiceClient;

  beforeAll(async () => {
    cluster = await startCluster({
      workers: 2,
      taskSlots: 64,
      // Reservations are never submitted: a short window returns their slots soon.
      // The coordinator logs each worker refusal at debug: the failure message shows them.
      env: { COORDINATOR_SLOT_TTL_MS: '1000', BLOCKX_LOG_LEVEL: 'debug' },
      workerEnv: () => ({ BLOCKX_LOG_LEVEL: 'warn' }),
      configPatch: (doc) => {
        const deployments = doc['deployments'] as Record<string, { executor?: Record<string, unknown> }>;
        for (const d of Object.values(deployments))
          d.executor = { ...d.executor, restartBackoffMaxMs: RESTART_BACKOFF_MAX_MS };
      },
    });
    coordinator = createCoordinatorClient(cluster.coordinatorAddr);
    worker0 = createWorkerClient(cluster.workers[0]!.addr);
  }, 90_000);
  afterAll(async () => {
    coordinator?.close();
    worker0?.close();
    await cluster?.stop();
  });

  it(`after each of ${KILLS} executor SIGKILLs the worker takes reservations within 2 s of being ready`, async () => {
    const w0 = cluster.workers[0]!;
    const workerPid = w0.child.pid!;
    // The load: one reservation every 25 ms; each records when it landed on worker 0.
    let stopLoad = false;
    let seq = 0;
    const placedOnWorker0: number[] = [];
    const loadErrors: string[] = [];
    const load = (async () => {
      while (!stopLoad) {
        const taskId = `restart-${seq++}`;
        void unaryCall<ReserveWorkerSlotResponseWireOut>(
          (md, o, cb) => coordinator.reserveWorkerSlot({ taskId }, md, o, cb),
          { timeoutMs: 5_000 },
        ).then(
          (r) => {
            if (r.workerAddr === w0.addr) placedOnWorker0.push(Date.now());
          },
          (err: Error) => void loadErrors.push(err.message),
        );
        await sleep(25);
      }
    })();

    const probeReady = async (): Promise<boolean> => {
      try {
        await unaryCall<RequestTaskSlotResponseWireOut>(
          (md, o, cb) => worker0.requestTaskSlot({ taskId: `probe-${seq++}`, ttlMs: 200 }, md, o, cb),
          { timeoutMs: 1_000 },
        );
        return true;
      } catch {
        return false;
      }
    };

    const coordLines: string[] = [];
    const onCoord = (c: Buffer): void => {
      for (const line of c.toString().split('\n')) if (line.includes(w0.addr)) coordLines.push(line);
    };
    cluster.coordinator.stderr?.on('data', onCoord);
    cluster.coordinator.stdout?.on('data', onCoord);
    const gaps: number[] = [];
    const heard: string[] = [];
    try {
      for (let k = 0; k < KILLS; k++) {
        const pid = executorPid(workerPid);
        expect(pid, `executor of worker 0 before kill ${k + 1}\n${cluster.output()}`).toBeDefined();
        process.kill(pid!, 'SIGKILL');
        // Not ready from when the Worker sees the loss (its socket closing: on a loaded box that can
        // take a moment) until the new Executor's first heartbeat (restart backoff + boot).
        const deadline = Date.now() + 20_000;
        while (await probeReady()) {
          expect(Date.now() < deadline, `worker 0 saw the loss of executor ${pid}`).toBe(true);
          await sleep(10);
        }
        while (!(await probeReady())) {
          expect(Date.now() < deadline, `worker 0 ready again after kill ${k + 1}`).toBe(true);
          await sleep(50);
        }
        const readyAt = Date.now();
        while (placedOnWorker0.every((t) => t < readyAt) && Date.now() - readyAt < 15_000) await sleep(20);
        const back = placedOnWorker0.find((t) => t >= readyAt);
        gaps.push(back === undefined ? Number.POSITIVE_INFINITY : back - readyAt);
        // What the Coordinator heard from worker 0 since it was ready, for the failure message.
        if (Date.now() - readyAt > ROUTABLE_WITHIN_MS) {
          const since = coordLines.filter((l) => Number(/"time":(\d+)/.exec(l)?.[1]) >= readyAt);
          heard.push(`kill ${k + 1}:\n${since.slice(0, 10).join('\n')}`);
        }
        await sleep(KILL_SPACING_MS);
      }
    } finally {
      stopLoad = true;
      await load;
    }
    console.log(`ready → first reservation on worker 0 (ms): ${gaps.join(', ')}`);
    for (const [k, gap] of gaps.entries()) {
      const why = heard.join('\n');
      expect(gap, `kill ${k + 1}: gaps ${gaps.join(', ')}\n${why}\n${cluster.output()}`).toBeLessThan(
        ROUTABLE_WITHIN_MS,
      );
    }
    // The other worker took the load meanwhile: no reservation failed.
    expect(loadErrors, cluster.output()).toEqual([]);
    // The restart backoff is not mistaken for a Worker stall (issue 31, item 4).
    expect(w0.output()).not.toMatch(/event loop did not run/);
    const status = await cluster.status();
    const row = status.workers.find((w) => w.workerAddr === w0.addr);
    expect(row?.routable, JSON.stringify(row)).toBe(true);
  }, 180_000);
});
