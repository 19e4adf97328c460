// Scratch folders under the OS temp dir for one test file, removed after its last test: outside the
// repository, so nothing there finds this package's node_modules or package.json by walking up.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';

/** Returns a maker of fresh temp folders (`prefix` names them); all are removed after the file's tests. */
export function useTempDirs(): (prefix: string) => string {
  const made: string[] = [];
  afterAll(() => {
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  });
  return (prefix) => {
    const dir = mkdtempSync(path.join(tmpdir(), prefix));
    made.push(dir);
    return dir;
  };
}
