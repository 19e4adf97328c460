// The function names a task may call, read from the functions folder as the executor resolves them
// (src/executor/core/function-resolution.ts): `<name>.ts`, `.mjs`, `.js` at the top level, and
// `<name>.py` (Python functions, docs/functions.md). Used by the pre-run checks of task-references.ts.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { FUNCTION_NAME_PATTERN, parseFunctionFileName } from '../executor/core/function-resolution.js';
import type { BlockxConfig } from '../kernel/config-types.js';

/**
 * The names in `config.functions.dir`, or undefined when this machine cannot know them: the folder does
 * not exist here (a client submitting to a cluster on other machines), or functions come from the
 * cluster (`functions.source: cluster`, deployed with `blockx functions deploy`).
 */
export function localFunctionNames(config: BlockxConfig): { dir: string; names: string[] | undefined } {
  const base = config.configFile ? path.dirname(config.configFile) : process.cwd();
  const dir = path.resolve(base, config.functions.dir);
  if (config.functions.source === 'cluster') return { dir, names: undefined };
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return { dir, names: undefined };
  }
  const names = new Set<string>();
  for (const file of entries) {
    const parsed = parseFunctionFileName(file);
    if (parsed !== null) names.add(parsed.name);
    else if (file.endsWith('.py') && FUNCTION_NAME_PATTERN.test(file.slice(0, -3)))
      names.add(file.slice(0, -3));
  }
  return { dir, names: [...names] };
}
