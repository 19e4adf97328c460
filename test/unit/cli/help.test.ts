// Every command's --help ends with examples (src/cli/help-examples.ts), run in-process through main().
import { describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { failureText, oneLine, ONE_LINE_MAX } from '../../../src/cli/commands/submit.js';
import type { CliIo } from '../../../src/cli/io.js';

async function help(args: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const io: CliIo = {
    stdout: (s) => void (out += s),
    stderr: (s) => void (out += s),
    env: {},
    cwd: () => process.cwd(),
    isTTY: false,
  };
  const code = await main([...args, '--help'], io);
  return { code, out };
}

const COMMANDS = [
  [],
  ['up'],
  ['coordinator'],
  ['worker'],
  ['executor'],
  ['submit'],
  ['backfill'],
  ['ingest'],
  ['status'],
  ['validate'],
  ['plugins'],
  ['config'],
  ['data'],
  ['data', 'generate'],
  ['data', 'load'],
  ['db'],
  ['db', 'migrate'],
  ['certs'],
];

describe('--help', () => {
  it.each(COMMANDS)('blockx %s --help has examples of itself', async (...args: string[]) => {
    const r = await help(args);
    expect(r.code).toBe(0);
    const examples = r.out.slice(r.out.indexOf('\nExamples:\n'));
    expect(r.out).toContain('\nExamples:\n');
    expect(examples).toContain(`blockx ${args.join(' ')}`.trim());
    // Once only: a command with its own examples keeps them instead.
    expect(r.out.split('Examples:').length).toBe(2);
  });

  it('the client commands name the connect timeout and COORDINATOR_LISTEN', async () => {
    for (const cmd of ['submit', 'status', 'backfill', 'ingest']) {
      const r = await help([cmd]);
      expect(r.out).toContain('--connect-timeout <ms>');
      expect(r.out).toContain('COORDINATOR_LISTEN');
    }
  });
});

describe('failure lines', () => {
  it('oneLine keeps the head and the end of a long message (the `available:` list survives)', () => {
    const message = `function "x" not found in ${'/very/long/path'.repeat(100)}; available: a, b, c`;
    const line = oneLine(message);
    expect(line.length).toBeLessThanOrEqual(ONE_LINE_MAX);
    expect(line.startsWith('function "x" not found in /very/long/path')).toBe(true);
    expect(line.endsWith('; available: a, b, c')).toBe(true);
    expect(line).toContain(' … ');
    expect(oneLine('short\n  message')).toBe('short message');
  });

  it('failureText puts the stack frames of a failure on their own indented lines', () => {
    expect(
      failureText('call c (f) failed: user: boom\n    at f (/fn/f.ts:2:9)\n    at g (/fn/f.ts:5:1)'),
    ).toBe('call c (f) failed: user: boom\n    at f (/fn/f.ts:2:9)\n    at g (/fn/f.ts:5:1)\n');
    expect(failureText('')).toBe('-\n');
  });

  it("the README's command row of `blockx up` names every option of `blockx up --help` (issue 33)", async () => {
    const { readFileSync } = await import('node:fs');
    const path = await import('node:path');
    const readme = readFileSync(path.resolve(import.meta.dirname, '../../../README.md'), 'utf8');
    const row = readme.split('\n').find((l) => l.startsWith('| `blockx up '));
    expect(row).toBeDefined();
    const r = await help(['up']);
    const options = [...r.out.matchAll(/^ {2}(?:-\w, )?(--[a-z-]+)/gm)]
      .map((m) => m[1] as string)
      // --config is every config-reading command's, --help every command's: the table does not repeat them.
      .filter((o) => o !== '--config' && o !== '--help');
    expect(options).toEqual(expect.arrayContaining(['--listen', '--once', '--dashboard']));
    for (const option of options) expect(row, option).toContain(option);
  });
});
