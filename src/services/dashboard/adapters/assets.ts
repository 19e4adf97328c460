// The page's files (web/dashboard/ in the package: plain HTML, ES modules and CSS, no build step),
// read once when the server starts and served from memory. The folder is found from the package root,
// which is two levels above both src/services/ and dist/services/ (kernel/package-root.ts), so `npm
// start` in the repository and an installed package find the same files; tsc never has to copy them.
//
// Only regular files directly in the folder with a known extension are loaded (no subfolders, no
// dotfiles), each at most MAX_ASSET_BYTES: the route table (core/routes.ts) can name nothing else.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { packagePath } from '../../../kernel/package-root.js';
import { CONTENT_TYPES } from '../core/http-rules.js';
import { DashboardErrorCode, DashboardServerError } from '../errors.js';

/** Where the page's files are shipped. */
export const DEFAULT_ASSETS_DIR = packagePath('web', 'dashboard');
const MAX_ASSET_BYTES = 1024 * 1024;
const MAX_ASSETS = 64;
const PAGE = 'index.html';

export interface Asset {
  readonly body: Buffer;
  readonly contentType: string;
  /** A strong validator of the contents (If-None-Match → 304). */
  readonly etag: string;
}

export interface DashboardAssets {
  /** index.html. */
  readonly page: Asset;
  /** Every other file, by name (served at /assets/<name>). */
  readonly files: ReadonlyMap<string, Asset>;
}

export function loadDashboardAssets(dir: string = DEFAULT_ASSETS_DIR): DashboardAssets {
  const missing = (why: string, cause?: unknown): DashboardServerError =>
    new DashboardServerError(
      DashboardErrorCode.DASHBOARD_ASSETS_MISSING,
      dir,
      `dashboard files not found in ${dir} (${why}): the installation is incomplete; reinstall blockx`,
      cause === undefined ? undefined : { cause },
    );
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch (err) {
    throw missing((err as Error).message, err);
  }
  const files = new Map<string, Asset>();
  let page: Asset | undefined;
  for (const name of names) {
    const contentType = CONTENT_TYPES[path.extname(name)];
    if (contentType === undefined || name.startsWith('.')) continue;
    const file = path.join(dir, name);
    let body: Buffer;
    try {
      const stat = statSync(file);
      if (!stat.isFile()) continue;
      if (stat.size > MAX_ASSET_BYTES) throw new Error(`${name} is larger than ${MAX_ASSET_BYTES} bytes`);
      body = readFileSync(file);
    } catch (err) {
      throw missing((err as Error).message, err);
    }
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    const asset = { body, contentType, etag };
    if (name === PAGE) page = asset;
    else files.set(name, asset);
    if (files.size > MAX_ASSETS) throw missing(`more than ${MAX_ASSETS} files`);
  }
  if (page === undefined) throw missing(`no ${PAGE}`);
  return { page, files };
}
