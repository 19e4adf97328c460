// The default Calls phase of a Worker process: the Sans-IO dispatcher driving a supervised Executor
// child over its Unix socket (executor-ports.ts). Shared by `blockx worker` and `blockx up`.
//
// With `functions.source: cluster` the code comes from the version deployed to etcd
// (docs/functions-deploy.md): a ClusterCodeView on its own etcd client fetches it (and polls for new
// ones) before the executor starts; the code epochs it hands out carry its status for the heartbeat.
import { BlockxError } from '../../../kernel/errors.js';
import type { BlockxConfig } from '../../../kernel/config-types.js';
import { loadTlsMaterial } from '../../../kernel/tls-files.js';
import { createEtcdClient, etcdSecurityOf } from '../../registry/etcd-client.js';
import { trustedBundleCheck } from '../../functions-store/bundle-signature.js';
import { EtcdFunctionsKv } from '../../functions-store/etcd-kv.js';
import { FunctionsStore } from '../../functions-store/functions-store.js';
import { ClusterCodeView, type ClusterCodeSource } from '../adapters/code-view/cluster-code-view.js';
import { createExecutorPorts, tsxExecutorCommand, type CallIoHandler } from '../../call-host/index.js';
import type { CallPhaseRunner, CodeEpochSource, ExecutorReadiness } from '../../call-host/index.js';
import type { ServiceLogger } from '../../../kernel/observability/service-logger.js';

export interface ExecutorRuntimeHandle {
  readonly callRunner: CallPhaseRunner;
  readonly executorReadiness: ExecutorReadiness;
  readonly codeEpochs: CodeEpochSource;
  /** Resolves at the Executor's first heartbeat, or after `timeoutMs` (false: not ready yet). */
  whenReady(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

export async function startExecutorRuntime(ctx: {
  config: BlockxConfig;
  deployment: string;
  logger: ServiceLogger;
  /** Serves the functions' `ctx.io` reads (the task IO scopes' handler); default: no storage. */
  io?: CallIoHandler;
  /** The executor command without its flags; default: the built CLI, or src/ under tsx from src/. */
  executorCommand?: readonly string[];
  /**
   * The functions store of `functions.source: cluster` when it is not etcd: `blockx up` with its
   * in-process registry passes the store its Coordinator serves (docs/functions-deploy.md).
   */
  functionsStore?: ClusterCodeSource;
}): Promise<ExecutorRuntimeHandle> {
  const cluster = await startClusterCode(ctx.config, ctx.logger, ctx.functionsStore);
  const ports = createExecutorPorts({
    ...(cluster ? { codeView: cluster.view, codeVersion: () => cluster.view.status() } : {}),
    config: ctx.config,
    deployment: ctx.deployment,
    functionsDir: ctx.config.functions.dir,
    logger: ctx.logger,
    ...(ctx.io ? { io: ctx.io } : {}),
    // Running from the TypeScript sources (tsx, tests): there may be no dist/ for `bin/blockx.js executor`.
    ...(ctx.executorCommand !== undefined
      ? { executorCommand: ctx.executorCommand }
      : import.meta.url.endsWith('.ts')
        ? { executorCommand: tsxExecutorCommand() }
        : {}),
  });
  try {
    await ports.start();
  } catch (err) {
    await cluster?.close();
    throw err;
  }
  return {
    callRunner: ports.callRunner,
    executorReadiness: ports.executorReadiness,
    codeEpochs: ports.codeEpochs,
    async whenReady(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<boolean>(
        (resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)),
      );
      try {
        return await Promise.race([ports.whenReady().then(() => true), timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    close: async () => {
      await ports.close();
      await cluster?.close();
    },
  };
}

/**
 * The deployed-version view of `functions.source: cluster`, its first fetch done (or failed and
 * reported: the worker starts anyway and picks the version up when it can). Undefined in local mode.
 */
async function startClusterCode(
  config: BlockxConfig,
  logger: ServiceLogger,
  given: ClusterCodeSource | undefined,
): Promise<{ view: ClusterCodeView; close(): Promise<void> } | undefined> {
  if (config.functions.source !== 'cluster') return undefined;
  const etcd = config.registry.etcd;
  if (given === undefined && etcd.endpoints.length === 0) {
    throw new BlockxError(
      'CONFIG_INVALID',
      'functions.source: cluster needs registry.etcd.endpoints (ETCD_ENDPOINTS): deployed versions live in ' +
        'etcd (docs/functions-deploy.md); without etcd, use functions.source: local (or `blockx up`, whose ' +
        'coordinator holds the versions of its in-process cluster)',
    );
  }
  const client =
    given === undefined
      ? createEtcdClient({
          endpoints: etcd.endpoints,
          unaryDeadlineMs: etcd.dialTimeoutMs,
          security: etcdSecurityOf(etcd),
        })
      : undefined;
  // With a cluster CA, only bundles signed by a deployer or admin certificate of that CA run
  // (docs/functions-deploy.md § Signed deploys).
  const tls = loadTlsMaterial(config.tls);
  const view = new ClusterCodeView({
    source: given ?? new FunctionsStore(new EtcdFunctionsKv(client!)),
    functionsDir: config.functions.dir,
    logger,
    ...(tls === undefined ? {} : { check: trustedBundleCheck(tls.ca.toString('utf8')) }),
  });
  await view.start();
  const status = view.status();
  logger.info(
    {
      component: 'functions',
      source: 'cluster',
      version: status.version ?? null,
      error: status.error ?? null,
    },
    status.version === undefined ? 'functions.source: cluster: no version yet' : 'functions.source: cluster',
  );
  return {
    view,
    close: async () => {
      view.close();
      client?.close();
    },
  };
}
