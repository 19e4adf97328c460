// Reads a functions folder into bundle files: the same files, by the same rule, as a Worker's code view
// reads (src/executor/function-source.ts listFunctionFiles with both languages), so the version
// `blockx functions deploy DIR` prints is the epoch id a Worker serving DIR locally reports.

import { readFile } from 'node:fs/promises';
import { listFunctionFiles } from '../../executor/function-source.js';
import { parseAnyFunctionFileName } from '../worker/core/functions-inventory.js';
import type { BundleFile } from './bundle.js';
import { MAX_BUNDLE_FILE_BYTES, MAX_BUNDLE_FILES } from './bundle-limits.js';
import { FunctionsStoreError, FunctionsStoreErrorCode as Code } from './errors.js';

/** The function files of `dir`, sorted; sizes are checked from the stats before anything is read. */
export async function readFunctionsFolder(dir: string): Promise<BundleFile[]> {
  let listing;
  try {
    listing = await listFunctionFiles(dir, parseAnyFunctionFileName);
  } catch (err) {
    throw new FunctionsStoreError(Code.FOLDER_UNREADABLE, `cannot read the functions folder ${dir}`, {
      cause: err,
    });
  }
  if (listing.files.length > MAX_BUNDLE_FILES) {
    throw new FunctionsStoreError(
      Code.BUNDLE_TOO_LARGE,
      `${dir} holds ${listing.files.length} function files; a bundle may hold at most ${MAX_BUNDLE_FILES}`,
      { limit: MAX_BUNDLE_FILES, actual: listing.files.length, unit: 'files' },
    );
  }
  const big = listing.files.find((f) => f.size > MAX_BUNDLE_FILE_BYTES);
  if (big !== undefined) {
    throw new FunctionsStoreError(
      Code.BUNDLE_TOO_LARGE,
      `${big.path} is ${big.size} bytes; one function file may be at most ${MAX_BUNDLE_FILE_BYTES} bytes`,
      { limit: MAX_BUNDLE_FILE_BYTES, actual: big.size, unit: 'bytes' },
    );
  }
  const files: BundleFile[] = [];
  for (const f of listing.files) {
    try {
      files.push({ fileName: f.fileName, source: await readFile(f.path, 'utf8') });
    } catch (err) {
      throw new FunctionsStoreError(Code.FOLDER_UNREADABLE, `cannot read ${f.path}`, { cause: err });
    }
  }
  return files;
}
