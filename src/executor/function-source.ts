// The functions directory as files: `<name>.{ts,mjs,js}` at its top level. Names are identifiers
// (letters, digits, `_`, `-`), so `x.d.ts`, `x.test.ts` and dotfiles are not functions.
// Listing stats every file (cheap); contents are read only when the code view sees a change.

import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { FunctionsDirError } from './errors.js';

export const FUNCTION_EXTENSIONS = ['.ts', '.mjs', '.js'] as const;
export type FunctionExtension = (typeof FUNCTION_EXTENSIONS)[number];

const NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** `hello_world.ts` → `{name: 'hello_world', ext: '.ts'}`; null when the file is not a function. */
export function parseFunctionFileName(fileName: string): { name: string; ext: FunctionExtension } | null {
  for (const ext of FUNCTION_EXTENSIONS) {
    if (fileName.endsWith(ext)) {
      const name = fileName.slice(0, -ext.length);
      return NAME_PATTERN.test(name) ? { name, ext } : null;
    }
  }
  return null;
}

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

/** Stat every function file of `dir`. Throws FunctionsDirError when the directory cannot be read. */
export async function listFunctionFiles(dir: string): Promise<FunctionListing> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (err) {
    throw new FunctionsDirError(dir, { cause: err });
  }
  const candidates = entries.filter((f) => parseFunctionFileName(f) !== null).sort();
  const stats = await Promise.all(
    candidates.map(async (fileName): Promise<FunctionFileStat | null> => {
      const path = join(dir, fileName);
      try {
        const s = await stat(path, { bigint: true });
        if (!s.isFile()) return null;
        return {
          name: parseFunctionFileName(fileName)!.name,
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
