// Unloadable configs are ConfigErrors naming the file (the CLI maps them to exit 2), never a raw throw.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_CONFIG_BYTES, parseConfigText, readConfigSource } from '../../../src/kernel/config-source.js';
import { ConfigError } from '../../../src/kernel/errors.js';

const dir = mkdtempSync(path.join(tmpdir(), 'blockx-config-limits-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function issueOf(fn: () => unknown): { file?: string; message: string } {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    const issues = (err as ConfigError).issues;
    expect(issues).toHaveLength(1);
    return issues[0]!;
  }
  throw new Error('expected a ConfigError');
}

describe('config loading limits', () => {
  it('an alias bomb is a ConfigError naming the file', () => {
    let text = 'a: &a [x, x, x, x, x, x, x, x, x]\n';
    const names = 'abcdefgh';
    for (let i = 1; i < names.length; i++) {
      text += `${names[i]}: &${names[i]} [${Array(9)
        .fill(`*${names[i - 1]}`)
        .join(', ')}]\n`;
    }
    expect(issueOf(() => parseConfigText(text, '/x/bomb.yaml'))).toMatchObject({
      file: '/x/bomb.yaml',
      message: expect.stringMatching(/^YAML cannot be expanded: .*alias/i),
    });
  });

  it('a file above MAX_CONFIG_BYTES is refused before it is read', () => {
    const file = path.join(dir, 'big.yaml');
    writeFileSync(file, Buffer.alloc(MAX_CONFIG_BYTES + 1, '#'));
    expect(issueOf(() => readConfigSource(file))).toMatchObject({
      file,
      message: `config file is ${MAX_CONFIG_BYTES + 1} bytes, above the limit of ${MAX_CONFIG_BYTES} (10 MiB)`,
    });
  });

  it('an unreadable path (a directory) is a ConfigError too', () => {
    expect(issueOf(() => readConfigSource(dir))).toMatchObject({
      file: dir,
      message: expect.stringMatching(/^config file cannot be read: /),
    });
  });

  it('a file exactly at the bound still loads', () => {
    const file = path.join(dir, 'at-bound.yaml');
    const head = 'version: 1\n';
    writeFileSync(file, head + '#'.repeat(MAX_CONFIG_BYTES - head.length));
    expect(readConfigSource(file).value).toEqual({ version: 1 });
  });
});
