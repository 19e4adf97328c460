// The package's root folder: src/kernel/ (under tsx/vitest) and dist/kernel/ (after the build) are both
// two levels below it, so one relative URL serves both.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Absolute path of a file shipped with the package (schemas/, proto/, functions/...). */
export function packagePath(...segments: string[]): string {
  return [PACKAGE_ROOT.replace(/\/$/, ''), ...segments].join('/');
}

/** The package's version (package.json), which the CLI prints and an Executor reports in its Hello. */
export function readPackageVersion(): string {
  return (JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string }).version;
}
