// Which executor runs function `name` (docs/executor.md § Python functions on a Worker).
//
// A Worker may run two executors: the JS one (`<name>.ts`, `.mjs`, `.js`) and the Python one
// (`<name>.py`). The language of a call is decided here, from the files of the code epoch its task
// pinned, so every call of a task (subcalls too, whichever language asks) is routed by the same
// snapshot. Rules:
//
//   - a name defined only by JS files runs on the JS executor, only by a `.py` file on the Python one;
//   - a name defined in both languages is a collision: a load error naming every file, never a silent
//     preference (as two JS files for one name are, core/function-resolution.ts in src/executor);
//   - a name defined by no file: in a snapshot with a `.py` file the Worker answers FUNCTION_NOT_FOUND
//     itself, listing the functions of every language (notFoundMessage); in a JS-only snapshot it goes
//     to the JS executor, whose FUNCTION_NOT_FOUND already lists every function there is.
//
// Pure: given the file names, no IO, no clock.

import { parseFunctionFileName } from './function-resolution.js';

export type FunctionLanguage = 'js' | 'python';

/** Every language, in a fixed order (the JS executor first: it is the default). */
export const FUNCTION_LANGUAGES: readonly FunctionLanguage[] = ['js', 'python'];

export const PYTHON_EXTENSION = '.py';

/** Python function names follow the JS rule (identifiers), minus dunder modules such as `__init__`. */
const PYTHON_NAME_PATTERN = /^(?!__)[A-Za-z_][A-Za-z0-9_-]*$/;

export interface FunctionFileName {
  readonly name: string;
  readonly language: FunctionLanguage;
}

/** `f.ts` → `{f, js}`, `f.py` → `{f, python}`; null when the file is not a function of either language. */
export function parseAnyFunctionFileName(fileName: string): FunctionFileName | null {
  if (fileName.endsWith(PYTHON_EXTENSION)) {
    const name = fileName.slice(0, -PYTHON_EXTENSION.length);
    return PYTHON_NAME_PATTERN.test(name) ? { name, language: 'python' } : null;
  }
  const js = parseFunctionFileName(fileName);
  return js === null ? null : { name: js.name, language: 'js' };
}

/** One name defined in both languages. */
export interface LanguageCollision {
  readonly name: string;
  /** Every file that defines the name, sorted (JS files and the `.py` file). */
  readonly files: readonly string[];
}

export interface FunctionsInventory {
  /** Names defined in exactly one language. */
  readonly languages: ReadonlyMap<string, FunctionLanguage>;
  /** Names defined in both languages, sorted by name. */
  readonly collisions: readonly LanguageCollision[];
  /** Whether any `.py` function file exists (the Python executor is needed). */
  readonly hasPython: boolean;
}

/** The inventory of a list of file names (an epoch snapshot's, or a directory's). */
export function buildFunctionsInventory(files: readonly { readonly fileName: string }[]): FunctionsInventory {
  const byName = new Map<string, { langs: Set<FunctionLanguage>; files: string[] }>();
  let hasPython = false;
  for (const f of files) {
    const parsed = parseAnyFunctionFileName(f.fileName);
    if (parsed === null) continue;
    if (parsed.language === 'python') hasPython = true;
    let entry = byName.get(parsed.name);
    if (entry === undefined) {
      entry = { langs: new Set(), files: [] };
      byName.set(parsed.name, entry);
    }
    entry.langs.add(parsed.language);
    entry.files.push(f.fileName);
  }
  const languages = new Map<string, FunctionLanguage>();
  const collisions: LanguageCollision[] = [];
  for (const [name, entry] of byName) {
    if (entry.langs.size > 1) collisions.push({ name, files: [...entry.files].sort() });
    else languages.set(name, entry.langs.values().next().value as FunctionLanguage);
  }
  collisions.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { languages, collisions, hasPython };
}

export type FunctionRoute =
  | { readonly ok: true; readonly language: FunctionLanguage }
  | { readonly ok: false; readonly collision: LanguageCollision }
  | { readonly ok: false; readonly missing: string };

/** Routes a call by its function name; see the rules at the top of this file. */
export function languageOf(name: string, inventory: FunctionsInventory): FunctionRoute {
  const language = inventory.languages.get(name);
  if (language !== undefined) return language === 'js' ? JS_ROUTE : PYTHON_ROUTE;
  if (inventory.collisions.length > 0) {
    const collision = inventory.collisions.find((c) => c.name === name);
    if (collision !== undefined) return { ok: false, collision };
  }
  return inventory.hasPython ? { ok: false, missing: name } : JS_ROUTE;
}

const JS_ROUTE: FunctionRoute = Object.freeze({ ok: true, language: 'js' });
const PYTHON_ROUTE: FunctionRoute = Object.freeze({ ok: true, language: 'python' });

/** The load error of a collision: names the function, every file, the folder and the rule. */
export function collisionMessage(collision: LanguageCollision, functionsDir: string): string {
  return (
    `function "${collision.name}" is defined in two languages in ${functionsDir}: ` +
    `${collision.files.join(', ')}; one name may be defined by one language only: keep one`
  );
}

const LANGUAGE_LABELS: Readonly<Record<FunctionLanguage, string>> = { js: 'JS', python: 'Python' };

/**
 * The FUNCTION_NOT_FOUND message of a name no file defines, listing every function of the snapshot with
 * its language (the JS executor's message, src/executor/core/function-resolution.ts, with `.py` added).
 */
export function notFoundMessage(
  name: string,
  inventory: FunctionsInventory,
  functionsDir: string,
  epoch: string,
): string {
  const available = [
    ...[...inventory.languages].map(([n, language]) => `${n} (${LANGUAGE_LABELS[language]})`),
    ...inventory.collisions.map((c) => `${c.name} (JS and Python: keep one)`),
  ].sort();
  return (
    `function "${name}" not found in ${functionsDir} (code epoch ${epoch}); ` +
    `expected ${name}.ts, ${name}.mjs, ${name}.js or ${name}.py; ` +
    `available: ${available.length ? available.join(', ') : 'none'}`
  );
}
