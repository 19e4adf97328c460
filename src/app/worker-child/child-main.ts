// Entry of a Worker child process of `blockx up` (forked by worker-processes.ts; README.md beside).
// It waits for its `start` message, loads the same config as its parent (the parent's --config, cwd
// and flags; the environment is inherited), and assembles one Worker with its Executors and its own
// storage connection exactly as `blockx worker` does (worker-assembly.ts), except that:
//   - its heartbeats go to the parent's in-process registry over the channel (IpcRegistryWriter), or
//     to etcd when the config names endpoints;
//   - deployed functions come from the parent's functions store (`functions.source: cluster` without
//     etcd);
//   - its metrics are read by the parent at each scrape instead of served here;
//   - the parent prints its address and fires the lifecycle hooks: this process fires none.
// It stops (the Worker closes, the stack unwinds, exit 0) on the parent's `stop`, or when the channel
// closes (the parent died: no orphan). SIGINT and SIGTERM are left to the parent: sent to the process
// group (Ctrl-C, a service manager) they reach it too, and it stops its children in order. A child
// killed alone (SIGKILL) is started again by the parent.
import path from 'node:path';
import { pino } from 'pino';
import type { ClusterCodeSource } from '../../services/worker/adapters/code-view/cluster-code-view.js';
import type { Bundle } from '../../services/functions-store/bundle.js';
import type { CurrentPointer } from '../../services/functions-store/store-keys.js';
import { IpcRegistryWriter } from '../../services/registry/ipc-registry.js';
import { startExecutorRuntime } from '../../services/worker/app/executor-runtime.js';
import { loadConfig, type LoadConfigOptions } from '../../kernel/config.js';
import { bootKernelWithConfig } from '../../kernel/kernel.js';
import { boundedPino } from '../../kernel/observability/logger.js';
import { PROFILING_VARIABLES, withProfiling } from '../../kernel/observability/profiling.js';
import { LivePluginRegistry } from '../../kernel/plugin-registry.js';
import { TeardownStack } from '../../kernel/teardown-stack.js';
import { metricsForParent } from '../process-metrics.js';
import { assembleWorker } from '../worker-assembly.js';
import { watchWorkerConfig } from '../worker-command.js';
import {
  answer,
  PendingRequests,
  type ChildMessage,
  type ParentMessage,
  type WorkerChildStart,
} from './protocol.js';

/** How long the child waits for its parent's answer about deployed functions. */
const FUNCTIONS_REQUEST_TIMEOUT_MS = 10_000;

function send(message: ChildMessage): void {
  if (process.send === undefined || !process.connected) throw new Error('the blockx up process is gone');
  process.send(message);
}

function firstStart(): Promise<WorkerChildStart> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: ParentMessage): void => {
      if (message.kind !== 'start') return;
      process.off('message', onMessage);
      resolve(message);
    };
    process.on('message', onMessage);
    process.once('disconnect', () => reject(new Error('the blockx up process is gone before the start')));
  });
}

