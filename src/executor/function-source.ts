// The functions directory as files: `<name>.{ts,mjs,js}` at its top level. Names are identifiers
// (letters, digits, `_`, `-`), so `x.d.ts`, `x.test.ts` and dotfiles are not functions.
// Listing stats every file (cheap); contents are read only when the code view sees a change.

import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseFunctionFileName } from './core/function-resolution.js';
import { FunctionsDirError } from './errors.js';

// The naming rule is the resolver's (core/function-resolution.ts): one rule for every runner.
export {
  FUNCTION_EXTENSIONS,
  parseFunctionFileName,
  type FunctionExtension,
} from './core/function-resolution.js';

export interface FunctionFileStat {
  readonly name: string;
  readonly fileName: string;
  readonly path: string;
  readonly size: number;
  readonly mtimeNs: bigint;
  readonly ctimeNs: bigint;
  readonly ino: bigint;
}

export interface FunctionListing {
  /** Sorted by file name. */
  readonly files: readonly FunctionFileStat[];
  /** Changes whenever a file is added, removed, or rewritten (size, mtime, ctime or inode). */
  readonly signature: string;
}

/**
 * Stat every function file of `dir`. Throws FunctionsDirError when the directory cannot be read.
 * `parse` decides which file names are functions (default: the JS rule; the Worker's code view also
 * lists Python files, docs/executor.md § Python functions on a Worker).
 */
export async function listFunctionFiles(
  dir: string,
  parse: (fileName: string) => { readonly name: string } | null = parseFunctionFileName,
): Promise<FunctionListing> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (err) {
    throw new FunctionsDirError(dir, { cause: err });
  }
  const candidates = entries.filter((f) => parse(f) !== null).sort();
  const stats = await Promise.all(
    candidates.map(async (fileName): Promise<FunctionFileStat | null> => {
      const path = join(dir, fileName);
      try {
        const s = await stat(path, { bigint: true });
        if (!s.isFile()) return null;
        return {
          name: parse(fileName)!.name,
          fileName,
          path,
          size: Number(s.size),
          mtimeNs: s.mtimeNs,
          ctimeNs: s.ctimeNs,
          ino: s.ino,
        };
      } catch {
        return null; // removed between readdir and stat: it is simply not there
      }
    }),
  );
  const files = stats.filter((s): s is FunctionFileStat => s !== null);
  const signature = files.map((f) => `${f.fileName}:${f.size}:${f.mtimeNs}:${f.ctimeNs}:${f.ino}`).join('|');
  return { files, signature };
}

/** Read one function file's source, or null if it vanished since it was listed. */
export async function readFunctionSource(file: FunctionFileStat): Promise<string | null> {
  try {
    return await readFile(file.path, 'utf8');
  } catch {
    return null;
  }
}
