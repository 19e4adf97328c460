// Runs the executor as a child process and keeps it running.
//
// - start(): listen on the socket (ExecutorLink), spawn the executor with `--socket`.
// - Ready = the executor's first heartbeat (the link emits `executorReady`).
// - Lost = the process exited, or no heartbeat for `heartbeatTimeoutMs` (then it is SIGKILLed), or it
//   was not ready within `startTimeoutMs`. The link fails its in-flight attempts retryably and the
//   supervisor starts a new executor after a backoff (100 ms doubling to 5 s, see executor-backoff.ts).
// - Silence is judged by core/health/executor-liveness.ts: a watchdog tick that comes far too late
//   means the WORKER was stalled (SIGSTOP, GC, a blocked loop) and restarts the silence clock, and a
//   silent executor is only declared lost after one more event-loop turn (setImmediate), once the
//   heartbeats queued on its socket have been read. Before this, a Worker resumed after a 15 s SIGSTOP
//   killed its healthy Executor and re-ran every in-flight call (issue 14).
// - stop(): SIGTERM (SIGKILL after a grace), close the link, remove the socket file.
// - With `memoryMaxMb`, the executor runs in a cgroup of its own with that hard memory limit
//   (executor-cgroup.ts; docs/security.md § A memory ceiling per Executor): made at start(), joined by
//   each executor process right after its spawn, removed at stop().
// - Each spawn gets a fresh secret from the link (`issueSecret`), written to the child's fd 3 (a pipe,
//   `--secret-fd 3`) and the pipe closed: never in argv or the environment, which user functions can
//   read. The executor reads it before it loads any code and presents it in its Hello; the link serves
//   no connection without it (docs/security.md, "The executor socket").
//
// - With `pidNamespace` (executor.pidNamespace, as root), the executor runs as PID 1 of a PID namespace
//   of its own, so the child processes of its functions cannot kill or stop it (docs/security.md § An
//   Executor as PID 1 of its own PID namespace; the command is core/executor-pid-namespace.ts). The
//   spawned child is then util-linux `unshare`, which forks the executor and waits for it: the executor's
//   own pid (as this process sees it) is looked up right after, and is what `pid`, the logs and the
//   link's events name. Killing the child kills the executor (--kill-child) and with it its namespace;
//   unshare exits with the executor's code (its SIGKILL, as code 1: the OOM count tells the kernel's).
//   As init it ignores SIGTERM, so stop() closes its socket instead, which makes it stop in order. And as
//   init it inherits every process orphaned in its namespace: the JS executor (Node waits only for the
//   children it started) leaves those as zombies, which count against executor.maxProcesses, so at
//   `orphanLimit` of them it is drained and restarted, and its namespace goes with it (checkOrphans).
//
// No orphans: the child is SIGKILLed when this process exits, and the executor itself exits when its
// socket closes or its parent pid changes (executor-main.ts), which covers a SIGKILLed Worker too.

import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Writable } from 'node:stream';
import {
  EXECUTOR_SETTING_FLAGS,
  executorSettingArgs,
  type ExecutorSettings,
} from '../../../executor/executor-settings.js';
import { defaultExecutorConfig } from '../../../kernel/config-defaults.js';
import { packagePath } from '../../../kernel/package-root.js';
import {
  INITIAL_LIVENESS,
  judgeLiveness,
  recordIdleCheck,
  stallGapFor,
  type LivenessConfig,
  type LivenessState,
} from '../core/executor-liveness.js';
import type { UnixUser } from '../core/executor-identity.js';
import { pidNamespaceCommand, type PidNamespaceTools } from '../core/executor-pid-namespace.js';
import { RestartBackoff, type BackoffOptions } from './executor-backoff.js';
import { openExecutorCgroup, type ExecutorCgroup } from './executor-cgroup.js';
import { ExecutorLink, type ExecutorLinkEvent, type ExecutorLinkOptions } from './executor-link.js';
import { findTool, forkedChildOf, zombiesInNamespace } from './executor-pid-namespace.js';

/**
 * The settings not given (and `heartbeatTimeoutMs`, the restart backoff) are the config table's defaults
 * (`deployments.<name>.executor`, docs/configuration.md); the Worker passes its resolved config, tests
 * pass what they vary. Every setting goes on the executor's command line (executor-settings.ts).
 */
