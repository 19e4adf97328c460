// Loads user functions for LocalCallRunner: `functions/<name>.{js,mjs,ts}` default-exporting a function
// (TS through tsx's `tsImport`), cached per code epoch. A failed load is not cached (the file may appear).

import { access } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { FunctionLoadError, WorkerRuntimeErrorCode } from './errors.js';
import { describeError } from './phase-results.js';

export type UserFunction = (ctx: unknown, ...args: unknown[]) => unknown;

const FUNCTION_NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const EXTENSIONS = ['.js', '.mjs', '.ts'] as const;

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
    if (!FUNCTION_NAME.test(name)) {
      throw new FunctionLoadError(WorkerRuntimeErrorCode.FUNCTION_NOT_FOUND, {
        ...fields,
        message: 'is not a valid function name',
      });
    }
    let file: string | undefined;
    for (const ext of EXTENSIONS) {
      const candidate = path.join(this.dir, name + ext);
      if (await exists(candidate)) {
        file = candidate;
        break;
      }
    }
    if (file === undefined) {
      throw new FunctionLoadError(WorkerRuntimeErrorCode.FUNCTION_NOT_FOUND, {
        ...fields,
        message: `no ${name}.{js,mjs,ts}`,
      });
    }
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

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}
