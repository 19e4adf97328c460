// `blockx submit TASK.json... [--coordinator ADDR | --worker ADDR] [--json] [--concurrency N] [--retries R]
//  [--wait]`
//
// 1. Read every input: a file with one JSON task, a `.jsonl`/`.ndjson` file with one task per line, or
//    `-` for standard input. A task without `task_id`/`taskId` gets a fresh UUID.
// 2. Validate ALL of them first, exactly as `blockx validate` does (task-check.ts: the task-input schema,
//    each builder/writer config against its plugin's schema, the function where the Workers take
//    functions from, tables, columns, writable tables), and reject duplicate task ids. Any problem: print every
//    one as FILE[:LINE]: /path: message, submit nothing, exit 1.
// 3. Run them through BlockxClient on the batched protocol (bulk ReserveWorkerSlots, one RunTasks stream
//    per Worker, with the retries of docs/retries.md per task; docs/batched-protocol.md), at most
//    `--concurrency` (64) at a time, to the Coordinator (default: COORDINATOR_LISTEN, else from the
//    config) or straight to one Worker (`--worker`). With `--retries R` a task that FAILED retryably or
//    whose Worker was lost runs again, up to R more times (docs/retries.md).
// 4. One line per task as it ends: `<task_id> SUCCEEDED <short result JSON>` or `<task_id> FAILED <code>
//    <message>` (a task the client could not place or follow is FAILED with the client's error code), or
//    with --json one JSON object per line; on a terminal, a live progress bar below them. A summary line
//    ends the run (on stderr with --json, so stdout stays JSON Lines).
// Exit 0 when every task SUCCEEDED, 1 when any failed or was invalid, 2 on usage errors. Waiting for the
// results is what submit always does; `--wait` is accepted (docs/architecture.md § CLI) and changes nothing.
import type { Command } from 'commander';
import type { ClientErrorCode } from '../../client/errors.js';
import type { RunManyOutcome } from '../../client/run-many.js';
import type { TaskRunner } from '../../client/run-with-retries.js';
import type { ClientTaskInput } from '../../client/types.js';
import type { SchemaIssue } from '../../kernel/errors.js';
import { CONFIG_FLAG, COORDINATOR_FLAG, EXIT, WORKER_FLAG, UsageError, type CliIo } from '../io.js';
import { CONNECT_TIMEOUT_FLAG, checkReachable, connectTimeout } from '../connect.js';
import { ProgressLine, formatDuration, formatRate } from '../progress.js';
import { clientTlsOf, coordinatorAddressFromConfig } from './status.js';

interface SubmitOptions {
  config?: string;
  coordinator?: string;
  worker?: string;
  json?: boolean;
  concurrency: string;
  retries: string;
  wait?: boolean;
  connectTimeout?: string;
}

type RunnableTask = ClientTaskInput & { readonly taskId: string };

export function registerSubmitCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command('submit')
    .description('validate task files, run them on the cluster and print each result')
    .argument('<tasks...>', 'task files: FILE.json (one task), FILE.jsonl (one per line), - (stdin)')
    .option(...CONFIG_FLAG)
    .option(...COORDINATOR_FLAG)
    .option(...WORKER_FLAG)
    .option('--json', 'print one JSON object per task (summary on stderr)')
    .option('--concurrency <n>', 'tasks in flight at once', '64')
    .option(
      '--retries <n>',
      'run a task again (under the id <task_id>~<attempt>) when it FAILED retryably or its worker was lost',
      '0',
    )
    .option('--wait', 'wait for terminal results (always on: submit waits and prints every result)')
    .option(...CONNECT_TIMEOUT_FLAG)
    .action(async (tasks: string[], opts: SubmitOptions) => setExit(await submit(tasks, opts, io)));
}

