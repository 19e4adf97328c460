// The Workers of `blockx up` as child processes (README.md beside; docs/architecture.md § blockx up):
// one forked child per Worker, each running child-main.ts, supervised from here.
//
//   start     every child is forked at once and sent its `start`; this resolves when all are ready
//             (their addresses in index order) and rejects, stopping the others, if one fails first
//   serve     a child's registry messages go to its own session of the parent's in-process registry
//             (IpcRegistrySession); its functions-store requests to the parent's store; the parent's
//             metrics endpoint reads its registries at each scrape (ChildRegistry)
//   exit      a child that exits while the cluster runs ends its registry session (its keys go, as a
//             lease's would), is logged with its exit code or signal, and is forked again after a
//             backoff (RestartBackoff: WORKER_RESTART_BACKOFF) on the address it had bound, so the
//             address `blockx up` printed stays right
//   SIGHUP    forwarded to every child: a Worker reads its config and plugins again as `blockx worker` does
//   close     `stop` to every child, then SIGKILL for whichever has not exited after STOP_GRACE_MS;
//             resolves once every child has exited
import { fork, type ChildProcess } from 'node:child_process';
import { Registry } from 'prom-client';
import type { Logger as PinoLogger } from 'pino';
import { RestartBackoff, type BackoffOptions } from '../../services/call-host/index.js';
import type { ClusterCodeSource } from '../../services/worker/adapters/code-view/cluster-code-view.js';
import type { InProcessRegistry } from '../../services/registry/in-process-registry.js';
import { IpcRegistrySession, isRegistryIpcMessage } from '../../services/registry/ipc-registry.js';
import type { ProcessMetrics } from '../process-metrics.js';
import {
  answer,
  PendingRequests,
  type ChildMessage,
  type IpcRequest,
  type ParentMessage,
  type WorkerChildStart,
} from './protocol.js';

/** The wait before forking a Worker child again: 500 ms, doubling per exit in a row, at most 10 s. */
export const WORKER_RESTART_BACKOFF: BackoffOptions = Object.freeze({ initialMs: 500, maxMs: 10_000 });
/** From fork to `ready`: the kernel's boot, the storage, the Worker and up to 30 s for its Executor. */
export const WORKER_START_TIMEOUT_MS = 120_000;
/** After `stop`, how long a child has to exit before it is SIGKILLed. */
export const STOP_GRACE_MS = 10_000;
/** How long a scrape waits for a child's samples; a child that does not answer is left out of it. */
export const METRICS_REQUEST_TIMEOUT_MS = 2_000;

export interface WorkerProcessesOptions {
  /** The `start` of each child but its index and address. */
  readonly start: Omit<WorkerChildStart, 'kind' | 'index' | 'listen'>;
  /** Each Worker's bind address (its index is the position). */
  readonly listen: readonly string[];
  /** The registry the children publish into, when `start.registryFromParent`. */
  readonly registry?: InProcessRegistry;
  /** The store the children read deployed functions from, when `start.functionsFromParent`. */
  readonly functionsStore?: ClusterCodeSource;
  /** The parent's endpoint: each child's samples are served by it. */
  readonly metrics: ProcessMetrics;
  readonly logger: PinoLogger;
  /** Forks a child (tests give another module); default: child-main beside this file. */
  readonly forkChild?: () => ChildProcess;
}

export interface RunningWorkerProcesses {
  /** The advertised address of each Worker, in index order. */
  readonly addresses: readonly string[];
  /** The pid of each Worker's current child (undefined while it is down). */
  pids(): readonly (number | undefined)[];
  /** Stops every child; resolves when all have exited. Idempotent. */
  close(): Promise<void>;
}

