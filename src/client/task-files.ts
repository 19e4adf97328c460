// Reading tasks in their JSON form from files, for `blockx submit` and scripts:
//   - `FILE.json` (any name not ending in .jsonl/.ndjson): one JSON task;
//   - `FILE.jsonl` / `FILE.ndjson`: JSON Lines, one task per non-blank line;
//   - `-`: standard input, one JSON task, or JSON Lines when the whole text is not one JSON value.
// Every task keeps where it came from (`FILE` or `FILE:LINE`, the path relative to the cwd when it is
// below it, else absolute) so problems can name it. Unreadable files
// and lines that are not JSON are reported, never thrown; nothing is validated here beyond JSON syntax.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseJsonWithPosition } from './json-error.js';

export interface SourcedTask {
  /** `FILE` for a one-task file, `FILE:LINE` for a JSON Lines line (1-based); stdin is `<stdin>`. */
  readonly where: string;
  /** Position among all tasks and problems, in input order. */
  readonly seq: number;
  /** The parsed JSON value, not yet validated. */
  readonly json: unknown;
}

export interface SourceProblem {
  readonly where: string;
  /** Position among all tasks and problems, in input order. */
  readonly seq: number;
  readonly message: string;
}

export interface ReadTaskSourcesOptions {
  /** Base for relative paths; paths are shown relative to it. */
  readonly cwd: string;
  /** Reads all of standard input (default: fd 0). */
  readonly readStdin?: () => string;
  /** Reads a file (default: fs.readFileSync as UTF-8). */
  readonly readFile?: (file: string) => string;
}

export const STDIN_NAME = '<stdin>';

export function isJsonLinesPath(file: string): boolean {
  return /\.(jsonl|ndjson)$/i.test(file);
}

export function readTaskSources(
  args: readonly string[],
  opts: ReadTaskSourcesOptions,
): { tasks: SourcedTask[]; problems: SourceProblem[] } {
  const out = new Collector();
  const readFile = opts.readFile ?? ((file: string) => readFileSync(file, 'utf8'));
  let stdinUsed = false;
  for (const arg of args) {
    if (arg === '-') {
      if (stdinUsed) {
        out.problem(STDIN_NAME, '`-` given more than once');
        continue;
      }
      stdinUsed = true;
      let text: string;
      try {
        text = (opts.readStdin ?? (() => readFileSync(0, 'utf8')))();
      } catch (err) {
        out.problem(STDIN_NAME, `cannot read standard input: ${(err as Error).message}`);
        continue;
      }
      const whole = tryParse(text);
      if (whole.ok) out.task(STDIN_NAME, whole.value);
      else parseLines(text, STDIN_NAME, out);
      continue;
    }
    const full = path.resolve(opts.cwd, arg);
    const relative = path.relative(opts.cwd, full);
    const shown = relative === '' ? arg : relative.startsWith('..') ? full : relative;
    let text: string;
    try {
      text = readFile(full);
    } catch (err) {
      out.problem(shown, `cannot read file: ${(err as Error).message}`);
      continue;
    }
    if (isJsonLinesPath(arg)) {
      parseLines(text, shown, out);
    } else {
      const parsed = tryParse(text);
      if (parsed.ok) out.task(shown, parsed.value);
      else out.problem(`${shown}${parsed.at}`, `not valid JSON: ${parsed.message}`);
    }
  }
  return { tasks: out.tasks, problems: out.problems };
}

class Collector {
  readonly tasks: SourcedTask[] = [];
  readonly problems: SourceProblem[] = [];
  private seq = 0;
  task(where: string, json: unknown): void {
    this.tasks.push({ where, seq: this.seq++, json });
  }
  problem(where: string, message: string): void {
    this.problems.push({ where, seq: this.seq++, message });
  }
}

function parseLines(text: string, name: string, out: Collector): void {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line === '') continue;
    const where = `${name}:${i + 1}`;
    const parsed = tryParse(lines[i] as string);
    if (parsed.ok) out.task(where, parsed.value);
    else out.problem(`${where}${parsed.column}`, `not valid JSON: ${parsed.message}`);
  }
}

/** JSON.parse, and on failure where (`:LINE:COLUMN`, and `:COLUMN` for one line) and what was expected. */
function tryParse(
  text: string,
): { ok: true; value: unknown } | { ok: false; message: string; at: string; column: string } {
  const parsed = parseJsonWithPosition(text);
  if (parsed.ok) return parsed;
  return {
    ok: false,
    message: parsed.message.replace(/^\d+:\d+: /, ''),
    at: parsed.line === undefined ? '' : `:${parsed.line}:${parsed.column}`,
    column: parsed.column === undefined ? '' : `:${parsed.column}`,
  };
}
