// Whole-lifetime profiling of a BlockX process (docs/performance.md § Profiling). A process whose
// variable is set records, through the in-process inspector (node:inspector, no --inspect port):
//
//   <ROLE>_CPU_PROFILE=FILE   a CPU profile (Profiler domain; V8's sampling profiler on the main thread),
//                             written as a `.cpuprofile` (the JSON Chrome DevTools' Performance panel loads);
//   <ROLE>_TRACE=FILE         trace events (NodeTracing domain; TRACE_CATEGORIES below), written as Chrome
//                             trace-event JSON `{"traceEvents": [...]}` (Perfetto, chrome://tracing).
//
// ROLE is COORDINATOR, WORKER or EXECUTOR (PROFILING_VARIABLES). Recording starts when the command starts
// and the file is written when it stops cleanly (SIGTERM / SIGINT, or the executor's socket closing); a
// crash or SIGKILL writes nothing. `%p` in FILE is replaced by the process id; an Executor's file always
// carries it (a Worker restarts its Executor, and `blockx up` runs one per Worker): a FILE without `%p`
// gets `.<pid>` before its extension (`exec.cpuprofile` → `exec.4242.cpuprofile`). An Executor that is
// PID 1 of a PID namespace of its own (docs/executor.md § Roles) is pid 1 like every other one, so its
// pid becomes `1-<8 random hex digits>`: before that, the two Executors of `blockx up` wrote one file.
//
// The path is checked at start by opening it for writing (an empty file stays there until the real one
// replaces it): a path that cannot be written is a ProfilingError naming the variable, which the entry
// points turn into one line on stderr and exit code 2, before any service starts.
import { randomBytes } from 'node:crypto';
import { openSync, closeSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import path from 'node:path';
import { ObservabilityErrorCode, ProfilingError } from './errors.js';

export type ProfiledRole = 'coordinator' | 'worker' | 'executor';

/** The variables of each role: a CPU profile and a trace, each to its own file. */
export const PROFILING_VARIABLES: Readonly<
  Record<ProfiledRole, { readonly cpuProfile: string; readonly trace: string }>
> = Object.freeze({
  coordinator: { cpuProfile: 'COORDINATOR_CPU_PROFILE', trace: 'COORDINATOR_TRACE' },
  worker: { cpuProfile: 'WORKER_CPU_PROFILE', trace: 'WORKER_TRACE' },
  executor: { cpuProfile: 'EXECUTOR_CPU_PROFILE', trace: 'EXECUTOR_TRACE' },
});

/**
 * What a trace records: V8 (GC, compilation, deoptimisation), performance marks and measures (user
 * timing included), the process's environment milestones and synchronous file system calls. Not
 * `node` as a whole: it adds an event per promise and per async callback, gigabytes for a busy service.
 */
export const TRACE_CATEGORIES: readonly string[] = Object.freeze([
  'v8',
  'node.perf',
  'node.environment',
  'node.fs.sync',
]);

/**
 * How an Executor's files name it: its pid, made unique when it is PID 1 of a namespace of its own
 * (every such Executor is pid 1). `random` gives the suffix (injected for tests).
 */
export function executorFileId(
  pid: number,
  random: () => string = () => randomBytes(4).toString('hex'),
): string {
  return pid === 1 ? `1-${random()}` : String(pid);
}

/** The file a variable names for process `pid` (see the header for `%p` and the Executor's pid). */
export function profileFileFor(role: ProfiledRole, value: string, pid: number | string): string {
  if (value.includes('%p')) return value.replaceAll('%p', String(pid));
  if (role !== 'executor') return value;
  const ext = path.extname(value);
  return `${value.slice(0, value.length - ext.length)}.${pid}${ext}`;
}

export interface ProcessProfiling {
  /** The files being recorded (empty when no variable is set). */
  readonly files: readonly string[];
  /** Stops recording and writes the files; resolves with one message per file it could not write. */
  stop(): Promise<string[]>;
}

/** Claims `file` for writing now, so a bad path fails at start, not after hours of recording. */
function claim(variable: string, file: string): void {
  try {
    closeSync(openSync(file, 'w'));
  } catch (err) {
    throw new ProfilingError(
      ObservabilityErrorCode.PROFILE_FILE_UNWRITABLE,
      variable,
      file,
      `${variable}=${file}: cannot write the file (${(err as Error).message})`,
      { cause: err },
    );
  }
}

function post<T>(session: Session, method: string, params?: object): Promise<T> {
  return new Promise((resolve, reject) =>
    session.post(method, params, (err: Error | null, result?: object) =>
      err ? reject(err) : resolve(result as T),
    ),
  );
}

/**
 * Starts what the role's variables in `env` ask for. Throws ProfilingError (nothing left running) when
 * a file cannot be written.
 */
export async function startProfiling(
  role: ProfiledRole,
  env: NodeJS.ProcessEnv,
  pid: number = process.pid,
): Promise<ProcessProfiling> {
  const vars = PROFILING_VARIABLES[role];
  const id = role === 'executor' ? executorFileId(pid) : pid;
  const profileVar = env[vars.cpuProfile];
  const traceVar = env[vars.trace];
  const profileFile = profileVar ? profileFileFor(role, profileVar, id) : undefined;
  const traceFile = traceVar ? profileFileFor(role, traceVar, id) : undefined;
  if (profileFile === undefined && traceFile === undefined) return { files: [], stop: async () => [] };
  if (profileFile !== undefined) claim(vars.cpuProfile, profileFile);
  if (traceFile !== undefined) claim(vars.trace, traceFile);

  const session = new Session();
  session.connect();
  const traceEvents: object[] = [];
  let traceComplete: Promise<void> | undefined;
  if (profileFile !== undefined) {
    await post(session, 'Profiler.enable');
    await post(session, 'Profiler.start');
  }
  if (traceFile !== undefined) {
    session.on('NodeTracing.dataCollected', (m: { params: { value: object[] } }) => {
      for (const e of m.params.value) traceEvents.push(e);
    });
    traceComplete = new Promise((resolve) => session.once('NodeTracing.tracingComplete', () => resolve()));
    await post(session, 'NodeTracing.start', {
      traceConfig: { includedCategories: [...TRACE_CATEGORIES] },
    });
  }
  let stopped: Promise<string[]> | undefined;
  const write = (variable: string, file: string, text: () => string, problems: string[]): void => {
    try {
      writeFileSync(file, text());
    } catch (err) {
      problems.push(`${variable}=${file}: cannot write the file (${(err as Error).message})`);
    }
  };
  return {
    files: [profileFile, traceFile].filter((f): f is string => f !== undefined),
    stop: () =>
      (stopped ??= (async () => {
        const problems: string[] = [];
        try {
          if (profileFile !== undefined) {
            const { profile } = await post<{ profile: object }>(session, 'Profiler.stop');
            write(vars.cpuProfile, profileFile, () => JSON.stringify(profile), problems);
          }
          if (traceFile !== undefined && traceComplete !== undefined) {
            await post(session, 'NodeTracing.stop');
            await traceComplete;
            write(vars.trace, traceFile, () => JSON.stringify({ traceEvents }), problems);
          }
        } finally {
          session.disconnect();
        }
        return problems;
      })()),
  };
}

/** Where a profiled command reports: its stderr, and the prefix of its lines (`blockx worker`). */
export interface ProfiledCommandIo {
  readonly env: NodeJS.ProcessEnv;
  stderr(text: string): void;
}

/**
 * Runs a command (resolving with its exit code) under the role's profiling: a file that cannot be
 * written is one line on stderr and exit code 2 before `run` starts; files that cannot be written at the
 * end are one line each (the command's exit code stands).
 */
export async function withProfiling(
  role: ProfiledRole,
  label: string,
  io: ProfiledCommandIo,
  run: () => Promise<number>,
): Promise<number> {
  let profiling: ProcessProfiling;
  try {
    profiling = await startProfiling(role, io.env);
  } catch (err) {
    if (!(err instanceof ProfilingError)) throw err;
    io.stderr(`${label}: ${err.message}\n`);
    return 2;
  }
  try {
    return await run();
  } finally {
    for (const problem of await profiling.stop()) io.stderr(`${label}: ${problem}\n`);
  }
}
