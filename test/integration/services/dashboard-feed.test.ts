// The dashboard feed end to end in one process (docs/dashboard-data.md): a real Coordinator
// (runCoordinator, in-process registry, its own WorkerRpcClient) and a real Worker (runWorker) on
// loopback gRPC, tasks run through the Coordinator by the real client, and the feed built from
// `dashboardFeedInputs` seeing them: recent tasks with state, duration and failure, counters turned into
// throughput, a backfill reported through CoordinatorJobsService, a Worker that stops answering skipped.
import { argsValuesOf } from '../../../src/contracts/call-args.js';
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BlockxClient } from '../../../src/client/client.js';
import { planBackfill } from '../../../src/client/backfill/plan.js';
import type { DashboardSnapshot } from '../../../src/contracts/dashboard.js';
import { unaryCall } from '../../../src/grpc/clients.js';
import { CoordinatorJobsServiceClient, workerAdminServiceDefinition } from '../../../src/grpc/proto.js';
import { bindServer } from '../../../src/grpc/status.js';
import { resolveConfig } from '../../../src/kernel/config.js';
import { parseConfigText } from '../../../src/kernel/config-source.js';
import { createPluginRegistry } from '../../../src/kernel/plugin-registry.js';
import type { BuilderPlugin, CallSpec } from '../../../src/kernel/plugin-types.js';
import {
  createDashboardFeed,
  type DashboardFeed,
} from '../../../src/services/coordinator/adapters/dashboard-feed.js';
import { MAX_JOB_ID_CHARS } from '../../../src/services/coordinator/core/backfill-jobs.js';
import {
  runCoordinator,
  type RunningCoordinator,
} from '../../../src/services/coordinator/app/run-coordinator.js';
import { InProcessRegistry } from '../../../src/services/registry/in-process-registry.js';
import type { CallPhaseOutcome, CallPhaseRunner } from '../../../src/services/call-host/index.js';
import { runWorker, type RunningWorker } from '../../../src/services/worker/app/run-worker.js';
import { eventually } from '../../support/eventually.js';
import { hb } from '../../unit/services/coordinator/adapters/fakes.js';
import {
  builderDef,
  returnValueWriter,
  writerDef,
} from '../../unit/services/worker/adapters/orchestration/harness.js';

vi.setConfig({ testTimeout: 60_000 });
const POLL = { timeoutMs: 20_000, intervalMs: 25 } as const;

const config = resolveConfig(
  parseConfigText('version: 1\ndeployments:\n  block:\n    kind: block\n', '/tmp/bx/blockx.config.yaml'),
  {
    deployments: ['block'],
    env: {
      COORDINATOR_LISTEN: '127.0.0.1:0',
      BLOCKX_LOG_LEVEL: 'silent',
      WORKER_TASK_SLOTS: '4',
      // A busy test machine (other test files run beside this one) must not make the Coordinator
      // filter its Worker out as overloaded.
      COORDINATOR_CPU_RED_LINE: '1',
      COORDINATOR_MEMORY_RED_LINE: '1',
    },
  },
);

/** One call per task: `function(block.number)`, or the call list as CallListCallConfig has it. */
const blockBuilder: BuilderPlugin<{ function: string; block?: { number: number } }> = {
  build: (_ctx, c) => ({ calls: [{ function: c.function, args: [c.block?.number ?? 0] }] }),
};
const plugins = createPluginRegistry({
  builders: [builderDef('EchoCallConfig', blockBuilder as BuilderPlugin)],
  writers: [writerDef('ReturnValueResultHandler', returnValueWriter)],
});

/** Calls of `fail_me`, and calls for a block divisible by 4, fail; the rest succeed. */
class ScriptedCalls implements CallPhaseRunner {
  async run(_task: unknown, calls: readonly CallSpec[]): Promise<CallPhaseOutcome> {
    await new Promise<void>((r) => setTimeout(r, 5));
    const bad = calls.some(
      (c) =>
        c.function === 'fail_me' ||
        (Number(argsValuesOf(c.args)[0]) > 0 && Number(argsValuesOf(c.args)[0]) % 4 === 0),
    );
    if (bad) return { success: false, retryable: false, message: 'scripted failure', outputs: [] };
    return { success: true, retryable: false, outputs: calls.map((c) => c.args) };
  }
}