async function submit(args: string[], opts: SubmitOptions, io: CliIo): Promise<number> {
  if (opts.coordinator !== undefined && opts.worker !== undefined) {
    throw new UsageError('give --coordinator or --worker, not both');
  }
  const concurrency = Number(opts.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 100_000) {
    throw new UsageError(`--concurrency must be an integer in 1..100000, got ${opts.concurrency}`);
  }
  const retries = parseRetries(opts.retries);
  const connectTimeoutMs = await connectTimeout(opts.connectTimeout, io);
  const [
    { readTaskSources },
    { bootKernel },
    { normalizeTaskInput },
    { randomUUID },
    { taskProblems, withTaskId },
    { functionNamesFor },
  ] = await Promise.all([
    import('../../client/task-files.js'),
    import('../../kernel/kernel.js'),
    import('../../kernel/task-validation.js'),
    import('node:crypto'),
    import('../task-check.js'),
    import('../function-names.js'),
  ]);

  const read = readTaskSources(args, { cwd: io.cwd() });
  const kernel = await bootKernel({ configPath: opts.config, cwd: io.cwd(), env: io.env });
  // Where the Workers take functions from: this folder, or the version deployed to the cluster.
  const functions = await functionNamesFor(kernel.config, {
    ...(opts.coordinator !== undefined ? { coordinator: opts.coordinator } : {}),
    env: io.env,
    timeoutMs: connectTimeoutMs,
  });
  // Every problem with its input position, so they print in input order.
  const problems: { seq: number; text: string }[] = read.problems.map((p) => ({
    seq: p.seq,
    text: `${p.where}: ${p.message}`,
  }));
  const tasks: RunnableTask[] = [];
  const sources: string[] = [];
  const seen = new Map<string, string>();
  for (const { where, seq, json } of read.tasks) {
    const withId = withTaskId(json, randomUUID);
    // The check blockx validate makes (task-check.ts): shape, names, writable tables.
    const issues: SchemaIssue[] = taskProblems(withId, { kernel, functions });
    for (const i of issues) {
      problems.push({ seq, text: `${where}: ${i.path || '/'}: ${i.message} (rule: ${i.rule})` });
    }
    if (issues.length > 0) continue;
    const task = normalizeTaskInput(withId);
    const first = seen.get(task.taskId);
    if (first !== undefined) {
      problems.push({
        seq,
        text: `${where}: task id ${JSON.stringify(task.taskId)} is also used at ${first}`,
      });
      continue;
    }
    seen.set(task.taskId, where);
    tasks.push(task);
    sources.push(where);
  }
  if (problems.length > 0) {
    for (const p of problems.sort((a, b) => a.seq - b.seq)) io.stderr(`${p.text}\n`);
    io.stderr(`invalid: ${problems.length} problem(s); nothing submitted\n`);
    return EXIT.FAILED;
  }
  if (tasks.length === 0) {
    io.stderr('blockx submit: the inputs hold no task; nothing submitted\n');
    return EXIT.FAILED;
  }

  const [{ BlockxClient }, { runMany }, { dialAddress }, { isRetryableClientCode }, { CLI_REUSE_SLOTS }] =
    await Promise.all([
      import('../../client/client.js'),
      import('../../client/run-many.js'),
      import('../../client/address.js'),
      import('../../client/errors.js'),
      import('../../client/options.js'),
    ]);
  const config = kernel.config;
  const slotTtlMs = config.deployments[config.up.deployment]?.coordinator.slotTtlMs ?? 5_000;
  const target =
    opts.worker !== undefined
      ? { worker: dialAddress(opts.worker) }
      : { coordinator: dialAddress(opts.coordinator ?? coordinatorAddressFromConfig(config, io.env)) };
  const tls = clientTlsOf(config);
  const client = new BlockxClient({ ...target, slotTtlMs, reuseSlots: CLI_REUSE_SLOTS, ...tls });
  const unreachable = await checkReachable(
    client,
    {
      command: 'submit',
      timeoutMs: connectTimeoutMs,
      tls: tls.tls !== undefined,
      ...(tls.tls ? { tlsMaterial: tls.tls } : {}),
    },
    io,
  );
  if (unreachable !== undefined) {
    client.close();
    return unreachable;
  }
  // The batched protocol (bulk reservation, one RunTasks stream per Worker; docs/batched-protocol.md).
  const runner = retries === 0 ? client.batched : await retryingRunner(client.batched, retries, slotTtlMs);

  const progress = io.isTTY && !opts.json ? new ProgressLine((s) => io.stdout(s), tasks.length) : undefined;
  const counts = { total: tasks.length, succeeded: 0, failed: 0, running: 0 };
  const emit = (line: string): void => (progress ? progress.print(line) : io.stdout(line));
  const started = new Set<number>();
  const abort = new AbortController();
  const onSignal = (): void => abort.abort();
  process.once('SIGINT', onSignal);
  const startedAt = Date.now();
  let outcomes: RunManyOutcome[];
  try {
    outcomes = await runMany(runner, tasks, {
      concurrency,
      signal: abort.signal,
      onStart: (index) => {
        started.add(index);
        counts.running++;
        progress?.update({ ...counts });
      },
      onSettled: (o) => {
        if (started.delete(o.index)) counts.running--;
        if (o.ok && o.result.success) counts.succeeded++;
        else counts.failed++;
        emit(
          opts.json
            ? `${JSON.stringify(jsonOutcome(o, sources[o.index] ?? '', isRetryableClientCode))}\n`
            : textOutcome(o),
        );
        progress?.update({ ...counts });
      },
    });
  } finally {
    process.off('SIGINT', onSignal);
    progress?.finish();
    client.close();
  }
  const elapsed = Date.now() - startedAt;
  const failed = outcomes.filter((o) => !o.ok || !o.result.success).length;
  const summary =
    `${tasks.length} task(s): ${tasks.length - failed} succeeded, ${failed} failed ` +
    `in ${formatDuration(elapsed)} (${formatRate((tasks.length * 1000) / Math.max(1, elapsed))} tasks/s)` +
    `${abort.signal.aborted ? ' (interrupted)' : ''}\n`;
  if (opts.json) io.stderr(summary);
  else io.stdout(summary);
  return failed === 0 ? EXIT.OK : EXIT.FAILED;
}

