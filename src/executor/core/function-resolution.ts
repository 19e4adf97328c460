// Which file is function `name` (docs/executor.md § Functions): the one rule for every place that runs
// functions, the executor (function-compiler.ts, over an epoch snapshot) and the Worker's in-process link
// (services/call-host/adapters/in-process-functions.ts, over the directory). A function is
// `functions/<name>.ts`, `.mjs` or `.js` at the top level; names are identifiers (letters, digits, `_`,
// `-`). Exactly one file may define a name: two (say `x.ts` and `x.js`) is an error, never a silent
// preference. The function is the module's default export (functionOfModule). Pure: it is given the file
// list, or the imported module.

import { ExecutorErrorCode } from '../errors.js';

export const FUNCTION_EXTENSIONS = ['.ts', '.mjs', '.js'] as const;
export type FunctionExtension = (typeof FUNCTION_EXTENSIONS)[number];

export const FUNCTION_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** `hello_world.ts` → `{name: 'hello_world', ext: '.ts'}`; null when the file is not a function. */
export function parseFunctionFileName(fileName: string): { name: string; ext: FunctionExtension } | null {
  for (const ext of FUNCTION_EXTENSIONS) {
    if (fileName.endsWith(ext)) {
      const name = fileName.slice(0, -ext.length);
      return FUNCTION_NAME_PATTERN.test(name) ? { name, ext } : null;
    }
  }
  return null;
}

export type FunctionResolution<F> =
  | { readonly ok: true; readonly file: F }
  | {
      readonly ok: false;
      readonly code:
        typeof ExecutorErrorCode.FUNCTION_NOT_FOUND | typeof ExecutorErrorCode.FUNCTION_LOAD_FAILED;
      readonly message: string;
    };

/**
 * The file that defines `name` among `files` (function files of `functionsDir`; `epoch`, when the list
 * is an epoch snapshot, is named in the not-found message).
 */
export function resolveFunctionFile<F extends { readonly name: string; readonly fileName: string }>(
  files: readonly F[],
  name: string,
  functionsDir: string,
  epoch?: string,
): FunctionResolution<F> {
  const candidates = files.filter((f) => f.name === name);
  if (candidates.length === 0) {
    const known = files.map((f) => f.name);
    return {
      ok: false,
      code: ExecutorErrorCode.FUNCTION_NOT_FOUND,
      message:
        `function "${name}" not found in ${functionsDir}${epoch === undefined ? '' : ` (code epoch ${epoch})`}; ` +
        `expected ${name}.ts, ${name}.mjs or ${name}.js; available: ${known.length ? known.join(', ') : 'none'}`,
    };
  }
  if (candidates.length > 1) {
    return {
      ok: false,
      code: ExecutorErrorCode.FUNCTION_LOAD_FAILED,
      message: `function "${name}" is defined by more than one file in ${functionsDir}: ${candidates
        .map((f) => f.fileName)
        .join(', ')}; keep one`,
    };
  }
  return { ok: true, file: candidates[0]! };
}

/**
 * The function a module defines: its default export, which must be a function; otherwise the message
 * says what the module exports instead. `path` names the file in that message.
 */
export function functionOfModule(
  mod: Readonly<Record<string, unknown>>,
  path: string,
):
  | { readonly ok: true; readonly fn: (...args: unknown[]) => unknown }
  | { readonly ok: false; readonly message: string } {
  const fn = mod['default'];
  if (typeof fn === 'function') return { ok: true, fn: fn as (...args: unknown[]) => unknown };
  const names = Object.keys(mod).filter((k) => k !== 'default');
  return {
    ok: false,
    message:
      `${path} has no default export function` +
      (fn === undefined ? '' : ` (its default export is ${fn === null ? 'null' : typeof fn})`) +
      (names.length ? `; its exports: ${names.join(', ')}` : ''),
  };
}
