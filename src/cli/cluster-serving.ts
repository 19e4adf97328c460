// What a running cluster checks a task against, for `blockx validate --coordinator ADDR`: the Workers
// the Coordinator lists, each asked what it serves now (WorkerAdminService.DescribeServing: its plugins
// with their config schemas, the tables it serves after any config reload, the functions of the code new
// tasks get). A Worker's view is turned
// into the plugin registry and tables task-check.ts takes, so a task is checked against it by the same
// function `blockx submit` runs before sending (and the Worker's admission runs on arrival): a problem
// found there is what the cluster does not know yet (a table added to the file but not reloaded, a
// plugin installed but not loaded).
import type { SchemaIssue } from '../kernel/errors.js';
import type { BlockxConfig } from '../kernel/config-types.js';
import { createPluginRegistry, type PluginRegistry } from '../kernel/plugin-registry.js';
import type { BuilderPlugin, WriterPlugin } from '../kernel/plugin-types.js';
import type { TlsMaterial } from '../kernel/tls-files.js';
import type { DescribeServingResponse__Output } from '../generated/proto/blockx/worker/v1/DescribeServingResponse.js';

/** One Worker's view: what it checks a task against. */
export interface ServedView {
  readonly worker: string;
  readonly deployment: string;
  readonly plugins: PluginRegistry;
  readonly tables: BlockxConfig['tables'];
  /** Its function names; undefined when it cannot say (the local lookup stands in). */
  readonly functions: readonly string[] | undefined;
}

/** The Workers that answered, and a line for each one that did not. */
export interface ClusterViews {
  readonly views: readonly ServedView[];
  readonly unchecked: readonly string[];
}

// The plugins of another process: only their schemas travel, so their entry points say so if called.
const elsewhere = (): never => {
  throw new Error('a plugin of a running Worker: only its config schema is known here');
};
const REMOTE_BUILDER: BuilderPlugin = Object.freeze({ build: elsewhere });
const REMOTE_WRITER: WriterPlugin = Object.freeze({ execute: elsewhere });

/** A Worker's DescribeServing answer as the registry and tables task-check.ts takes. */
export function servedView(worker: string, wire: DescribeServingResponse__Output): ServedView {
  const of = (kind: string) =>
    wire.plugins
      .filter((p) => p.kind === kind)
      .map((p) => ({
        type: p.type,
        name: p.type,
        packagePath: `(served by ${worker})`,
        schema: JSON.parse(p.schemaJson) as unknown,
      }));
  return {
    worker,
    deployment: wire.deployment,
    plugins: createPluginRegistry({
      builders: of('builder').map((d) => ({ ...d, impl: REMOTE_BUILDER })),
      writers: of('writer').map((d) => ({ ...d, impl: REMOTE_WRITER })),
    }),
    tables: JSON.parse(wire.tablesJson) as BlockxConfig['tables'],
    functions: wire.functionsKnown ? wire.functions : undefined,
  };
}

/** Asks the Coordinator for its Workers, then each Worker what it serves (concurrently). */
export async function clusterViews(
  coordinator: string,
  opts: { readonly tls?: TlsMaterial; readonly timeoutMs: number },
): Promise<ClusterViews> {
  const [{ BlockxClient }, { createWorkerAdminClient, unaryCall }] = await Promise.all([
    import('../client/client.js'),
    import('../grpc/clients.js'),
  ]);
  const client = new BlockxClient({
    coordinator,
    rpcTimeoutMs: opts.timeoutMs,
    ...(opts.tls ? { tls: opts.tls } : {}),
  });
  let workers: readonly string[];
  try {
    workers = (await client.clusterStatus()).workers.map((w) => w.workerAddr);
  } finally {
    client.close();
  }
  const answers = await Promise.all(
    workers.map(async (worker) => {
      const admin = createWorkerAdminClient(worker, {}, opts.tls);
      try {
        const wire = await unaryCall<DescribeServingResponse__Output>(
          (md, o, cb) => admin.describeServing({}, md, o, cb),
          { timeoutMs: opts.timeoutMs },
        );
        return servedView(worker, wire);
      } catch (err) {
        const e = err as { code?: number; message?: string };
        return e.code === 12
          ? `worker ${worker} does not say what it serves (an older BlockX): not checked against it`
          : `worker ${worker} did not say what it serves: ${e.message ?? String(err)}`;
      } finally {
        admin.close();
      }
    }),
  );
  return {
    views: answers.filter((a): a is ServedView => typeof a !== 'string'),
    unchecked: answers.filter((a): a is string => typeof a === 'string'),
  };
}

/**
 * The problems the cluster finds that the local check did not: each Worker's issues (from `check`,
 * task-check.ts against that Worker's view) at a path the local check found nothing at, those with the
 * same path and message merged, naming the Workers, with what to do.
 */
export function clusterIssues(
  local: readonly SchemaIssue[],
  views: readonly ServedView[],
  check: (view: ServedView) => SchemaIssue[],
): SchemaIssue[] {
  const key = (i: SchemaIssue) => `${i.path}\n${i.message}`;
  const known = new Set(local.map((i) => i.path));
  const found = new Map<string, { issue: SchemaIssue; workers: string[] }>();
  for (const view of views) {
    for (const issue of check(view)) {
      if (known.has(issue.path)) continue;
      const entry = found.get(key(issue)) ?? { issue, workers: [] };
      entry.workers.push(view.worker);
      found.set(key(issue), entry);
    }
  }
  return [...found.values()].map(({ issue, workers }) => ({
    ...issue,
    message:
      `${issue.message} (on the running cluster: ${workers.length === 1 ? 'worker' : 'workers'} ` +
      `${workers.join(', ')}, which differs from this project: give it what it lacks (config, plugin, ` +
      `function), then reload it with SIGHUP, or save the file of blockx up, or restart it)`,
  }));
}
