// BlockxClient#backfill's progress reports (src/client/backfill/progress-reporter.ts) against real
// grpc-js fakes on loopback: a Coordinator without CoordinatorJobsService (grpc-js answers UNIMPLEMENTED),
// one whose handler refuses, and one whose handler never answers. None of them may fail or hold up the
// job; the first failure is told once (through `debug`, the older name of `warn`). UNIMPLEMENTED ends
// reporting; a refusal does not (retries with backoff, and the last report is still sent). A Coordinator
// that takes the reports gets the last one marked finished. `--worker` jobs never report.
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { BlockxClient } from '../../../src/client/client.js';
import { planBackfill } from '../../../src/client/backfill/plan.js';
import type { BackfillSummary } from '../../../src/client/backfill/run-backfill.js';
import type { ReportBackfillProgressRequest__Output } from '../../../src/generated/proto/blockx/coordinator/v1/ReportBackfillProgressRequest.js';
import {
  coordinatorJobsServiceDefinition,
  coordinatorServiceDefinition,
  workerServiceDefinition,
  type CoordinatorJobsServiceHandlers,
} from '../../../src/grpc/proto.js';
import { eventually, present } from '../../support/eventually.js';
import { FakeCoordinator, FakeWorker, serve } from './fake-servers.js';

const plan = planBackfill({
  template: {
    functionCallConfig: {
      type: 'BlockTableCallConfig',
      config: { function: 'f', table: 'events', chainId: 1, block: { number: 0 } },
    },
  },
  from: 1,
  to: 20,
  per: 'block',
});

type JobsMode = 'absent' | 'refuse' | 'hang' | 'accept';

const stops: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const s of stops.splice(0).reverse()) await s();
});

async function fakeCluster(mode: JobsMode) {
  const worker = new FakeWorker();
  worker.terminalAfterMs = 1;
  const w = await serve((s) => s.addService(workerServiceDefinition, worker.handlers()));
  worker.address = w.address;
  const coordinator = new FakeCoordinator();
  coordinator.workerAddr = w.address;
  const reports: ReportBackfillProgressRequest__Output[] = [];
  let unanswered = 0;
  const jobs: CoordinatorJobsServiceHandlers = {
    ReportBackfillProgress: (call, callback) => {
      reports.push(call.request);
      if (mode === 'refuse') callback({ code: grpc.status.INTERNAL, details: 'scripted failure' });
      else if (mode === 'hang') unanswered++;
      else callback(null, { retainMs: 1_000 });
    },
  };
  const c = await serve((s) => {
    s.addService(coordinatorServiceDefinition, coordinator.handlers());
    if (mode !== 'absent') s.addService(coordinatorJobsServiceDefinition, jobs);
  });
  stops.push(
    () => w.stop(),
    () => c.stop(),
  );
  return { coordinatorAddr: c.address, workerAddr: w.address, reports, unanswered: () => unanswered };
}

async function runJob(client: BlockxClient, debug?: (m: string) => void): Promise<BackfillSummary> {
  let summary: BackfillSummary | undefined;
  for await (const e of client.backfill(plan, { retries: 0, concurrency: 4, ...(debug ? { debug } : {}) })) {
    if (e.type === 'summary') summary = e.summary;
  }
  if (summary === undefined) throw new Error('no summary');
  return summary;
}

function clientOf(addr: { coordinator: string } | { worker: string }): BlockxClient {
  const client = new BlockxClient({ ...addr, sleep: async () => undefined, random: () => 0 });
  stops.push(() => client.close());
  return client;
}

describe('backfill progress reports', () => {
  it('a Coordinator that does not implement the service neither fails the job nor gets a report: told once', async () => {
    const cluster = await fakeCluster('absent');
    const told: string[] = [];
    const summary = await runJob(clientOf({ coordinator: cluster.coordinatorAddr }), (m) => told.push(m));
    expect(summary).toMatchObject({ blocks: 20, succeeded: 20, failed: 0, interrupted: false });
    // The first report's UNIMPLEMENTED ends reporting (no last report follows it); the warning comes with
    // that answer, which may arrive after the job's end.
    await eventually(() => told.length === 1, { message: 'the warning' });
    expect(told[0]).toMatch(/does not take backfill progress reports/);
    expect(cluster.reports).toEqual([]);
  });

  it('a Coordinator that refuses the reports does not fail the job: told once, the last report still sent once', async () => {
    // A refusal does not end reporting (docs/dashboard-data.md § `CoordinatorJobsService.
    // ReportBackfillProgress`): the next report waits with backoff, and the last one is sent whatever came
    // before, after the job's end, which does not wait for a Coordinator that never answered. So the
    // refusing fake sees the first report, any retry a slow job's backoff let through (2 s after the
    // first), then the last one, marked finished. (This case used to expect the first report alone: it
    // passed only while the last one had not arrived yet when the job's end was checked.)
    const cluster = await fakeCluster('refuse');
    const told: string[] = [];
    const summary = await runJob(clientOf({ coordinator: cluster.coordinatorAddr }), (m) => told.push(m));
    expect(summary).toMatchObject({ blocks: 20, succeeded: 20, failed: 0, interrupted: false });
    const last = await eventually(() =>
      present(
        cluster.reports.find((r) => r.finished),
        'the last report',
      ),
    );
    expect(last).toMatchObject({ jobId: plan.jobId, units: 20, succeeded: 20, failed: 0, inFlight: 0 });
    expect(cluster.reports.at(-1)).toBe(last);
    expect(cluster.reports.length).toBeGreaterThanOrEqual(2);
    expect(cluster.reports.filter((r) => r.finished)).toHaveLength(1);
    expect(told).toHaveLength(1);
    expect(told[0]).toMatch(/report to the coordinator failed; retrying with backoff/);
  });

  it('a Coordinator that never answers does not hold up the end of the job', async () => {
    const cluster = await fakeCluster('hang');
    const summary = await runJob(clientOf({ coordinator: cluster.coordinatorAddr }));
    expect(summary).toMatchObject({ succeeded: 20, failed: 0 });
    // The job ended while its first report is still waiting for an answer.
    expect(cluster.unanswered()).toBeGreaterThanOrEqual(1);
    expect(cluster.reports.every((r) => !r.finished)).toBe(true);
  });

  it('a Coordinator that takes the reports gets the last one, finished, with the final counts', async () => {
    const cluster = await fakeCluster('accept');
    await runJob(clientOf({ coordinator: cluster.coordinatorAddr }));
    const last = cluster.reports.at(-1);
    expect(last).toMatchObject({
      jobId: plan.jobId,
      per: 'block',
      fromBlock: 1,
      toBlock: 20,
      units: 20,
      succeeded: 20,
      failed: 0,
      inFlight: 0,
      finished: true,
    });
    expect(cluster.reports.filter((r) => r.finished)).toHaveLength(1);
  });

  it('a job run straight on a Worker reports nothing', async () => {
    const cluster = await fakeCluster('accept');
    const summary = await runJob(clientOf({ worker: cluster.workerAddr }));
    expect(summary.succeeded).toBe(20);
    expect(cluster.reports).toHaveLength(0);
  });
});
