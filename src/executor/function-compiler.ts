// Turns one function of one epoch snapshot into the module text an execution unit imports.
//
// TypeScript is compiled with esbuild's `transform` (the compiler tsx itself uses; one esbuild service
// per executor process, in the main thread, so threads never spawn their own); JS/MJS are ES modules
// already. Then the module becomes its instance module (module-factory.ts): one import per thread and
// epoch, one factory call per module instance. The module URL is the function file's real URL plus
// `?blockx-epoch=<id>`: the epoch loader hooks serve the snapshot text for it, so relative imports and
// node_modules resolve from the real location while the function's own code is the pinned snapshot.
//
// Results (and load failures) are cached per (epoch, name) until the epoch is dropped.

import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { EpochSnapshot } from './code-epochs.js';
import { ExecutorErrorCode } from './errors.js';
import { parseFunctionFileName, resolveFunctionFile } from './core/function-resolution.js';
import { instanceModuleSource } from './module-factory.js';

export type CompiledFunction =
  | {
      readonly ok: true;
      readonly moduleKey: string;
      readonly url: string;
      readonly code: string;
      readonly path: string;
    }
  | { readonly ok: false; readonly code: ExecutorErrorCode; readonly message: string };

export const EPOCH_QUERY_PARAM = 'blockx-epoch';

type Transform = (source: string, options: object) => Promise<{ code: string }>;
let esbuildTransform: Promise<Transform> | undefined;
function loadTransform(): Promise<Transform> {
  esbuildTransform ??= import('esbuild').then((m) => m.transform as unknown as Transform);
  return esbuildTransform;
}

export class FunctionCompiler {
  /** epoch → function name → result (or the pending compilation). Nested maps: no key strings per call. */
  private readonly cache = new Map<string, Map<string, CompiledFunction | Promise<CompiledFunction>>>();

  /** The cached result if it is ready (no promise), for the dispatch fast path. */
  peek(epoch: string, name: string): CompiledFunction | undefined {
    const hit = this.cache.get(epoch)?.get(name);
    return hit === undefined || hit instanceof Promise ? undefined : hit;
  }

  compile(snapshot: EpochSnapshot, name: string): CompiledFunction | Promise<CompiledFunction> {
    let byName = this.cache.get(snapshot.id);
    if (!byName) this.cache.set(snapshot.id, (byName = new Map()));
    const hit = byName.get(name);
    if (hit) return hit;
    const entries = byName;
    const pending = compileOne(snapshot, name).then((result) => {
      if (entries.get(name) === pending) entries.set(name, result);
      return result;
    });
    entries.set(name, pending);
    return pending;
  }

  /** Forget an epoch's compiled modules. */
  drop(epoch: string): void {
    this.cache.delete(epoch);
  }
}

async function compileOne(snapshot: EpochSnapshot, name: string): Promise<CompiledFunction> {
  const found = resolveFunctionFile(snapshot.files, name, snapshot.functionsDir, snapshot.id);
  if (!found.ok) return found;
  const file = found.file;
  const path = join(snapshot.functionsDir, file.fileName);
  const url = `${pathToFileURL(path).href}?${EPOCH_QUERY_PARAM}=${snapshot.id}`;
  const moduleKey = `${snapshot.id}/${name}`;
  let js = file.source;
  if (parseFunctionFileName(file.fileName)?.ext === '.ts') {
    try {
      const transform = await loadTransform();
      const out = await transform(file.source, {
        loader: 'ts',
        format: 'esm',
        target: 'node20',
        sourcefile: path,
        sourcemap: 'inline',
      });
      js = out.code;
    } catch (err) {
      return compileFailed(path, formatEsbuildError(err));
    }
  }
  const instances = instanceModuleSource(js);
  if (!instances.ok) return compileFailed(path, instances.message);
  return { ok: true, moduleKey, url, code: instances.code, path };
}

function compileFailed(path: string, why: string): CompiledFunction {
  return {
    ok: false,
    code: ExecutorErrorCode.FUNCTION_LOAD_FAILED,
    message: `cannot compile ${path}: ${why}`,
  };
}

function formatEsbuildError(err: unknown): string {
  const errors = (err as { errors?: { text: string; location?: { line: number; column: number } | null }[] })
    .errors;
  if (Array.isArray(errors) && errors.length > 0) {
    return errors
      .map((e) => (e.location ? `${e.location.line}:${e.location.column + 1}: ${e.text}` : e.text))
      .join('; ');
  }
  return (err as Error)?.message ?? String(err);
}
