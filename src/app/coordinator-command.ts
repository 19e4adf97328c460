// `blockx coordinator --deployment <name>` (docs/architecture.md § CLI): boots the kernel (the config
// with the COORDINATOR_* env overrides applied to that deployment, and the plugins, so their
// serviceAssembled / shutdown hooks fire here as under `blockx up` and `blockx worker`), runs the
// Coordinator through the service lifecycle (lifecycle.ts) with the process's Prometheus endpoint and,
// when `observability.dashboard.listenAddr` is set, its web dashboard (docs/dashboard.md), stops
// gracefully on SIGINT/SIGTERM, exits 0 (1 when a teardown step failed). A config problem throws
// ConfigError, which the CLI reports with exit code 2. COORDINATOR_CPU_PROFILE / COORDINATOR_TRACE
// profile the whole command (docs/performance.md § Profiling).
import { bootKernel } from '../kernel/kernel.js';
import { withProfiling } from '../kernel/observability/profiling.js';
import { createDashboardFeed } from '../services/coordinator/adapters/dashboard-feed.js';
import { createCoordinatorLogger, runCoordinator } from '../services/coordinator/app/run-coordinator.js';
import { withFollowJobs } from '../services/dashboard/app/follow-jobs-feed.js';
import { checkDashboardAddress, serveDashboard } from '../services/dashboard/app/serve-dashboard.js';
import { openJobStatusReader } from '../services/follow/adapters/etcd-job-status.js';
import { startServices } from './lifecycle.js';
import { startProcessMetrics } from './process-metrics.js';
import { planCoordinator } from './service-plans.js';
import { onTermination } from './signals.js';

/** The slice of the CLI's io (src/cli/io.ts CliIo) this command uses. */
export interface CoordinatorCommandIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: NodeJS.ProcessEnv;
  cwd(): string;
}

export interface CoordinatorCommandOptions {
  /** `--config FILE`. */
  readonly config?: string;
  /** `--deployment NAME`: a deployment declared in the config (block or bundle kind). */
  readonly deployment: string;
}

/**
 * Runs until `until` settles (default: the first SIGINT or SIGTERM), then shuts down. Resolves with the
 * exit code.
 */
export function coordinatorCommand(
  opts: CoordinatorCommandOptions,
  io: CoordinatorCommandIo,
  until?: Promise<unknown>,
): Promise<number> {
  return withProfiling('coordinator', 'blockx coordinator', io, () => serveCoordinator(opts, io, until));
}

async function serveCoordinator(
  opts: CoordinatorCommandOptions,
  io: CoordinatorCommandIo,
  until: Promise<unknown> | undefined,
): Promise<number> {
  const { deployment } = opts;
  if (!deployment) {
    io.stderr('blockx coordinator: --deployment <name> is required (block | bundle)\n');
    return 2;
  }
  const kernel = await bootKernel({
    ...(opts.config === undefined ? {} : { configPath: opts.config }),
    env: io.env,
    cwd: io.cwd(),
    deployments: [deployment],
  });
  const { config } = kernel;
  // A dashboard address that would be refused is refused before the Coordinator starts.
  checkDashboardAddress(config, config.observability.dashboard.listenAddr);
  const logger = createCoordinatorLogger(config, deployment);
  // Signals are listened for once the services are being assembled (the plugins' serviceAssembled taps
  // may announce readiness), and never left installed by a config error.
  let signalled: (signal: string) => void = () => undefined;
  const signal = new Promise<string>((resolve) => (signalled = resolve));
  const off = until === undefined ? onTermination((s) => signalled(s)) : () => undefined;
  let running;
  try {
    running = await startServices({
      kernel,
      plan: planCoordinator(config, deployment),
      logger,
      assemble: async (stack) => {
        const metrics = await startProcessMetrics(config, stack, logger);
        const coordinator = stack.adopt(
          'coordinator',
          await runCoordinator({
            config,
            deployment,
            logger,
            metrics: { registry: metrics.registryFor({ service: 'coordinator', deployment }) },
          }),
        );
        const { dashboard } = config.observability;
        if (dashboard.listenAddr !== '') {
          const dashboardLog = logger.child({ component: 'dashboard' });
          const cluster = createDashboardFeed({
            ...coordinator.dashboardFeedInputs,
            intervalMs: dashboard.intervalMs,
            logger: dashboardLog,
          });
          // Follow jobs as their runners publish them to etcd (docs/dashboard.md § Follow jobs).
          const jobs = await openJobStatusReader(config);
          if (jobs !== undefined) stack.adopt('follow job statuses', jobs);
          stack.adopt(
            'dashboard',
            await serveDashboard({
              config,
              listenAddr: dashboard.listenAddr,
              feed:
                jobs === undefined
                  ? cluster
                  : withFollowJobs({
                      feed: cluster,
                      read: () => jobs.read(),
                      intervalMs: dashboard.intervalMs,
                      logger: dashboardLog,
                    }),
              logger: dashboardLog,
            }),
          );
        }
        return coordinator;
      },
    });
  } catch (err) {
    off();
    throw err;
  }
  const reason = String(await (until ?? signal));
  off();
  logger.info({ signal: reason }, 'shutting down');
  const failures = await running.stop(reason);
  return failures.length > 0 ? 1 : 0;
}
