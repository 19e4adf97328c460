// The package's root folder: src/kernel/ (under tsx/vitest) and dist/kernel/ (after the build) are both
// two levels below it, so one relative URL serves both.
import { fileURLToPath } from 'node:url';

export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Absolute path of a file shipped with the package (schemas/, proto/, functions/...). */
export function packagePath(...segments: string[]): string {
  return [PACKAGE_ROOT.replace(/\/$/, ''), ...segments].join('/');
}
