// The functions of the in-process link (in-process-link.ts), imported into the Worker process itself.
// Which file is function `name`, and that its default export is the function, are the executor's rules
// (src/executor/core/function-resolution.ts: resolveFunctionFile, functionOfModule); a function that
// cannot be loaded fails the way the executor fails it: kind `load`, not retryable, code
// FUNCTION_NOT_FOUND or FUNCTION_LOAD_FAILED (FUNCTIONS_DIR_UNREADABLE when the folder cannot be read;
// docs/executor.md § Functions).
//
// What differs from the executor, because the code runs from the directory and not from an epoch
// snapshot: the folder is listed when (epoch, name) is first loaded, the file is imported from disk
// (TypeScript through tsx's `tsImport`), and the module is cached per (code epoch, name) for the life of
// the process (ESM modules are never freed). A failed load is not cached: the file may appear.

import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { readThrown } from '../../../executor/call-outcome.js';
import { functionOfModule, resolveFunctionFile } from '../../../executor/core/function-resolution.js';
import { ExecutorErrorCode } from '../../../executor/errors.js';
import { listFunctionFiles } from '../../../executor/function-source.js';

export type InProcessFunction = (...args: unknown[]) => unknown;

export type InProcessLoad =
  | { readonly ok: true; readonly fn: InProcessFunction }
  | { readonly ok: false; readonly code: ExecutorErrorCode; readonly message: string };

export class InProcessFunctions {
  private readonly modules = new Map<string, Promise<InProcessLoad>>();
  readonly dir: string;

  constructor(functionsDir: string) {
    this.dir = path.resolve(functionsDir);
  }

  /** Function `name` as of code epoch `epoch`, imported once per (epoch, name). Never rejects. */
  load(epoch: string, name: string): Promise<InProcessLoad> {
    const key = `${epoch}\0${name}`;
    let loading = this.modules.get(key);
    if (loading === undefined) {
      loading = this.importFunction(epoch, name);
      this.modules.set(key, loading);
      void loading.then((r) => {
        if (!r.ok && this.modules.get(key) === loading) this.modules.delete(key);
      });
    }
    return loading;
  }

  private async importFunction(epoch: string, name: string): Promise<InProcessLoad> {
    let listed;
    try {
      listed = await listFunctionFiles(this.dir);
    } catch (err) {
      // FunctionsDirError: the folder cannot be read (FUNCTIONS_DIR_UNREADABLE).
      const message = readThrown(err).message;
      return { ok: false, code: ExecutorErrorCode.FUNCTIONS_DIR_UNREADABLE, message };
    }
    const found = resolveFunctionFile(listed.files, name, this.dir);
    if (!found.ok) return found;
    const file = path.join(this.dir, found.file.fileName);
    // The epoch in the URL makes a new epoch load fresh code instead of the ESM cache's copy.
    const url = `${pathToFileURL(file).href}?epoch=${encodeURIComponent(epoch)}`;
    let mod: Record<string, unknown>;
    try {
      if (file.endsWith('.ts')) {
        const { tsImport } = await import('tsx/esm/api');
        mod = (await tsImport(url, import.meta.url)) as Record<string, unknown>;
      } else {
        mod = (await import(url)) as Record<string, unknown>;
      }
    } catch (err) {
      const message = `cannot load ${file}: ${readThrown(err).message}`;
      return { ok: false, code: ExecutorErrorCode.FUNCTION_LOAD_FAILED, message };
    }
    // A .ts file outside an ESM package is compiled as CommonJS by tsx: its default export is the
    // module.exports object, which holds the real default one level down.
    const inner = mod['default'];
    const nested =
      typeof inner === 'object' &&
      inner !== null &&
      typeof (inner as Record<string, unknown>)['default'] === 'function';
    const fn = functionOfModule(nested ? (inner as Record<string, unknown>) : mod, file);
    return fn.ok ? fn : { ok: false, code: ExecutorErrorCode.FUNCTION_LOAD_FAILED, message: fn.message };
  }
}
