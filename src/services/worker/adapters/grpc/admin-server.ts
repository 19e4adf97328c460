// WorkerAdminService (proto/blockx/worker/v1/worker_admin.proto): the Worker's recent tasks for the
// Coordinator's dashboard feed (docs/dashboard-data.md), and what it serves now (plugins with their
// config schemas, declared tables) for `blockx validate --coordinator`. Read-only, registered beside
// WorkerService on the same server (same port, same TLS).
//
// The ring itself is the pure core/recent-tasks.ts; `RecentTasksRecorder` feeds it from the
// orchestrator's listener hooks (a task admitted, a task terminal), with the orchestrator's clock.
// `workerInstance` is a random id of this process: the feed compares it between polls to tell a
// restarted Worker (counters and sequence back at 0) from a quiet one.

import * as grpc from '@grpc/grpc-js';
import type { WorkerAdminServiceHandlers } from '../../../../grpc/proto.js';
import type { ListRecentTasksResponse } from '../../../../generated/proto/blockx/worker/v1/ListRecentTasksResponse.js';
import type { DescribeServingResponse__Output } from '../../../../generated/proto/blockx/worker/v1/DescribeServingResponse.js';
import type { BlockxConfig } from '../../../../kernel/config-types.js';
import type { PluginRegistry } from '../../../../kernel/plugin-registry.js';
import { TaskState, type TaskResult, type TerminalTaskState } from '../../core/index.js';
import { RecentTasks, type RecentTasksPage } from '../../core/recent-tasks.js';
import type { AdmittedTask, OrchestratorListener } from '../orchestration/orchestrator.js';
import { describeError } from '../../../../kernel/errors.js';
import type { ServiceLogger } from '../../../../kernel/observability/service-logger.js';
import { peerCertificate } from '../../../../grpc/authorization.js';
import { callerIdentity, type IdentifiedCall } from '../../../../grpc/peer-identity.js';
import { cachedRolesOf, seesEveryClient } from '../../../../kernel/roles.js';

/** Keeps a RecentTasks ring up to date from the orchestrator's hooks. */
export class RecentTasksRecorder implements OrchestratorListener {
  readonly tasks: RecentTasks;

  constructor(
    private readonly now: () => number,
    tasks: RecentTasks = new RecentTasks(),
  ) {
    this.tasks = tasks;
  }

  onTaskAdmitted(task: AdmittedTask): void {
    this.tasks.admitted({
      taskId: task.taskId,
      builder: task.builder,
      now: task.acceptedAtMs,
      ...(task.client === undefined ? {} : { client: task.client }),
    });
  }

  onTerminal(taskId: string, state: TerminalTaskState, result: TaskResult): void {
    const ex = result.executeResult;
    this.tasks.ended({
      taskId,
      succeeded: state === TaskState.SUCCEEDED,
      failureCode: ex.failureCode,
      failureMessage: ex.failureMessage,
      codeVersion: result.codeVersion ?? '',
      now: this.now(),
    });
  }
}

export interface WorkerAdminDeps {
  readonly recent: Pick<RecentTasks, 'list'>;
  /** This process's random id (a restart is a new one). */
  readonly workerInstance: string;
  readonly now: () => number;
  readonly logger: ServiceLogger;
  /** What a submitted task is checked against now (the admission's plugins and served tables). */
  readonly serving: () => Promise<ServingDescription>;
}

export interface ServingDescription {
  readonly deployment: string;
  readonly plugins: Pick<PluginRegistry, 'builders' | 'writers'>;
  readonly tables: BlockxConfig['tables'];
  /** The function names of the current code; undefined when the code source cannot say. */
  readonly functions: readonly string[] | undefined;
}

/** The wire form of what the Worker serves: plugins sorted by type, schemas and tables as JSON text. */
export function servingToWire(serving: ServingDescription): DescribeServingResponse__Output {
  const plugins = [...serving.plugins.builders.list(), ...serving.plugins.writers.list()]
    .map((p) => ({ type: p.type, kind: p.kind, schemaJson: JSON.stringify(p.schema) }))
    .sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
  return {
    deployment: serving.deployment,
    plugins,
    tablesJson: JSON.stringify(serving.tables),
    functions: [...(serving.functions ?? [])],
    functionsKnown: serving.functions !== undefined,
  };
}

/**
 * The wire form of one page. Each record's submitter goes out only with `withClients` (a caller that
 * may see every client's tasks: it filters them by submitter, the dashboard's feed does).
 */
export function recentTasksPageToWire(
  page: RecentTasksPage,
  workerInstance: string,
  nowMs: number,
  withClients = false,
): ListRecentTasksResponse {
  return {
    tasks: page.tasks.map(({ client, ...t }) => (withClients ? { ...t, client: client ?? '' } : t)),
    lastSeq: page.lastSeq,
    succeededTotal: page.succeededTotal,
    failedTotal: page.failedTotal,
    workerInstance,
    nowMs,
    truncated: page.truncated,
  };
}

export function workerAdminServiceHandlers(deps: WorkerAdminDeps): WorkerAdminServiceHandlers {
  return {
    ListRecentTasks(call, callback) {
      const { afterSeq, limit } = call.request;
      if (!Number.isSafeInteger(afterSeq) || afterSeq < 0) {
        callback({
          code: grpc.status.INVALID_ARGUMENT,
          details: `after_seq must be a non-negative integer, got ${afterSeq}`,
        });
        return;
      }
      let response: ListRecentTasksResponse;
      try {
        const page = deps.recent.list(afterSeq, limit);
        const own = ownTasksOnly(call);
        response = recentTasksPageToWire(
          own === undefined ? page : { ...page, tasks: page.tasks.filter((t) => t.client === own) },
          deps.workerInstance,
          deps.now(),
          own === undefined,
        );
      } catch (err) {
        deps.logger.error({ rpc: 'ListRecentTasks', err: describeError(err) }, 'ListRecentTasks failed');
        callback({ code: grpc.status.INTERNAL, details: 'ListRecentTasks failed' });
        return;
      }
      callback(null, response);
    },
    DescribeServing(_call, callback) {
      deps.serving().then(
        (serving) => callback(null, servingToWire(serving)),
        (err: unknown) => {
          deps.logger.error({ rpc: 'DescribeServing', err: describeError(err) }, 'DescribeServing failed');
          callback({ code: grpc.status.INTERNAL, details: 'DescribeServing failed' });
        },
      );
    },
  };
}

/**
 * The identity whose tasks alone `call` may list, or undefined when it may list all: with TLS, a
 * caller without a viewing role of its own (a submitter, a deployer) sees only the tasks it submitted;
 * on plaintext there is no one to tell apart.
 */
function ownTasksOnly(call: IdentifiedCall): string | undefined {
  const cert = peerCertificate(call);
  if (cert === undefined || seesEveryClient(cachedRolesOf(cert))) return undefined;
  return callerIdentity(call);
}
