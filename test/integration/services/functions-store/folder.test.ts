// `blockx functions deploy` reads the folder (src/services/functions-store/folder.ts): regular files
// only. A symbolic link named like a function (here: to a private key) is refused, naming the link, so
// it can never publish the file it points at; a FIFO named like a function cannot hang the read.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readFunctionsFolder } from '../../../../src/services/functions-store/folder.js';

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function folder(): string {
  dir = mkdtempSync(path.join(tmpdir(), 'blockx-folder-'));
  writeFileSync(path.join(dir, 'probe.ts'), 'export default () => 1;\n');
  return dir;
}

describe('reading a functions folder for a deploy', () => {
  it('takes the regular function files', async () => {
    expect(await readFunctionsFolder(folder())).toEqual([
      { fileName: 'probe.ts', source: 'export default () => 1;\n' },
    ]);
  });

  it('refuses a symbolic link named like a function, without reading its target', async () => {
    const d = folder();
    const secret = path.join(d, '..', `${path.basename(d)}-node-key.pem`);
    writeFileSync(secret, '-----BEGIN PRIVATE KEY-----\nsecret\n');
    try {
      symlinkSync(secret, path.join(d, 'steal.ts'));
      const err = (await readFunctionsFolder(d).then(
        () => new Error('no error'),
        (e: unknown) => e,
      )) as Error & { code: string };
      expect(err).toMatchObject({ code: 'FOLDER_UNREADABLE' });
      expect(err.message).toBe(
        `${path.join(d, 'steal.ts')} is a symbolic link: deploy takes regular files only (copy the file into the folder)`,
      );
      expect(err.message).not.toMatch(/secret/);
    } finally {
      rmSync(secret, { force: true });
    }
  });

  it('leaves out a FIFO named like a function instead of hanging on it', async () => {
    const d = folder();
    execFileSync('mkfifo', [path.join(d, 'pipe.ts')]);
    expect((await readFunctionsFolder(d)).map((f) => f.fileName)).toEqual(['probe.ts']);
  });
});