export async function startWorkerProcesses(opts: WorkerProcessesOptions): Promise<RunningWorkerProcesses> {
  const children = opts.listen.map((listen, index) => new WorkerChild(index, listen, opts));
  const started = await Promise.allSettled(children.map((c) => c.start()));
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed !== undefined) {
    await Promise.all(children.map((c) => c.close()));
    throw failed.reason;
  }
  // SIGHUP to `blockx up` reads the config and the plugins again (docs/configuration.md § Changing the
  // config of a running process): its Workers, which run the plugins, get it too.
  const forwardHangup = (): void => {
    for (const c of children) c.signal('SIGHUP');
  };
  process.on('SIGHUP', forwardHangup);
  let closing: Promise<void> | undefined;
  return {
    addresses: started.map((s) => (s as PromiseFulfilledResult<string>).value),
    pids: () => children.map((c) => c.pid),
    close: () =>
      (closing ??= (async () => {
        process.off('SIGHUP', forwardHangup);
        await Promise.all(children.map((c) => c.close()));
      })()),
  };
}

/** The parent's side of one Worker: its current child process, restarted while the cluster runs. */
class WorkerChild {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private stopping = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private readonly backoff = new RestartBackoff(WORKER_RESTART_BACKOFF);
  private readonly log: PinoLogger;
  /** The requests sent to the current child (metrics); failed when it exits. */
  private requests = new PendingRequests();

