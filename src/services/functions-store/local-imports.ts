// Which bundled functions import files of the folder that a bundle does not carry (docs/functions-deploy.md
// § What a bundle holds): a relative import in a JS/TS function (`from './x'`, `import('../y')`,
// `require('./z')`), or, in a Python function, a relative import (`from . import x`, `from .x import y`)
// or an absolute one of a module that sits beside it in the folder (`import helpers` with a
// `helpers.py` or `helpers/` there). On a Worker with `functions.source: cluster` those resolve from the
// Worker's own folder, so they are not pinned to the deployed version: `blockx functions deploy` says so.
// Pure, and a heuristic on the text (no parser): it may name an import inside a string or comment.

import type { BundleFile } from './bundle.js';

export interface LocalImport {
  readonly fileName: string;
  /** The specifier as written (`./helpers.js`, `.utils`, `helpers`). */
  readonly specifier: string;
}

const JS_RELATIVE =
  /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)(['"])(\.{1,2}\/[^'"\n]*)\1/g;
const PY_FROM = /^[ \t]*from[ \t]+(\.+[\w.]*|[A-Za-z_][\w.]*)[ \t]+import\b/gm;
const PY_IMPORT = /^[ \t]*import[ \t]+([A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*)/gm;

/**
 * The local imports of `files`, in file order. `siblings` are the names of what else sits in the folder
 * (files and subfolders, as `readdir` lists them), for Python's absolute imports of a sibling module.
 */
export function localImports(files: readonly BundleFile[], siblings: readonly string[]): LocalImport[] {
  const modules = new Set(siblings.map((s) => s.replace(/\.py$/, '')));
  const found: LocalImport[] = [];
  for (const f of files) {
    if (f.fileName.endsWith('.py')) {
      for (const m of f.source.matchAll(PY_FROM)) {
        const spec = m[1]!;
        if (spec.startsWith('.') || modules.has(spec.split('.')[0]!))
          found.push({ fileName: f.fileName, specifier: spec });
      }
      for (const m of f.source.matchAll(PY_IMPORT)) {
        for (const part of m[1]!.split(',')) {
          const spec = part.trim();
          if (modules.has(spec.split('.')[0]!)) found.push({ fileName: f.fileName, specifier: spec });
        }
      }
    } else {
      for (const m of f.source.matchAll(JS_RELATIVE)) found.push({ fileName: f.fileName, specifier: m[2]! });
    }
  }
  return found;
}