export interface ExecutorSupervisorOptions
  extends Omit<ExecutorLinkOptions, 'onEvent'>, Partial<ExecutorSettings> {
  readonly functionsDir: string;
  readonly onEvent?: (event: ExecutorLinkEvent) => void;
  /**
   * The executor command without its flags; the supervisor appends `--socket ... --secret-fd 3
   * --functions-dir ...` and every setting. Default: `[node, <package>/bin/blockx.js, 'executor']`. See `tsxExecutorCommand()`
   * for src/. A wrapper command must leave fd 3 open for the executor.
   */
  readonly command?: readonly string[];
  /** Missed heartbeats for this long → executor lost (`executor.heartbeatTimeoutMs`). */
  readonly heartbeatTimeoutMs?: number;
  /** From spawn to first heartbeat. Default START_TIMEOUT_MS. */
  readonly startTimeoutMs?: number;
  readonly backoff?: Partial<BackoffOptions>;
  readonly env?: NodeJS.ProcessEnv;
  /** Each line the executor writes to stderr (JSON log lines). Default: copied to our stderr. */
  readonly onLog?: (line: string) => void;
  /**
   * Run the executor as this user (`executor.user`, resolved by executor-user.ts): spawned with its
   * uid/gid and no supplementary groups, the socket handed to it. Default: this process's user.
   */
  readonly runAs?: UnixUser;
  /** With `runAs`: the executor's RLIMIT_NPROC (`executor.maxProcesses`), set through `prlimit`; 0 = none. */
  readonly maxProcesses?: number;
  /**
   * The executor's hard memory ceiling in MiB (`executor.memoryMaxMb`): a cgroup of its own with that
   * limit, where the host allows one (else one warning and no ceiling). 0 or absent: none.
   */
  readonly memoryMaxMb?: number;
  /** Which executor this is (js, python): names its cgroup. Default 'js'. */
  readonly label?: string;
  /**
   * Run the executor as PID 1 of a PID namespace of its own with these tools (`executor.pidNamespace`,
   * resolved by executor-pid-namespace.ts; needs root). Default: none.
   */
  readonly pidNamespace?: PidNamespaceTools;
}

/**
 * The command that starts the executor with its process limit: `prlimit --nproc=N:N -- cmd …` (util-linux;
 * lowering a limit needs no privilege, and the limit holds across the exec). Undefined when `prlimit`
 * is not installed (the caller warns once and starts it without).
 */
export function withProcessLimit(command: readonly string[], maxProcesses: number): string[] | undefined {
  const prlimit = findTool('prlimit');
  if (prlimit === undefined) return undefined;
  return [prlimit, `--nproc=${maxProcesses}:${maxProcesses}`, '--', ...command];
}

/** Command prefix that runs the executor from src/ under tsx (tests, development). */
export function tsxExecutorCommand(): string[] {
  return [process.execPath, '--import', 'tsx', packagePath('src', 'executor', 'cli-entry.ts')];
}

export function defaultExecutorCommand(): string[] {
  return [process.execPath, packagePath('bin', 'blockx.js'), 'executor'];
}

const KILL_GRACE_MS = 3_000;
/** How long a spawned executor may take to say its first heartbeat before it is counted lost. */
const START_TIMEOUT_MS = 30_000;
/** The child's file descriptor that carries the spawn secret (stdio[3], a pipe). */
const SECRET_FD = 3;
/** How long after the spawn the executor forked by `unshare` is looked for (it takes a few ms). */
const FIND_EXECUTOR_MS = 2_000;
/** Zombies in its namespace at which an executor is recycled, without `maxProcesses` (else a quarter of it). */
export const ORPHAN_LIMIT_UNBOUNDED = 1_024;
/** How long a recycled executor may take to finish its calls (the rest are retried elsewhere/later). */
export const ORPHAN_DRAIN_MS = 5_000;

/** Zombies in the namespace that make the executor restart: a quarter of its process limit (min 8). */
export function orphanLimit(maxProcesses: number): number {
  return maxProcesses > 0 ? Math.max(8, Math.floor(maxProcesses / 4)) : ORPHAN_LIMIT_UNBOUNDED;
}

