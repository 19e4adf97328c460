// Process-level tests of the built `blockx` (bin/blockx.js → dist/) for issue 16, item 7: secrets never
// reach the output, and a config that cannot be loaded is exit 2 with a cause naming the file — never
// "unexpected error" with a stack trace.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const REPO = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(REPO, 'bin/blockx.js');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function blockx(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  const env = { ...process.env };
  for (const k of Object.keys(env))
    if (k.startsWith('COORDINATOR_') || k.startsWith('BLOCKX_') || k === 'ETCD_ENDPOINTS') delete env[k];
  Object.assign(env, opts.env);
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: opts.cwd ?? REPO,
    env,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function scratch(files: Record<string, string | Buffer>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'blockx-secrets-'));
  dirs.push(dir);
  writeFileSync(path.join(dir, 'package.json'), '{"name":"scratch","private":true}');
  for (const [name, body] of Object.entries(files)) writeFileSync(path.join(dir, name), body);
  return dir;
}

const PASSWORD = 'hunter2-Sup3rSecret';

describe('blockx config masks secrets', () => {
  it('masks the password of a storage URL from the file', () => {
    const dir = scratch({
      'blockx.config.yaml': `version: 1\nstorage:\n  url: postgres://app:${PASSWORD}@db.internal:5432/blockx\n`,
    });
    const r = blockx(['config'], { cwd: dir });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('url: postgres://app:***@db.internal:5432/blockx');
    expect(r.stdout).not.toContain(PASSWORD);
  });

  it('masks the password of BLOCKX_STORAGE_URL, and a secret query parameter', () => {
    const dir = scratch({ 'blockx.config.yaml': 'version: 1\n' });
    const r = blockx(['config'], {
      cwd: dir,
      env: {
        BLOCKX_STORAGE_URL: `postgresql://app:${PASSWORD}@db/blockx?sslmode=require&password=${PASSWORD}`,
      },
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('postgresql://app:***@db/blockx?sslmode=require&password=***');
    expect(r.stdout).not.toContain(PASSWORD);
  });

  it('a malformed storage URL in the env is exit 2 without echoing its password', () => {
    const dir = scratch({ 'blockx.config.yaml': 'version: 1\n' });
    const r = blockx(['config'], { cwd: dir, env: { BLOCKX_STORAGE_URL: `mysql://app:${PASSWORD}@db/x` } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('env BLOCKX_STORAGE_URL');
    expect(r.stderr).toContain('mysql://app:***@db/x');
    expect(r.stderr).not.toContain(PASSWORD);
  });
});

describe('an unloadable config is exit 2 with a cause naming the file', () => {
  const expectCleanExit2 = (r: ReturnType<typeof blockx>, file: string, cause: RegExp): void => {
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(file);
    expect(r.stderr).toMatch(cause);
    expect(r.stderr).not.toContain('unexpected error');
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack frame
  };

  it('a YAML alias bomb', () => {
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (const [prev, cur] of [
      ['a', 'b'],
      ['b', 'c'],
      ['c', 'd'],
      ['d', 'e'],
      ['e', 'f'],
      ['f', 'g'],
      ['g', 'h'],
    ]) {
      levels.push(`${cur}: &${cur} [${Array(9).fill(`*${prev}`).join(', ')}]`);
    }
    const dir = scratch({ 'bomb.yaml': `version: 1\n${levels.join('\n')}\n` });
    const file = path.join(dir, 'bomb.yaml');
    expectCleanExit2(blockx(['config', '--config', file], { cwd: dir }), file, /alias/i);
  });

  it('a file above the 10 MiB bound', () => {
    const dir = scratch({ 'big.yaml': Buffer.alloc(11 * 1024 * 1024, '#') });
    const file = path.join(dir, 'big.yaml');
    expectCleanExit2(blockx(['config', '--config', file], { cwd: dir }), file, /above the limit/);
  });

  it('a YAML syntax error', () => {
    const dir = scratch({ 'broken.yaml': 'version: 1\nstorage: [unclosed\n' });
    const file = path.join(dir, 'broken.yaml');
    expectCleanExit2(blockx(['config', '--config', file], { cwd: dir }), file, /YAML syntax error/);
  });
});
