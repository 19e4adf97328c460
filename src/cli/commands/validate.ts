// `blockx validate [--config F] [TASK.json...]`: checks the config, every plugin, and each task file —
// including the builder's and writer's `config` against their plugins' schemas. Prints every problem
// with its location; exit 0 when all is valid, 1 otherwise. A writer whose config names a table that is
// undeclared or not `writable: true` is a problem too, naming the rule `tables.<name>.writable`
// (docs/storage.md, "Which tables tasks may write"). So is a function the Workers will not find (in the
// functions folder, or with `functions.source: cluster` in the deployed version), and a table or column
// the config does not declare, with a "did you mean" (task-references.ts). A task is checked as `blockx
// submit` checks it (task-check.ts): one without a task id is fine, submit gives it one. A task file that
// is not JSON is reported at its line:column.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { ConfigError, ConfigNotFoundError, PluginLoadError, type SchemaIssue } from '../../kernel/errors.js';
import type { Kernel } from '../../kernel/kernel.js';
import { parseJsonWithPosition } from '../../client/json-error.js';
import { connectTimeout } from '../connect.js';
import { CONFIG_FLAG, EXIT, type CliIo } from '../io.js';

export function registerValidateCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command('validate')
    .description('validate the config, every plugin, and task files (with their builder/writer configs)')
    .argument('[tasks...]', 'task JSON files')
    .option(...CONFIG_FLAG)
    .option('--json', 'print the result as JSON')
    .action(async (tasks: string[], opts: { config?: string; json?: boolean }) => {
      const report = await validateAll(tasks, opts.config, io);
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
}

export async function validateAll(
  taskFiles: string[],
  configPath: string | undefined,
  io: CliIo,
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
  const functions =
    kernel && taskFiles.length > 0
      ? await functionNamesFor(kernel.config, { env: io.env, timeoutMs: await connectTimeout(undefined, io) })
      : undefined;
  const shownDir =
    functions?.rule === 'functions.dir' ? shownPath(io.cwd(), functions.dir) : (functions?.dir ?? '');
  for (const file of taskFiles) {
    const shown = path.relative(io.cwd(), path.resolve(io.cwd(), file)) || file;
    const problems =
      kernel && functions
        ? validateTaskFile(path.resolve(io.cwd(), file), (json) =>
            // As submit checks it (task-check.ts): an id-less task is given one, as submit gives it.
            taskProblems(withTaskId(json, randomUUID), {
              kernel,
              functions: { ...functions, dir: shownDir },
            }),
          )
        : [];
    report.tasks.push({ file: shown, ok: kernel !== undefined && problems.length === 0, problems });
  }
  report.ok = report.config.ok && report.plugins.ok && report.tasks.every((t) => t.ok);
  return report;
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
  for (const t of r.tasks) {
    io.stdout(
      `${mark(t.ok)} task ${t.file}${!t.ok && t.problems.length === 0 ? ' (not checked: the config or plugins failed)' : ''}\n`,
    );
    for (const p of t.problems) io.stdout(`       ${p.path || '/'}: ${p.message} (rule: ${p.rule})\n`);
  }
  const bad = [!r.config.ok, r.config.ok && !r.plugins.ok, ...r.tasks.map((t) => !t.ok)].filter(
    Boolean,
  ).length;
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