export class ExecutorSupervisor {
  readonly link: ExecutorLink;
  private readonly opts: ExecutorSupervisorOptions;
  private readonly backoff: RestartBackoff;
  private readonly heartbeatTimeoutMs: number;
  private readonly settings: ExecutorSettings;
  private readonly liveness: LivenessConfig;
  private livenessState: LivenessState = INITIAL_LIVENESS;
  private confirmQueued = false;
  private child: ChildProcess | undefined;
  /** In a PID namespace: the executor's pid as this process sees it, once found (the child is unshare). */
  private executorPid: number | undefined;
  /** The executor asked to drain for the zombies it holds (checkOrphans), until it exits. */
  private recycling: ChildProcess | undefined;
  private spawnedAtMs = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  private stopping = false;
  private started = false;
  private readyWaiters: (() => void)[] = [];
  private readonly killOnExit = () => this.child?.kill('SIGKILL');
  /** The executor's cgroup (memoryMaxMb), once made. */
  private cgroup: ExecutorCgroup | undefined;
  /** Executors this supervisor SIGKILLed itself: their death is not the kernel's. */
  private readonly killedHere = new WeakSet<ChildProcess>();
  /** Executors started so far (1 after the first start). */
  starts = 0;

  constructor(options: ExecutorSupervisorOptions) {
    this.opts = options;
    const table = defaultExecutorConfig();
    this.backoff = new RestartBackoff({
      initialMs: table.restartBackoffInitialMs,
      maxMs: table.restartBackoffMaxMs,
      ...options.backoff,
    });
    this.heartbeatTimeoutMs = options.heartbeatTimeoutMs ?? table.heartbeatTimeoutMs;
    const given = Object.fromEntries(
      Object.keys(EXECUTOR_SETTING_FLAGS).flatMap((key) => {
        const value = options[key as keyof ExecutorSettings];
        return value === undefined ? [] : [[key, value]];
      }),
    );
    this.settings = { ...table, ...given };
    const checkIntervalMs = Math.min(500, Math.max(50, this.heartbeatTimeoutMs / 4));
    this.liveness = {
      heartbeatTimeoutMs: this.heartbeatTimeoutMs,
      startTimeoutMs: options.startTimeoutMs ?? START_TIMEOUT_MS,
      checkIntervalMs,
      stallGapMs: stallGapFor(checkIntervalMs, this.heartbeatTimeoutMs),
    };
    this.link = new ExecutorLink({
      ...options,
      ...(options.runAs ? { socketOwner: options.runAs } : {}),
      onEvent: (ev) => this.onLinkEvent(ev),
    });
  }

  get ready(): boolean {
    return this.link.ready;
  }

  /** The executor's pid (in a PID namespace, as this process sees it, not its own 1). */
  get pid(): number | undefined {
    return this.child === undefined ? undefined : (this.executorPid ?? this.child.pid);
  }