const task = (taskId: string, fn: string) => ({
  taskId,
  functionCallConfig: { type: 'EchoCallConfig', config: { function: fn } },
  resultHandler: { type: 'ReturnValueResultHandler', config: {} },
});

const open: { close(): Promise<void> | void }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function cluster(feedOptions: { workerTimeoutMs?: number } = {}): Promise<{
  registry: InProcessRegistry;
  coordinator: RunningCoordinator;
  worker: RunningWorker;
  feed: DashboardFeed;
}> {
  const registry = new InProcessRegistry();
  const coordinator = await runCoordinator({ config, deployment: 'block', registry });
  open.push(coordinator);
  const worker = await runWorker({
    config,
    deployment: 'block',
    plugins,
    callRunner: new ScriptedCalls(),
    registryWriter: registry.writer(),
    listen: '127.0.0.1:0',
    shutdownGraceMs: 0,
  });
  open.push(worker);
  const feed = createDashboardFeed({ ...coordinator.dashboardFeedInputs, intervalMs: 100, ...feedOptions });
  open.push({ close: () => feed.stop() });
  return { registry, coordinator, worker, feed };
}

const sum = (s: DashboardSnapshot) =>
  s.throughput.reduce((a, p) => ({ succeeded: a.succeeded + p.succeeded, failed: a.failed + p.failed }), {
    succeeded: 0,
    failed: 0,
  });

