import { readFileSync } from 'node:fs';
import { packagePath } from '../kernel/package-root.js';

export function readPackageVersion(): string {
  return (JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string }).version;
}
