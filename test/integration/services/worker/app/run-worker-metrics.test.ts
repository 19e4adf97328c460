// runWorker's metrics over real HTTP: a Worker serving its own registry (`prometheusListen`), and two
// Workers of one process behind one endpoint, as `blockx up` runs them.
import { afterEach, describe, expect, it } from 'vitest';
import { createPluginRegistry } from '../../../../../src/kernel/plugin-registry.js';
import type { BuilderPlugin } from '../../../../../src/kernel/plugin-types.js';
import { resolveConfig } from '../../../../../src/kernel/config.js';
import { parseConfigText } from '../../../../../src/kernel/config-source.js';
import {
  startMetricsServer,
  type RunningMetricsServer,
} from '../../../../../src/kernel/observability/metrics-server.js';
import { ManualExecutorReadiness } from '../../../../../src/services/call-host/index.js';
import { runWorker, type RunningWorker } from '../../../../../src/services/worker/app/run-worker.js';
import {
  FakeCallRunner,
  builderDef,
  callListBuilder,
  helloTask,
  returnValueWriter,
  settle,
  writerDef,
} from '../../../../unit/services/worker/adapters/orchestration/harness.js';
import { exposedSample } from '../../../../unit/kernel/observability/metric-values.js';
import { canListen, freePort } from '../../../../support/ports.js';

const config = resolveConfig(
  parseConfigText('version: 1\ndeployments:\n  block:\n    kind: block\n', '/tmp/bx/blockx.config.yaml'),
  {
    deployments: ['block'],
    env: { BLOCKX_LOG_LEVEL: 'silent', WORKER_TASK_SLOTS: '4' },
  },
);
const plugins = createPluginRegistry({
  builders: [builderDef('CallListCallConfig', callListBuilder as BuilderPlugin)],
  writers: [writerDef('ReturnValueResultHandler', returnValueWriter)],
});

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function worker(extra: { prometheusListen?: string; readiness?: ManualExecutorReadiness } = {}) {
  const running: RunningWorker = await runWorker({
    config,
    deployment: 'block',
    plugins,
    callRunner: new FakeCallRunner('auto'),
    executorReadiness: extra.readiness ?? new ManualExecutorReadiness(true),
    listen: '127.0.0.1:0',
    shutdownGraceMs: 0,
    ...(extra.prometheusListen === undefined ? {} : { prometheusListen: extra.prometheusListen }),
  });
  open.push(running);
  return running;
}

async function scrape(address: string, path = '/metrics'): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://${address}${path}`);
  return { status: res.status, body: await res.text() };
}

describe('runWorker metrics', () => {
  it('serves the Worker registry on prometheusListen, labelled with the Worker address', async () => {
    const readiness = new ManualExecutorReadiness(true);
    const w = await worker({ prometheusListen: '127.0.0.1:0', readiness });
    const server = w.metricsServer;
    expect(server?.address).toMatch(/^127\.0\.0\.1:\d+$/);
    w.orchestrator.submitTask(helloTask('t1'), undefined);
    await settle();
    readiness.markLost('executor process exited (code 1)');
    const labels = { service: 'worker', deployment: 'block', instance: w.address };
    const { status, body } = await scrape(server!.address);
    expect(status).toBe(200);
    expect(exposedSample(body, 'blockx_worker_tasks_total', { ...labels, code: 'SUCCEEDED' })).toBe(1);
    expect(exposedSample(body, 'blockx_worker_slots', { ...labels, state: 'free' })).toBe(4);
    for (const phase of ['builder', 'calls', 'plugin']) {
      expect(exposedSample(body, 'blockx_worker_phase_duration_seconds_count', { ...labels, phase })).toBe(1);
    }
    expect(exposedSample(body, 'blockx_executor_restarts_total', labels)).toBe(1);
    for (const name of [
      'blockx_worker_call_attempts_total',
      'blockx_worker_call_retries_total',
      'blockx_worker_dispatcher_inflight',
      'blockx_worker_io_cache_hits_total',
      'blockx_worker_io_cache_misses_total',
      'blockx_worker_io_retries_total',
      'blockx_worker_semaphore_waiting',
    ]) {
      expect(body).toContain(`# TYPE ${name} `);
    }
    expect((await scrape(server!.address, '/')).status).toBe(404);
    await w.close();
    await expect(fetch(`http://${server!.address}/metrics`)).rejects.toThrow();
  });

  it('an invalid prometheusListen fails the start and leaves nothing running', async () => {
    const port = await freePort();
    await expect(
      runWorker({
        config,
        deployment: 'block',
        plugins,
        executorReadiness: new ManualExecutorReadiness(true),
        listen: `127.0.0.1:${port}`,
        shutdownGraceMs: 0,
        prometheusListen: 'nope',
      }),
    ).rejects.toMatchObject({ code: 'METRICS_ADDRESS_INVALID' });
    // The gRPC server had bound its port: the failed start closed it.
    expect(await canListen(port)).toBe(true);
  });

  it('serves nothing without prometheusListen; the registry is still there for the process entry', async () => {
    const w = await worker();
    expect(w.metricsServer).toBeUndefined();
    expect(await w.metrics.registry.metrics()).toContain('blockx_worker_slots');
  });

  it('two Workers in one process: separate registries, one endpoint, told apart by instance', async () => {
    const a = await worker();
    const b = await worker();
    a.orchestrator.submitTask(helloTask('on-a'), undefined);
    b.orchestrator.submitTask(helloTask('on-b-1'), undefined);
    b.orchestrator.submitTask(helloTask('on-b-2'), undefined);
    await settle();
    const server: RunningMetricsServer = await startMetricsServer({
      listenAddr: '127.0.0.1:0',
      path: config.observability.prometheus.path,
      registry: [a.metrics.registry, b.metrics.registry],
    });
    open.push(server);
    const { body } = await scrape(server.address);
    expect(body.match(/^# TYPE blockx_worker_tasks_total counter$/gm)).toHaveLength(1);
    const succeeded = (instance: string) =>
      exposedSample(body, 'blockx_worker_tasks_total', { code: 'SUCCEEDED', instance });
    expect(succeeded(a.address)).toBe(1);
    expect(succeeded(b.address)).toBe(2);
  });
});
