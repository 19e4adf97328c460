// Reads a functions folder into bundle files: the same files, by the same rule, as a Worker's code view
// reads (src/executor/function-source.ts listFunctionFiles with both languages), so the version
// `blockx functions deploy DIR` prints is the epoch id a Worker serving DIR locally reports.

import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { listFunctionFiles } from '../../executor/function-source.js';
import { parseAnyFunctionFileName } from '../../executor/core/functions-inventory.js';
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
  for (const f of listing.files) files.push({ fileName: f.fileName, source: await readRegularFile(f.path) });
  return files;
}

/**
 * The text of `path`, which must be a regular file and not a symbolic link: a link in the folder could
 * publish any file the deployer can read (a key, a password file) to every Worker, so deploy refuses it
 * (docs/functions-deploy.md § What a bundle holds). Opened with O_NOFOLLOW (a link swapped in after the
 * listing is refused too) and O_NONBLOCK (a FIFO named like a function cannot hang the deploy).
 */
async function readRegularFile(path: string): Promise<string> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new FunctionsStoreError(
      Code.FOLDER_UNREADABLE,
      code === 'ELOOP'
        ? `${path} is a symbolic link: deploy takes regular files only (copy the file into the folder)`
        : `cannot read ${path}`,
      { cause: err },
    );
  }
  try {
    if (!(await handle.stat()).isFile())
      throw new FunctionsStoreError(Code.FOLDER_UNREADABLE, `${path} is not a regular file`);
    return await handle.readFile('utf8');
  } catch (err) {
    if (err instanceof FunctionsStoreError) throw err;
    throw new FunctionsStoreError(Code.FOLDER_UNREADABLE, `cannot read ${path}`, { cause: err });
  } finally {
    await handle.close();
  }
}