describe('dashboard feed', () => {
  it('sees the tasks a Worker ran, and turns its counters into throughput', async () => {
    const { coordinator, worker, feed } = await cluster();
    const snapshots: DashboardSnapshot[] = [];
    feed.onSnapshot((s) => snapshots.push(s));
    feed.start();
    // The Worker is in the cluster view and has been polled once (its counters' baseline).
    await eventually(
      () => snapshots.some((s) => s.cluster.workers.some((w) => w.workerAddr === worker.address)),
      {
        ...POLL,
        message: 'the feed sees the worker',
      },
    );

    const client = new BlockxClient({ coordinator: coordinator.address });
    open.push(client);
    const ok = await Promise.all([1, 2, 3].map((i) => client.run(task(`ok-${i}`, 'hello'))));
    const bad = await client.run(task('bad-1', 'fail_me'));
    expect(ok.map((r) => r.state)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    expect(bad.state).toBe('FAILED');

    const seen = await eventually(
      () => {
        const s = feed.snapshot();
        expect(s.recentTasks.filter((t) => t.state === 'SUCCEEDED' || t.state === 'FAILED')).toHaveLength(4);
        expect(sum(s)).toEqual({ succeeded: 3, failed: 1 });
        return s;
      },
      { ...POLL, message: 'the feed shows the four tasks and their throughput' },
    );
    const failed = seen.recentTasks.find((t) => t.taskId === 'bad-1');
    expect(failed).toMatchObject({
      workerAddr: worker.address,
      state: 'FAILED',
      builder: 'EchoCallConfig',
      failureCode: 'CALL_FAILED',
    });
    expect(failed!.failureMessage).toContain('scripted failure');
    for (const t of seen.recentTasks) {
      expect(t.startedAtMs).toBeGreaterThan(0);
      expect(t.endedAtMs).toBeGreaterThanOrEqual(t.startedAtMs);
      expect(t.durationMs).toBe(t.endedAtMs - t.startedAtMs);
    }
    // Newest first, and nothing of the task inputs (the function name is in the config only).
    const times = seen.recentTasks.map((t) => t.endedAtMs || t.startedAtMs);
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(JSON.stringify(seen)).not.toContain('fail_me');
    expect(seen.throughput.every((p) => p.bucketMs > 0 && p.succeeded >= 0 && p.failed >= 0)).toBe(true);
  });

  it('shows a backfill the client reported through the Coordinator, finished with its counts', async () => {
    const { coordinator, feed } = await cluster();
    feed.start();
    const client = new BlockxClient({ coordinator: coordinator.address });
    open.push(client);
    const plan = planBackfill({
      template: {
        functionCallConfig: { type: 'EchoCallConfig', config: { function: 'hello', block: { number: 0 } } },
        resultHandler: { type: 'ReturnValueResultHandler', config: {} },
      },
      from: 1,
      to: 8,
      per: 'block',
    });
    let summary;
    for await (const e of client.backfill(plan, { retries: 0, concurrency: 2 }))
      if (e.type === 'summary') summary = e.summary;
    expect(summary).toMatchObject({ succeeded: 6, failed: 2 });
    const job = await eventually(
      () => {
        const j = feed.snapshot().backfills.find((b) => b.jobId === plan.jobId);
        expect(j?.finished).toBe(true);
        return j!;
      },
      { ...POLL, message: 'the feed shows the finished backfill' },
    );
    expect(job).toMatchObject({
      per: 'block',
      fromBlock: 1,
      toBlock: 8,
      units: 8,
      succeeded: 6,
      failed: 2,
      skipped: 0,
      inFlight: 0,
    });
    expect(job.updatedAtMs).toBeGreaterThanOrEqual(job.startedAtMs);
  });

  it('skips a Worker that does not answer, without holding the snapshot up', async () => {
    const { registry, worker, feed } = await cluster({ workerTimeoutMs: 300 });
    // A second "Worker" in the registry whose ListRecentTasks never answers.
    let asked = 0;
    const hung = new grpc.Server();
    hung.addService(workerAdminServiceDefinition, { ListRecentTasks: () => void asked++ });
    const port = await bindServer(hung, '127.0.0.1:0');
    open.push({ close: () => hung.forceShutdown() });
    const hungAddr = `127.0.0.1:${port}`;
    await registry.writer().publish('/blockx/workers/', hb(hungAddr, 0, { lastHeartbeatMs: Date.now() }));
    feed.start();
    await eventually(() => feed.snapshot().cluster.workers.length === 2, {
      ...POLL,
      message: 'both workers seen',
    });

    const client = new BlockxClient({ worker: worker.address });
    open.push(client);
    await client.run(task('direct-1', 'hello'));
    const seen = await eventually(
      () => {
        const s = feed.snapshot();
        expect(s.recentTasks.map((t) => `${t.taskId}:${t.state}`)).toContain('direct-1:SUCCEEDED');
        expect(sum(s).succeeded).toBe(1);
        return s;
      },
      { ...POLL, message: 'the answering worker is still read' },
    );
    expect(seen.cluster.workers.map((w) => w.workerAddr).sort()).toEqual([hungAddr, worker.address].sort());
    // Every poll asked the hung Worker again: it is skipped per poll, not forgotten.
    await eventually(() => asked >= 2, { ...POLL, message: 'the hung worker asked on later polls' });
  });
});

describe('CoordinatorJobsService on a running Coordinator', () => {
  const report = {
    jobId: 'job1',
    run: 'run1',
    per: 'block',
    fromBlock: 1,
    toBlock: 10,
    units: 10,
    succeeded: 1,
    failed: 0,
    skipped: 0,
    inFlight: 1,
    startedAtMs: 1,
    finished: false,
  };

  it.each([
    ['an oversized job id', { jobId: 'j'.repeat(MAX_JOB_ID_CHARS + 1) }],
    ['a megabyte run tag', { run: 'r'.repeat(1 << 20) }],
    ['counts above the units', { succeeded: 11 }],
    ['an unknown per', { per: 'week' }],
  ])('refuses %s with INVALID_ARGUMENT', async (_name, over) => {
    const { coordinator } = await cluster();
    const jobs = new CoordinatorJobsServiceClient(coordinator.address, grpc.credentials.createInsecure());
    open.push(jobs);
    const err = await unaryCall(
      (md, o, cb) => jobs.reportBackfillProgress({ ...report, ...over }, md, o, cb),
      {
        timeoutMs: 10_000,
      },
    ).then(
      () => undefined,
      (e: unknown) => e as grpc.ServiceError,
    );
    expect(err?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(coordinator.dashboardFeedInputs.backfillJobs?.list(Date.now())).toEqual([]);
  });

  it('accepts a report in bounds and answers how long it keeps it', async () => {
    const { coordinator } = await cluster();
    const jobs = new CoordinatorJobsServiceClient(coordinator.address, grpc.credentials.createInsecure());
    open.push(jobs);
    const res = await unaryCall<{ retainMs: number }>(
      (md, o, cb) => jobs.reportBackfillProgress(report, md, o, cb),
      {
        timeoutMs: 10_000,
      },
    );
    expect(res.retainMs).toBeGreaterThan(0);
    expect(coordinator.dashboardFeedInputs.backfillJobs?.list(Date.now())).toEqual([
      expect.objectContaining({ jobId: 'job1', run: 'run1', succeeded: 1 }),
    ]);
  });
});
