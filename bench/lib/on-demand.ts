// Peers that are not dependencies of BlockX (BullMQ, ioredis, Piscina) are installed on demand into
// bench/.work/ (gitignored) with `npm install --prefix`, only when a benchmark runs, never in npm test.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

export const REPO = path.resolve(import.meta.dirname, '..', '..');
export const WORK = path.join(REPO, 'bench', '.work');

/** Installs `name@version` for each spec missing from bench/.work, then returns a require rooted there. */
export function installOnDemand(specs: readonly { name: string; version: string }[]): NodeJS.Require {
  const installedVersion = (name: string): string | undefined => {
    const pkg = path.join(WORK, 'node_modules', name, 'package.json');
    if (!existsSync(pkg)) return undefined;
    return (createRequire(path.join(WORK, 'package.json'))(pkg) as { version?: string }).version;
  };
  const missing = specs.filter((s) => installedVersion(s.name) !== s.version);
  if (missing.length > 0) {
    mkdirSync(WORK, { recursive: true });
    const list = missing.map((s) => `${s.name}@${s.version}`);
    console.error(`installing ${list.join(' ')} into ${path.relative(REPO, WORK)}/ (once) ...`);
    execFileSync('npm', ['install', '--prefix', WORK, '--no-audit', '--no-fund', ...list], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
  return createRequire(path.join(WORK, 'package.json'));
}
