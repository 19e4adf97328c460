// `blockx validate [--config F] [TASK.json...]`: checks the config, every plugin, and each task file —
// including the builder's and writer's `config` against their plugins' schemas. Prints every problem
// with its location; exit 0 when all is valid, 1 otherwise. A writer whose config names a table that is
// undeclared or not `writable: true` is a problem too, naming the rule `tables.<name>.writable`
// (docs/storage.md, "Which tables tasks may write"). So is a function the Workers will not find (in the
// functions folder, or with `functions.source: cluster` in the deployed version), and a table or column
// the config does not declare, with a "did you mean" (task-references.ts). A task is checked as `blockx
// submit` checks it (task-check.ts): one without a task id is fine, submit gives it one. A task file that
// is not JSON is reported at its line:column.
//
// With `--coordinator ADDR` each task is also checked against the running cluster, as submit's task
// meets it there: the functions as `submit --coordinator ADDR` looks them up, and every Worker the
// Coordinator lists, against the plugins, tables and functions it serves now (cluster-serving.ts). A problem only
// the cluster has is what it does not know yet (a table added to the file and not reloaded, a plugin not
// loaded), named with its Workers. A Coordinator that cannot be reached is a problem; a Worker that does
// not answer is a line under `cluster`.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { ConfigError, ConfigNotFoundError, PluginLoadError, type SchemaIssue } from '../../kernel/errors.js';
import type { Kernel } from '../../kernel/kernel.js';
import { parseJsonWithPosition } from '../../client/json-error.js';
import type { ClusterViews, ServedView } from '../cluster-serving.js';
import { connectTimeout } from '../connect.js';
import { CONFIG_FLAG, EXIT, type CliIo } from '../io.js';

export function registerValidateCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command('validate')
    .description('validate the config, every plugin, and task files (with their builder/writer configs)')
    .argument('[tasks...]', 'task JSON files')
    .option(...CONFIG_FLAG)
    .option(
      '--coordinator <addr>',
      'also check each task against this running cluster: its Workers’ plugins and tables, and its functions',
    )
    .option('--json', 'print the result as JSON')
    .action(async (tasks: string[], opts: { config?: string; coordinator?: string; json?: boolean }) => {
      const report = await validateAll(tasks, opts.config, io, opts.coordinator);
      if (opts.json) io.stdout(`${JSON.stringify(report, null, 2)}\n`);
      else printReport(report, io);
      setExit(report.ok ? EXIT.OK : EXIT.FAILED);
    });
}

export interface ValidationReport {
  ok: boolean;
  config: { file?: string; ok: boolean; problems: string[] };
  plugins: { ok: boolean; builders: string[]; writers: string[]; problems: string[] };
  tasks: { file: string; ok: boolean; problems: SchemaIssue[] }[];
  /** With --coordinator: the cluster checked against (absent without the flag). */
  cluster?: { coordinator: string; ok: boolean; workers: string[]; problems: string[]; notes: string[] };
}

export async function validateAll(
  taskFiles: string[],
  configPath: string | undefined,
  io: CliIo,
  coordinator?: string,
): Promise<ValidationReport> {
  const report: ValidationReport = {
    ok: false,
    config: { ok: false, problems: [] },
    plugins: { ok: false, builders: [], writers: [], problems: [] },
    tasks: [],
  };
  const { bootKernel } = await import('../../kernel/kernel.js');
  const { taskProblems, withTaskId } = await import('../task-check.js');
  const { functionNamesFor } = await import('../function-names.js');
  let kernel: Kernel | undefined;
  try {
    kernel = await bootKernel({ configPath, cwd: io.cwd(), env: io.env });
    report.config = { file: kernel.config.configFile, ok: true, problems: [] };
    report.plugins = {
      ok: true,
      builders: kernel.plugins.builders.types() as string[],
      writers: kernel.plugins.writers.types() as string[],
      problems: [],
    };
  } catch (err) {
    if (err instanceof ConfigError)
      report.config.problems = err.message
        .split('\n')
        .slice(1)
        .map((l) => l.replace(/^\s*- /, ''));
    else if (err instanceof ConfigNotFoundError) report.config.problems = [err.message];
    else if (err instanceof PluginLoadError) {
      report.config.ok = true;
      report.plugins.problems = err.errors.map((e) => e.message);
    } else throw err;
  }
  const timeoutMs = await connectTimeout(undefined, io);
  const functions =
    kernel && taskFiles.length > 0
      ? await functionNamesFor(kernel.config, {
          env: io.env,
          timeoutMs,
          ...(coordinator !== undefined ? { coordinator } : {}),
        })
      : undefined;
  const cluster =
    kernel && coordinator !== undefined
      ? await askCluster(kernel.config, coordinator, timeoutMs, (report.cluster = emptyCluster(coordinator)))
      : undefined;
  const shownDir =
    functions?.rule === 'functions.dir' ? shownPath(io.cwd(), functions.dir) : (functions?.dir ?? '');
  for (const file of taskFiles) {
    const shown = path.relative(io.cwd(), path.resolve(io.cwd(), file)) || file;
    const problems =
      kernel && functions
        ? validateTaskFile(path.resolve(io.cwd(), file), (json) => {
            // As submit checks it (task-check.ts): an id-less task is given one, as submit gives it.
            const task = withTaskId(json, randomUUID);
            const fns = { ...functions, dir: shownDir };
            const local = taskProblems(task, { kernel, functions: fns });
            if (cluster === undefined) return local;
            const onCluster = cluster.check(local, (view) =>
              taskProblems(task, {
                kernel: { config: { ...kernel.config, tables: view.tables }, plugins: view.plugins },
                functions:
                  view.functions === undefined
                    ? fns
                    : { names: [...view.functions], dir: `the functions of ${view.worker}`, rule: fns.rule },
              }),
            );
            return [...local, ...onCluster];
          })
        : [];
    report.tasks.push({ file: shown, ok: kernel !== undefined && problems.length === 0, problems });
  }
  report.ok =
    report.config.ok && report.plugins.ok && report.tasks.every((t) => t.ok) && (report.cluster?.ok ?? true);
  return report;
}