  constructor(
    readonly index: number,
    private listen: string,
    private readonly opts: WorkerProcessesOptions,
  ) {
    this.log = opts.logger.child({ service: 'worker', worker: index });
    opts.metrics.serve(new ChildRegistry(() => this.requestMetrics()));
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Sends a signal to the current child, if one runs. */
  signal(signal: NodeJS.Signals): void {
    try {
      this.child?.kill(signal);
    } catch {
      // Gone meanwhile: its exit is handled on its own.
    }
  }

  /** Forks the child and resolves with its advertised address once it is ready. */
  start(): Promise<string> {
    const child = this.opts.forkChild ? this.opts.forkChild() : forkWorkerChild();
    this.child = child;
    this.requests = new PendingRequests();
    const session =
      this.opts.start.registryFromParent && this.opts.registry
        ? new IpcRegistrySession(this.opts.registry.writer())
        : undefined;
    const send = (message: ParentMessage): void => {
      if (!child.connected) throw new Error(`worker #${this.index}'s process is gone`);
      child.send(message);
    };
    let settle: { ready(address: string): void; fail(err: Error): void } | undefined;
    const ready = new Promise<string>((resolve, reject) => {
      settle = { ready: resolve, fail: reject };
    });
    const timer = setTimeout(() => {
      settle?.fail(new Error(`worker #${this.index} was not ready within ${WORKER_START_TIMEOUT_MS} ms`));
      child.kill('SIGKILL');
    }, WORKER_START_TIMEOUT_MS);
    const settleOnce = (run: (s: NonNullable<typeof settle>) => void): void => {
      clearTimeout(timer);
      if (settle !== undefined) run(settle);
      settle = undefined;
    };
    child.on('message', (message: ChildMessage) => {
      if (isRegistryIpcMessage(message)) {
        session
          ?.apply(message)
          .catch((err: unknown) => this.log.error({ err }, 'registry update of a worker child failed'));
        return;
      }
      switch (message.kind) {
        case 'ready':
          // A restart binds the address the first child had: what `blockx up` printed stays right.
          this.listen = message.boundAddress;
          this.backoff.ready(Date.now());
          settleOnce((s) => s.ready(message.address));
          return;
        case 'failed':
          settleOnce((s) => s.fail(new Error(`worker #${this.index}: ${message.error}`)));
          return;
        case 'request':
          void answer(message, (r) => this.serveRequest(r), send);
          return;
        case 'reply':
          this.requests.settleReply(message);
          return;
        default: {
          const unknown: never = message;
          this.log.warn({ message: unknown }, 'unknown message from a worker child');
        }
      }
    });
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        void session?.end();
        this.requests.failAll(`worker #${this.index}'s process exited`);
        if (this.child === child) this.child = undefined;
        settleOnce((s) =>
          s.fail(
            new Error(
              `worker #${this.index}'s process exited (${exitStatus(code, signal)}) before it served`,
            ),
          ),
        );
        resolve();
        this.exitedUnexpectedly(child.pid, code, signal);
      }),
    );
    child.on('error', (err) => this.log.error({ err }, 'worker child process error'));
    send({ kind: 'start', ...this.opts.start, index: this.index, listen: this.listen });
    return ready;
  }

  /** Logs an exit nobody asked for and forks the Worker again after the backoff. */
  private exitedUnexpectedly(
    pid: number | undefined,
    code: number | null,
    signal: NodeJS.Signals | null,
  ): void {
    if (this.stopping) return;
    const delayMs = this.backoff.nextDelay(Date.now());
    this.log.error(
      { pid, exitCode: code, signal, restartInMs: delayMs },
      `worker #${this.index}'s process exited (${exitStatus(code, signal)}); starting it again`,
    );
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.stopping) return;
      this.start().then(
        (address) => this.log.warn({ address, pid: this.pid }, `worker #${this.index} serving again`),
        (err: unknown) => this.log.error({ err }, `worker #${this.index} did not start again`),
      );
    }, delayMs);
  }

  private async serveRequest(request: IpcRequest): Promise<unknown> {
    const store = this.opts.functionsStore;
    if (store === undefined) throw new Error(`blockx up holds no functions store (asked: ${request.what})`);
    switch (request.what) {
      case 'functions.current':
        return store.current();
      case 'functions.fetch':
        return store.fetch(request.arg as { version: string; digest?: string });
      case 'metrics':
        throw new Error('blockx up answers no metrics request');
      default: {
        const unknown: never = request.what;
        throw new Error(`unknown request ${String(unknown)}`);
      }
    }
  }

  /** The child's samples; none while it is down or when it does not answer in time. */
  private async requestMetrics(): Promise<unknown[]> {
    const child = this.child;
    if (child === undefined || !child.connected) return [];
    try {
      const send = (message: ParentMessage): void => void child.send(message);
      return (await this.requests.request(
        send,
        'metrics',
        undefined,
        METRICS_REQUEST_TIMEOUT_MS,
      )) as unknown[];
    } catch (err) {
      this.log.warn({ err }, 'no metrics from a worker child for this scrape');
      return [];
    }
  }

  async close(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    const child = this.child;
    if (child === undefined) return;
    const kill = setTimeout(() => {
      this.log.warn(
        { pid: child.pid },
        `worker #${this.index} did not stop within ${STOP_GRACE_MS} ms: killed`,
      );
      child.kill('SIGKILL');
    }, STOP_GRACE_MS);
    try {
      if (child.connected) child.send({ kind: 'stop' } satisfies ParentMessage);
      else child.kill('SIGTERM');
    } catch {
      child.kill('SIGTERM');
    }
    await this.exited;
    clearTimeout(kill);
  }
}

/** A Registry whose samples come from a child process at each scrape (metrics-server.ts merges them). */
class ChildRegistry extends Registry {
  constructor(private readonly read: () => Promise<unknown[]>) {
    super();
  }

  override async getMetricsAsJSON(): Promise<Awaited<ReturnType<Registry['getMetricsAsJSON']>>> {
    // The child's own registries' JSON, default labels applied (child-main.ts).
    return (await this.read()) as Awaited<ReturnType<Registry['getMetricsAsJSON']>>;
  }
}

function exitStatus(code: number | null, signal: NodeJS.Signals | null): string {
  return signal === null ? `exit code ${code}` : `signal ${signal}`;
}

/** Forks child-main: the built .js beside this file, or the TypeScript source under tsx (tests). */
function forkWorkerChild(): ChildProcess {
  const fromSource = import.meta.url.endsWith('.ts');
  const entry = new URL(fromSource ? './child-main.ts' : './child-main.js', import.meta.url);
  const execArgv =
    fromSource && !process.execArgv.includes('tsx')
      ? [...process.execArgv, '--import', 'tsx']
      : process.execArgv;
  return fork(entry, [], {
    execArgv,
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}
