// `--secret-fd N` (src/executor/cli-entry.ts; docs/security.md, "The executor socket"): the flag, and
// reading the secret once from the fd, which is closed afterwards.
import { fstatSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withExecutorDefaults } from '../../../src/cli/commands/executor.js';
import { parseExecutorArgs, readSecretOnce } from '../../../src/executor/cli-entry.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'bx-secret-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const fdWith = (text: string): number => {
  const file = join(dir, 'secret');
  writeFileSync(file, text);
  return openSync(file, 'r');
};

describe('--secret-fd', () => {
  it('is a file descriptor number', () => {
    const argv = withExecutorDefaults(['--socket', 's'], {});
    expect(parseExecutorArgs([...argv, '--secret-fd', '3']).secretFd).toBe(3);
    expect(parseExecutorArgs(argv).secretFd).toBeUndefined();
    expect(() => parseExecutorArgs([...argv, '--secret-fd', 'three'])).toThrow(
      /--secret-fd must be a file descriptor number/,
    );
  });

  it('reads the secret to the end of input, trims it, and closes the fd', () => {
    const fd = fdWith(`${'ab'.repeat(32)}\n`);
    expect(readSecretOnce(fd)).toBe('ab'.repeat(32));
    expect(() => fstatSync(fd)).toThrow(/EBADF/);
  });

  it.each([
    ['', /no secret to read/],
    ['two words', /not a secret/],
    ['x'.repeat(2000), /not a secret/],
  ])('refuses %j', (text, message) => {
    const fd = fdWith(text);
    expect(() => readSecretOnce(fd)).toThrow(message);
    expect(() => fstatSync(fd)).toThrow(/EBADF/);
  });
});