async function main(): Promise<number> {
  if (process.send === undefined) {
    process.stderr.write('worker child: started without an IPC channel (blockx up forks it)\n');
    return 2;
  }
  const start = await firstStart();
  const requests = new PendingRequests();
  const configOptions: LoadConfigOptions = {
    ...(start.config.configPath === undefined ? {} : { configPath: start.config.configPath }),
    cwd: start.config.cwd,
    env: process.env,
    flags: [...start.config.flags],
  };
  const logger = boundedPino(
    { level: start.logLevel, base: { app: 'blockx-up' } },
    pino.destination({ dest: 2, sync: true }),
  );
  const workerLog = logger.child({ service: 'worker', worker: start.index });
  const stack = new TeardownStack();
  const metrics = metricsForParent();
  let stopping: Promise<void> | undefined;
  let stopped!: (code: number) => void;
  const exitCode = new Promise<number>((resolve) => (stopped = resolve));
  const stop = (why: string, code = 0): Promise<void> =>
    (stopping ??= (async () => {
      workerLog.info({ why }, 'worker child stopping');
      await stack.disposeAsync().catch((err: unknown) => workerLog.error({ err }, 'stop failed'));
      requests.failAll('the worker is stopping');
      stopped(code);
    })());
  process.on('message', (message: ParentMessage) => {
    switch (message.kind) {
      case 'stop':
        void stop('stop asked by blockx up');
        return;
      case 'request':
        void answer(
          message,
          (r) =>
            r.what === 'metrics'
              ? metricsJson(metrics.registries)
              : Promise.reject(new Error(`a worker child answers no ${r.what}`)),
          send,
        );
        return;
      case 'reply':
        requests.settleReply(message);
        return;
      case 'start':
        return;
      default: {
        const unknown: never = message;
        workerLog.warn({ message: unknown }, 'unknown message from blockx up');
      }
    }
  });
  process.on('disconnect', () => void stop('the blockx up process is gone'));
  // A signal sent to the whole process group (Ctrl-C, `timeout`, a service manager) reaches the parent
  // too, which stops its children in order: the Worker must not stop on its own meanwhile.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => undefined);
  // SIGHUP (forwarded by the parent) reloads the config once the Worker runs; before, it must not kill.
  process.on('SIGHUP', () => undefined);

  const codeSource: ClusterCodeSource = {
    current: async () =>
      (await requests.request(send, 'functions.current', undefined, FUNCTIONS_REQUEST_TIMEOUT_MS)) as
        CurrentPointer | undefined,
    fetch: async (pointer) =>
      (await requests.request(send, 'functions.fetch', pointer, FUNCTIONS_REQUEST_TIMEOUT_MS)) as Bundle,
  };
  try {
    const booted = await bootKernelWithConfig(loadConfig(configOptions));
    // Plugins a config reload may load again (docs/plugins.md § Loading plugins again).
    const plugins = new LivePluginRegistry(booted.plugins);
    const kernel = { ...booted, plugins };
    const { worker, storage } = await assembleWorker(
      {
        kernel,
        deployment: start.deployment,
        logger: workerLog,
        listen: start.listen,
        deps: {
          metrics,
          executor: (ctx) =>
            startExecutorRuntime({
              ...ctx,
              logger: logger.child({ service: 'executor', worker: start.index }),
              ...(start.functionsFromParent ? { functionsStore: codeSource } : {}),
            }),
          ...(start.registryFromParent ? { registryWriter: () => new IpcRegistryWriter(send) } : {}),
        },
      },
      stack,
    );
    // The Worker of a running `blockx up` takes what a config change allows, as `blockx worker` does.
    stack.defer(
      'config watch',
      await watchWorkerConfig({ kernel, configOptions, storage, logger: workerLog }),
    );
    send({ kind: 'ready', address: worker.address, boundAddress: worker.boundAddress });
  } catch (err) {
    await stop('start failed', 1);
    try {
      send({ kind: 'failed', error: err instanceof Error ? err.message : String(err) });
    } catch {
      // The parent is gone.
    }
  }
  return exitCode;
}

/** Every sample of the child's registries, their default labels applied (prom-client's JSON form). */
async function metricsJson(
  registries: readonly { getMetricsAsJSON(): Promise<unknown[]> }[],
): Promise<unknown[]> {
  const families: unknown[] = [];
  for (const registry of registries) families.push(...(await registry.getMetricsAsJSON()));
  return families;
}

/**
 * WORKER_CPU_PROFILE / WORKER_TRACE record each Worker child, into a file of its own: the process id goes
 * before the extension unless the name places it with `%p` (docs/performance.md § Profiling).
 */
function profilingEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const variable of Object.values(PROFILING_VARIABLES.worker)) {
    const value = env[variable];
    if (value === undefined || value === '' || value.includes('%p')) continue;
    const ext = path.extname(value);
    env[variable] = `${value.slice(0, value.length - ext.length)}.%p${ext}`;
  }
  return env;
}

process.exitCode = await withProfiling(
  'worker',
  'blockx up: worker child',
  { env: profilingEnv(), stderr: (text) => void process.stderr.write(text) },
  main,
);
// Stopped: the channel and any stray handle must not keep the process alive.
if (process.connected) process.disconnect();
setTimeout(() => process.exit(), 2_000).unref();