function emptyCluster(coordinator: string): NonNullable<ValidationReport['cluster']> {
  return { coordinator, ok: false, workers: [], problems: [], notes: [] };
}

/** Checks a task's local problems against each Worker's view (`check`: task-check.ts on that view). */
interface ClusterCheck {
  check(local: SchemaIssue[], check: (view: ServedView) => SchemaIssue[]): SchemaIssue[];
}

/** The cluster's Workers and what they serve, recorded in `into`; undefined when it cannot be asked. */
async function askCluster(
  config: Kernel['config'],
  coordinator: string,
  timeoutMs: number,
  into: NonNullable<ValidationReport['cluster']>,
): Promise<ClusterCheck | undefined> {
  const [{ clusterViews, clusterIssues }, { clientTlsOf }, { dialAddress }] = await Promise.all([
    import('../cluster-serving.js'),
    import('./status.js'),
    import('../../client/address.js'),
  ]);
  let views: ClusterViews;
  try {
    views = await clusterViews(dialAddress(coordinator), { ...clientTlsOf(config), timeoutMs });
  } catch (err) {
    into.problems.push(`cannot ask coordinator ${coordinator} for its Workers: ${(err as Error).message}`);
    return undefined;
  }
  into.workers = views.views.map((v) => `${v.worker} (deployment ${v.deployment})`);
  into.notes = [...views.unchecked];
  if (views.views.length === 0) into.notes.push('no Worker answered: the tasks were checked locally only');
  into.ok = true;
  return { check: (local, check) => clusterIssues(local, views.views, check) };
}

function validateTaskFile(file: string, validate: (json: unknown) => SchemaIssue[]): SchemaIssue[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    return [{ path: '', rule: 'readable', message: `cannot read file: ${(err as Error).message}` }];
  }
  const parsed = parseJsonWithPosition(text);
  if (!parsed.ok) {
    const message =
      parsed.line === undefined ? `not valid JSON: ${parsed.message}` : `not valid JSON at ${parsed.message}`;
    return [{ path: '', rule: 'json', message }];
  }
  return validate(parsed.value);
}

function printReport(r: ValidationReport, io: CliIo): void {
  const mark = (ok: boolean) => (ok ? 'ok  ' : 'FAIL');
  io.stdout(`${mark(r.config.ok)} config ${r.config.file ?? ''}\n`);
  for (const p of r.config.problems) io.stdout(`       ${p}\n`);
  if (r.config.ok) {
    io.stdout(
      `${mark(r.plugins.ok)} plugins${r.plugins.ok ? `: builders ${r.plugins.builders.join(', ')}; writers ${r.plugins.writers.join(', ')}` : ''}\n`,
    );
    for (const p of r.plugins.problems) io.stdout(`       ${p}\n`);
  }
  if (r.cluster) {
    const c = r.cluster;
    io.stdout(
      `${mark(c.ok)} cluster ${c.coordinator}${c.ok ? `: ${c.workers.length ? c.workers.join(', ') : 'no Worker'}` : ''}\n`,
    );
    for (const p of [...c.problems, ...c.notes]) io.stdout(`       ${p}\n`);
  }
  for (const t of r.tasks) {
    io.stdout(
      `${mark(t.ok)} task ${t.file}${!t.ok && t.problems.length === 0 ? ' (not checked: the config or plugins failed)' : ''}\n`,
    );
    for (const p of t.problems) io.stdout(`       ${p.path || '/'}: ${p.message} (rule: ${p.rule})\n`);
  }
  const bad = [
    !r.config.ok,
    r.config.ok && !r.plugins.ok,
    r.cluster !== undefined && !r.cluster.ok,
    ...r.tasks.map((t) => !t.ok),
  ].filter(Boolean).length;
  io.stdout(
    r.ok
      ? `valid: config, plugins and ${r.tasks.length} task file(s)\n`
      : `invalid: ${bad} problem source(s)\n`,
  );
}

/** `dir` relative to the cwd when it is under it, else absolute. */
function shownPath(cwd: string, dir: string): string {
  const relative = path.relative(cwd, dir);
  return relative === '' || relative.startsWith('..') ? dir : relative;
}
