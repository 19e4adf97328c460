// The page's files as shipped (web/dashboard/) and the loader's rules: every file the page and its
// modules reference exists, only known file types directly in the folder are served, and a broken
// installation is one clear error.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_ASSETS_DIR,
  loadDashboardAssets,
} from '../../../../src/services/dashboard/adapters/assets.js';
import { DashboardServerError } from '../../../../src/services/dashboard/errors.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'blockx-assets-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('web/dashboard as shipped', () => {
  const assets = loadDashboardAssets();

  it('has the page, and every file it or a module imports is served', () => {
    const html = assets.page.body.toString();
    const wanted = new Set([...html.matchAll(/(?:src|href)="assets\/([^"]+)"/g)].map((m) => m[1] as string));
    for (const [name, file] of assets.files) {
      if (!name.endsWith('.js')) continue;
      for (const m of file.body.toString().matchAll(/from '\.\/([^']+)'/g)) wanted.add(m[1] as string);
    }
    expect(wanted.size).toBeGreaterThan(3);
    for (const name of wanted) expect(assets.files.has(name), name).toBe(true);
  });

  it('has no inline script or style, which the Content-Security-Policy would block', () => {
    const html = assets.page.body.toString();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle=|<style|\son[a-z]+=/i);
    for (const [name, file] of assets.files) {
      if (name.endsWith('.js'))
        expect(file.body.toString(), name).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|eval\(/);
    }
  });

  it('is found from the package root, so dist/ and src/ both reach it', () => {
    expect(DEFAULT_ASSETS_DIR.endsWith('/web/dashboard')).toBe(true);
    expect(readFileSync(path.join(DEFAULT_ASSETS_DIR, 'index.html'), 'utf8')).toContain('<html');
  });
});

describe('loadDashboardAssets', () => {
  it('loads known file types directly in the folder; ignores dotfiles, subfolders and other types', () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'index.html'), '<html></html>');
    writeFileSync(path.join(dir, 'a.js'), 'export {};');
    writeFileSync(path.join(dir, '.secret.js'), 'x');
    writeFileSync(path.join(dir, 'notes.txt'), 'x');
    mkdirSync(path.join(dir, 'sub.js'));
    const assets = loadDashboardAssets(dir);
    expect([...assets.files.keys()]).toEqual(['a.js']);
    expect(assets.files.get('a.js')?.etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
  });

  it('a missing folder or page is DASHBOARD_ASSETS_MISSING naming the folder', () => {
    const empty = tempDir();
    for (const dir of [path.join(empty, 'nope'), empty]) {
      let caught: unknown;
      try {
        loadDashboardAssets(dir);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(DashboardServerError);
      expect(caught).toMatchObject({ code: 'DASHBOARD_ASSETS_MISSING', where: dir });
      expect((caught as Error).message).toContain(dir);
    }
  });
});