  /** Listen and spawn the first executor. Resolves once listening (see `whenReady`). */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await this.link.listen();
    process.once('exit', this.killOnExit);
    this.openCgroup();
    this.spawnExecutor();
    this.watchdog = setInterval(() => {
      this.checkLiveness('check');
      this.checkOrphans();
    }, this.liveness.checkIntervalMs);
    this.watchdog.unref();
  }

  /** Resolves when an executor is ready (immediately if one is). */
  whenReady(): Promise<void> {
    if (this.link.ready) return Promise.resolve();
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    if (this.watchdog) clearInterval(this.watchdog);
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      // As PID 1 of its namespace it ignores SIGTERM (unshare does too): its socket closing stops it.
      if (this.opts.pidNamespace) await this.link.close();
      else child.kill('SIGTERM');
      const timer = setTimeout(() => this.kill(child), KILL_GRACE_MS);
      await exited;
      clearTimeout(timer);
    }
    process.off('exit', this.killOnExit);
    this.cgroup?.remove();
    await this.link.close();
  }

  /** The executor's cgroup of `memoryMaxMb`, or one line saying why there is none (a warning as root). */
  private openCgroup(): void {
    const max = this.opts.memoryMaxMb ?? 0;
    if (max <= 0) return;
    const label = this.opts.label ?? 'js';
    const r = openExecutorCgroup(label, max);
    if (r.kind === 'ok') {
      this.cgroup = r.cgroup;
      this.opts.log?.(
        'info',
        `the ${label} executor's memory ceiling is ${max} MiB (cgroup v${r.cgroup.version} ${r.cgroup.dir})`,
      );
      return;
    }
    const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
    this.opts.log?.(
      asRoot ? 'warn' : 'info',
      `the ${label} executor runs without its memory ceiling (executor.memoryMaxMb ${max}): ${r.reason}; ` +
        'the executor.maxRssMb and threadMemoryMb checks still apply',
    );
  }

  /** Put the executor just spawned in its cgroup; the OOM kills counted so far, to tell its own later. */
  private joinCgroup(pid: number | undefined): number {
    const cgroup = this.cgroup;
    if (cgroup === undefined || pid === undefined) return 0;
    try {
      cgroup.add(pid);
    } catch (err) {
      this.opts.log?.(
        'warn',
        `executor ${pid} runs without its memory ceiling: cannot join ${cgroup.dir} (${(err as Error).message})`,
      );
    }
    return cgroup.oomKills();
  }

  private onLinkEvent(event: ExecutorLinkEvent): void {
    // The executor names itself by its pid inside its namespace (1): say the one this process sees.
    const ev =
      this.executorPid !== undefined && (event.type === 'executorReady' || event.type === 'executorLost')
        ? { ...event, pid: this.executorPid }
        : event;
    if (ev.type === 'executorReady') {
      this.backoff.ready(Date.now());
      for (const w of this.readyWaiters.splice(0)) w();
    }
    this.opts.onEvent?.(ev);
  }

  private spawnExecutor(): void {
    if (this.stopping) return;
    const o = this.opts;
    const [cmd, ...prefix] = o.command ?? defaultExecutorCommand();
    const secret = this.link.issueSecret();
    const args = [
      ...prefix,
      '--socket',
      this.link.socketPath,
      '--secret-fd',
      String(SECRET_FD),
      '--functions-dir',
      o.functionsDir,
      ...executorSettingArgs(this.settings),
    ];
    // Its own process group: a terminal's Ctrl-C reaches the Worker, which stops the Executor in order
    // (no "executor lost" mid-shutdown). It still cannot outlive the Worker: it exits when the socket
    // closes or its parent pid changes.
    let command = [cmd!, ...args];
    const limit = o.runAs !== undefined ? (o.maxProcesses ?? 0) : 0;
    if (limit > 0) {
      const limited = withProcessLimit(command, limit);
      if (limited !== undefined) command = limited;
      else if (this.starts === 0)
        this.opts.log?.('warn', 'prlimit is not installed: the executor runs without executor.maxProcesses');
    }
    const ns = o.pidNamespace;
    if (ns) command = pidNamespaceCommand({ command, node: process.execPath }, ns, o.runAs);
    const child = spawn(command[0]!, command.slice(1), {
      stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
      env: o.env ?? process.env,
      detached: true,
      // A user of its own (executor.user): libuv drops the supplementary groups with the uid change. In a
      // PID namespace unshare needs root, and setpriv drops to the user inside it.
      ...(o.runAs && !ns ? { uid: o.runAs.uid, gid: o.runAs.gid } : {}),
    });
    const secretPipe = child.stdio[SECRET_FD] as Writable | null | undefined;
    if (secretPipe) {
      // EPIPE if the child died before reading: its exit is handled below.
      secretPipe.on('error', () => undefined);
      secretPipe.end(`${secret}\n`);
    }
    // In a namespace this is unshare: the executor it forks from now on is in the cgroup too, and if it
    // forked already, findExecutor moves it.
    const oomKillsAtSpawn = this.joinCgroup(child.pid);
    this.child = child;
    this.executorPid = undefined;
    if (ns) this.findExecutor(child);
    this.spawnedAtMs = Date.now();
    this.starts++;
    const onLog = o.onLog ?? ((line: string) => void process.stderr.write(`${line}\n`));
    if (child.stderr) createInterface({ input: child.stderr }).on('line', onLog);
    const gone = (why: string) => {
      if (this.child !== child) return;
      this.child = undefined;
      // The socket usually closes first; if not, this is where the link learns of the loss.
      this.link.dropConnection(why);
      this.scheduleRestart();
    };
    child.once('error', (err) => {
      onLog(
        JSON.stringify({
          level: 'error',
          time: Date.now(),
          component: 'executor-supervisor',
          msg: `executor process error: ${err.message}`,
        }),
      );
      // A spawn failure (ENOENT, EACCES) emits no 'exit': count it as gone here.
      if (child.pid === undefined) gone(`cannot start the executor: ${err.message}`);
    });
    child.once('exit', (code, signal) => {
      const pid = this.child === child ? this.pid : child.pid;
      const cgroup = this.cgroup;
      // In a namespace the child is unshare, which exits with its executor's code, but reports its
      // executor's SIGKILL as code 1 (util-linux 2.38: "sigprocmask unblock failed", measured): there the
      // cgroup's OOM count alone tells the kernel's kill (an OOM kill of a function's child process that
      // left the executor running, followed by another exit, would be counted too).
      const oom =
        cgroup !== undefined &&
        !this.killedHere.has(child) &&
        (signal === 'SIGKILL' || ns !== undefined) &&
        cgroup.oomKills() > oomKillsAtSpawn;
      let why = `executor process ${pid} exited (${oom ? 'SIGKILL' : (signal ?? `code ${code}`)})`;
      if (oom) {
        why += `: the kernel ended it at its memory ceiling (executor.memoryMaxMb ${cgroup.memoryMaxMb} MiB, ${cgroup.dir})`;
        this.opts.log?.('error', why);
      }
      gone(why);
    });
  }

  /**
   * The zombies the executor holds as init of its namespace (see the header): at the limit it is asked to
   * drain and stop (ORPHAN_DRAIN_MS), which ends them with its namespace; its exit starts a new one.
   */
  private checkOrphans(): void {
    const child = this.child;
    const pid = this.executorPid;
    if (child === undefined || pid === undefined || this.recycling === child || this.stopping) return;
    const limit = orphanLimit(this.opts.runAs !== undefined ? (this.opts.maxProcesses ?? 0) : 0);
    const zombies = zombiesInNamespace(pid);
    if (zombies < limit) return;
    this.recycling = child;
    const why = `it holds ${zombies} exited processes its functions' children left behind (zombies: as PID 1 of its namespace it does not wait for them; limit ${limit})`;
    this.opts.log?.('warn', `executor ${pid} restarts: ${why}`);
    this.link.shutdownExecutor(`restart: ${why}`, ORPHAN_DRAIN_MS);
  }

  /** The executor unshare forks, as PID 1 of its namespace: its pid here, and into the cgroup with it. */
  private findExecutor(child: ChildProcess): void {
    const deadline = Date.now() + FIND_EXECUTOR_MS;
    const look = (): void => {
      if (
        this.child !== child ||
        child.pid === undefined ||
        child.exitCode !== null ||
        child.signalCode !== null
      )
        return;
      const pid = forkedChildOf(child.pid);
      if (pid !== undefined) {
        this.executorPid = pid;
        this.joinCgroup(pid);
        return;
      }
      if (Date.now() < deadline) setTimeout(look, 2).unref();
      else
        this.opts.log?.(
          'warn',
          `cannot find the executor unshare ${child.pid} started; its logs name unshare`,
        );
    };
    look();
  }

  private kill(child: ChildProcess): void {
    this.killedHere.add(child);
    child.kill('SIGKILL');
  }

  private scheduleRestart(): void {
    if (this.stopping || this.restartTimer) return;
    const delay = this.backoff.nextDelay(Date.now());
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      this.spawnExecutor();
    }, delay);
  }

  /**
   * Heartbeat watchdog: a silent or never-ready executor is killed; its exit triggers the restart. A
   * `suspect` verdict is confirmed one event-loop turn later, after the poll phase has read the socket.
   */
  private checkLiveness(phase: 'check' | 'confirm'): void {
    const child = this.child;
    if (this.stopping) return;
    if (!child) {
      // Restart backoff: keep the tick history, or the next Executor's first check reads it as a stall.
      if (phase === 'check') this.livenessState = recordIdleCheck(this.livenessState, Date.now());
      return;
    }
    const step = judgeLiveness(
      this.livenessState,
      {
        now: Date.now(),
        phase,
        ready: this.link.ready,
        lastHeartbeatAtMs: this.link.lastHeartbeatAtMs,
        spawnedAtMs: this.spawnedAtMs,
      },
      this.liveness,
    );
    this.livenessState = step.state;
    const verdict = step.verdict;
    switch (verdict.kind) {
      case 'alive':
        return;
      case 'worker-stalled':
        this.opts.log?.(
          'warn',
          `the worker's event loop did not run for ${verdict.stalledMs} ms (paused or blocked); ` +
            `restarting the executor heartbeat clock instead of blaming executor ${this.pid}`,
        );
        return;
      case 'suspect':
        if (this.confirmQueued) return;
        this.confirmQueued = true;
        setImmediate(() => {
          this.confirmQueued = false;
          this.checkLiveness('confirm');
        });
        return;
      case 'lost': {
        const why =
          verdict.cause === 'heartbeat'
            ? `no heartbeat for ${verdict.silentMs} ms`
            : `not ready ${verdict.silentMs} ms after start`;
        this.opts.log?.('warn', `executor ${this.pid} ${why}; killing it`);
        this.link.dropConnection(why);
        this.kill(child);
        return;
      }
      default: {
        const unreachable: never = verdict;
        throw new Error(`unknown liveness verdict ${JSON.stringify(unreachable)}`);
      }
    }
  }
}