/** `--retries`: task-level attempts after the first (docs/retries.md). */
export function parseRetries(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0 || n > 1000) {
    throw new UsageError(`--retries must be an integer in 0..1000, got ${text}`);
  }
  return n;
}

/**
 * client.run with task-level retries: attempt 1 keeps the task's own id, attempt k runs as
 * `<task_id>~<k>` (a retained FAILED result of the first id would otherwise answer every resubmission).
 */
async function retryingRunner(client: TaskRunner, retries: number, slotTtlMs: number): Promise<TaskRunner> {
  const [{ runWithRetries }, { DEFAULT_TASK_RETRY_BACKOFF }, { abortableSleep }] = await Promise.all([
    import('../../client/run-with-retries.js'),
    import('../../client/task-retry.js'),
    import('../../client/options.js'),
  ]);
  const policy = { retries, slotTtlMs, ...DEFAULT_TASK_RETRY_BACKOFF };
  return {
    async run(task, runOpts) {
      const outcome = await runWithRetries(client, task, {
        policy,
        taskIdOf: (attempt) => (attempt === 1 ? task.taskId : `${task.taskId}~${attempt}`),
        sleep: abortableSleep,
        random: Math.random,
        ...(runOpts?.signal ? { signal: runOpts.signal } : {}),
      });
      if (outcome.ok) return outcome.result;
      if (outcome.result !== undefined) return outcome.result;
      throw outcome.error;
    },
  };
}

const MAX_RESULT_CHARS = 120;

function textOutcome(o: RunManyOutcome): string {
  if (!o.ok) return `${o.taskId} FAILED ${o.error.code} ${oneLine(o.error.message)}\n`;
  const r = o.result;
  if (r.success) return `${r.taskId} SUCCEEDED ${shortResult(r.pluginResults)}\n`;
  return `${r.taskId} FAILED ${r.failureCode} ${failureText(r.failureMessage)}`;
}

/**
 * A task's failure message as the FAILED line plus, below it, the user function's stack frames the
 * Worker appended (lines `    at ...`; src/executor/call-outcome.ts), each on its own indented line.
 */
export function failureText(message: string): string {
  const lines = message.split('\n');
  const frames = lines.filter((l) => /^\s+at \S/.test(l));
  const head = lines.filter((l) => !/^\s+at \S/.test(l)).join(' ');
  return `${oneLine(head) || '-'}\n${frames.map((f) => `    ${f.trim()}\n`).join('')}`;
}

/** The first plugin result's JSON (ReturnValueResultHandler: the call outputs), cut to one short line. */
function shortResult(pluginResults: readonly { pluginName: string; result?: unknown }[]): string {
  const first = pluginResults[0];
  const text =
    first === undefined
      ? '{}'
      : first.result !== undefined
        ? JSON.stringify(first.result)
        : `{"plugin":"${first.pluginName}"}`;
  return text.length > MAX_RESULT_CHARS ? `${text.slice(0, MAX_RESULT_CHARS - 1)}…` : text;
}

/** The longest line oneLine() prints, and how much of a longer message's end it keeps. */
export const ONE_LINE_MAX = 1_000;
const ONE_LINE_TAIL = 400;

/**
 * A message flattened to one line of at most ONE_LINE_MAX characters. A longer one loses its middle, not
 * its end: failure messages put what to do last (`...; available: hello_world, erc20_transfers`), and the
 * head says what failed. The whole message stays in `--json` output and the task's result.
 */
export function oneLine(s: string): string {
  const flat = s.replace(/\s+/g, ' ').trim();
  if (flat.length <= ONE_LINE_MAX) return flat;
  const head = ONE_LINE_MAX - ONE_LINE_TAIL - 3;
  return `${flat.slice(0, head)} … ${flat.slice(flat.length - ONE_LINE_TAIL)}`;
}

function jsonOutcome(
  o: RunManyOutcome,
  source: string,
  isRetryableClientCode: (code: ClientErrorCode) => boolean,
): Record<string, unknown> {
  if (!o.ok) {
    const e = o.error;
    return {
      taskId: o.taskId,
      source,
      state: 'FAILED',
      success: false,
      failureCode: e.code,
      failureMessage: e.message,
      retryable: isRetryableClientCode(e.code),
      error: {
        code: e.code,
        grpcStatus: e.grpcStatus ?? null,
        businessCode: e.businessCode ?? null,
        attempts: e.attempts ?? null,
      },
    };
  }
  const r = o.result;
  return {
    taskId: r.taskId,
    source,
    state: r.state,
    success: r.success,
    workerAddr: r.workerAddr,
    codeVersion: r.codeVersion ?? '',
    failureCode: r.failureCode,
    failureMessage: r.failureMessage,
    retryable: r.retryable,
    pluginResults: r.pluginResults,
    attempts: r.attempts,
    durationMs: r.durationMs,
  };
}
