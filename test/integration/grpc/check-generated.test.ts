// The generated types must match the protos; scripts/check-generated.mjs is what CI runs.
import { describe, it, expect } from 'vitest';
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const committed = join(root, 'src', 'generated', 'proto');

function check(dir?: string) {
  const args = [join(root, 'scripts', 'check-generated.mjs'), ...(dir ? [dir] : [])];
  return spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8' });
}

describe('scripts/check-generated.mjs', () => {
  it('passes on the committed src/generated/proto', () => {
    const run = check();
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });

  it('fails, naming the files, when the generated tree is stale', () => {
    const copy = mkdtempSync(join(tmpdir(), 'blockx-stale-'));
    try {
      cpSync(committed, copy, { recursive: true });
      appendFileSync(join(copy, 'worker.ts'), '// hand edit\n');
      writeFileSync(join(copy, 'Leftover.ts'), 'export {};\n');
      rmSync(join(copy, 'blockx', 'worker', 'v1', 'TaskUpdate.ts'));
      const run = check(copy);
      expect(run.status).toBe(1);
      expect(run.stderr).toContain('differs: worker.ts');
      expect(run.stderr).toContain('extra (not generated from proto/): Leftover.ts');
      expect(run.stderr).toContain(`missing: ${join('blockx', 'worker', 'v1', 'TaskUpdate.ts')}`);
      expect(run.stderr).toContain('node scripts/gen-proto.mjs');
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});
