// `blockx validate [--config F] [TASK.json...]`: checks the config, every plugin, and each task file —
// including the builder's and writer's `config` against their plugins' schemas. Prints every problem
// with its location; exit 0 when all is valid, 1 otherwise. A writer whose config names a table that is
// undeclared or not `writable: true` is a problem too, naming the rule `tables.<name>.writable`
// (docs/storage.md, "Which tables tasks may write"). So is a function that is not in the functions folder,
// and a table or column the config does not declare, with a "did you mean" (task-references.ts). A task
// file that is not JSON is reported at its line:column.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { ConfigError, ConfigNotFoundError, PluginLoadError, type SchemaIssue } from '../../kernel/errors.js';
import type { Kernel } from '../../kernel/kernel.js';
import { parseJsonWithPosition } from '../../client/json-error.js';
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
  const { validateTaskInput } = await import('../../kernel/task-validation.js');
  const { writerTableIssues } = await import('../../services/storage/table-write-rule.js');
  const { taskReferenceIssues } = await import('../task-references.js');
  const { localFunctionNames } = await import('../function-names.js');
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
  const functions = kernel ? localFunctionNames(kernel.config) : undefined;
  for (const file of taskFiles) {
    const shown = path.relative(io.cwd(), path.resolve(io.cwd(), file)) || file;
    const problems =
      kernel && functions
        ? validateTaskFile(path.resolve(io.cwd(), file), (json) => {
            const schema = validateTaskInput(json, kernel.plugins);
            // Names (functions, tables, columns) only once the shape is right: a missing key is one issue.
            const references =
              schema.length > 0
                ? []
                : taskReferenceIssues(json, {
                    functions: functions.names,
                    functionsDir: shownPath(io.cwd(), functions.dir),
                    tables: kernel.config.tables,
                  });
            const reported = new Set(references.map((i) => i.path));
            const writable = resultHandlerTableIssues(json, kernel, writerTableIssues).filter(
              (i) => !reported.has(i.path),
            );
            return [...schema, ...references, ...writable];
          })
        : [];
    report.tasks.push({ file: shown, ok: kernel !== undefined && problems.length === 0, problems });
  }
  report.ok = report.config.ok && report.plugins.ok && report.tasks.every((t) => t.ok);
  return report;
}

/** The writer's target tables against `tables.<name>.writable`, when the writer type is known. */
function resultHandlerTableIssues(
  json: unknown,
  kernel: Kernel,
  check: (config: unknown, tables: Kernel['config']['tables']) => SchemaIssue[],
): SchemaIssue[] {
  if (typeof json !== 'object' || json === null) return [];
  const handler = (json as { resultHandler?: unknown }).resultHandler;
  if (typeof handler !== 'object' || handler === null) return [];
  const { type, config } = handler as { type?: unknown; config?: unknown };
  if (typeof type !== 'string' || !kernel.plugins.writers.has(type)) return [];
  return check(config, kernel.config.tables).map((i) => ({ ...i, path: `/resultHandler/config${i.path}` }));
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
