// Loads user functions for LocalCallRunner, cached per code epoch (TS through tsx's `tsImport`). Which
// file is function `name` is decided by the executor's resolver (src/executor/core/function-resolution.ts,
// docs/executor.md § Functions): `functions/<name>.{ts,mjs,js}`, exactly one of them. A failed load is not
// cached (the file may appear).

import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { FUNCTION_NAME_PATTERN, resolveFunctionFile } from '../../../executor/core/function-resolution.js';
import { ExecutorErrorCode } from '../../../executor/errors.js';
import { listFunctionFiles } from '../../../executor/function-source.js';
import { FunctionLoadError, WorkerRuntimeErrorCode } from './errors.js';
import { describeError } from './phase-results.js';

export type UserFunction = (ctx: unknown, ...args: unknown[]) => unknown;

export class FunctionLoader {
  private readonly modules = new Map<string, Promise<UserFunction>>();

  constructor(private readonly dir: string) {}

  /** The default export of `functions/<name>`, loaded once per code epoch. */
  load(epoch: string, name: string): Promise<UserFunction> {
    const key = `${epoch}\0${name}`;
    let loading = this.modules.get(key);
    if (loading === undefined) {
      loading = this.importFunction(epoch, name);
      this.modules.set(key, loading);
      // A failed load is not cached: the file may appear later.
      loading.catch(() => this.modules.delete(key));
    }
    return loading;
  }

  private async importFunction(epoch: string, name: string): Promise<UserFunction> {
    const fields = { functionName: name, functionsDir: this.dir };
    if (!FUNCTION_NAME_PATTERN.test(name)) {
      throw new FunctionLoadError(WorkerRuntimeErrorCode.FUNCTION_NOT_FOUND, {
        ...fields,
        message: 'is not a valid function name',
      });
    }
    let listed;
    try {
      listed = await listFunctionFiles(this.dir);
    } catch (err) {
      throw new FunctionLoadError(
        WorkerRuntimeErrorCode.FUNCTION_NOT_FOUND,
        { ...fields, message: describeError(err) },
        { cause: err },
      );
    }
    const found = resolveFunctionFile(listed.files, name, this.dir);
    if (!found.ok) {
      const code =
        found.code === ExecutorErrorCode.FUNCTION_NOT_FOUND
          ? WorkerRuntimeErrorCode.FUNCTION_NOT_FOUND
          : WorkerRuntimeErrorCode.FUNCTION_INVALID;
      throw new FunctionLoadError(code, { ...fields, message: found.message });
    }
    const file = path.join(this.dir, found.file.fileName);
    // The epoch in the URL makes a new epoch load fresh code instead of the ESM cache's copy.
    const url = `${pathToFileURL(file).href}?epoch=${encodeURIComponent(epoch)}`;
    let mod: { default?: unknown };
    try {
      if (file.endsWith('.ts')) {
        const { tsImport } = await import('tsx/esm/api');
        mod = (await tsImport(url, import.meta.url)) as { default?: unknown };
      } else {
        mod = (await import(url)) as { default?: unknown };
      }
    } catch (err) {
      throw new FunctionLoadError(
        WorkerRuntimeErrorCode.FUNCTION_INVALID,
        { ...fields, message: `cannot import ${file}: ${describeError(err)}` },
        { cause: err },
      );
    }
    // A .ts file outside an ESM package is compiled as CommonJS: its default export is one level down.
    const inner = (mod.default as { default?: unknown } | undefined)?.default;
    if (typeof mod.default !== 'function' && typeof inner === 'function') return inner as UserFunction;
    if (typeof mod.default !== 'function') {
      throw new FunctionLoadError(WorkerRuntimeErrorCode.FUNCTION_INVALID, {
        ...fields,
        message: `${file} does not default-export a function`,
      });
    }
    return mod.default as UserFunction;
  }
}
