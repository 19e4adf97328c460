// `blockx up` and its dashboard, through the built CLI (bin/blockx.js → dist/): the address printed
// among the others, `--no-dashboard`, and the two ways the address can be refused — in use (one line,
// exit 2) and reachable from other hosts without TLS (exit 2 before any service starts).
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, runBlockx } from '../support/cli.js';

/** A one-machine `blockx up --once` with one worker on free ports and in-memory SQLite. */
const up = (args: string[]) =>
  runBlockx(['up', '--no-demo', '--once', '--workers', '1', '--listen', '127.0.0.1:0', ...args], {
    env: cleanEnv({ BLOCKX_STORAGE_URL: 'sqlite::memory:' }),
    timeoutMs: 50_000,
  });

/** stderr without the services' JSON log lines. */
const lines = (text: string): string[] =>
  text.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('{'));

describe('blockx up and its dashboard', () => {
  it('prints the dashboard URL among its addresses, and none with --no-dashboard', async () => {
    const on = await up([]);
    expect(on.code, on.stderr).toBe(0);
    expect(on.stdout).toMatch(/^dashboard {2}http:\/\/127\.0\.0\.1:\d+\/$/m);
    const off = await up(['--no-dashboard']);
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout).not.toMatch(/dashboard/);
  });

  it('an address other hosts can reach without TLS is exit 2 before any service starts', async () => {
    const r = await up(['--dashboard', '0.0.0.0:0']);
    expect(r.code).toBe(2);
    expect(lines(r.stderr).join('\n')).toMatch(
      /^blockx: --dashboard 0\.0\.0\.0:0 is reachable from other hosts, and TLS is off/,
    );
    expect(r.stdout).not.toMatch(/listening on/);
  });

  it('a malformed --dashboard is a usage error', async () => {
    const r = await up(['--dashboard', 'nope']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--dashboard must be host:port');
  });

  describe('a dashboard port already in use', () => {
    let held: Server | undefined;
    let port = 0;
    beforeAll(async () => {
      held = createServer();
      await new Promise<void>((resolve) => held!.listen(0, '127.0.0.1', resolve));
      port = (held.address() as { port: number }).port;
    });
    afterAll(async () => {
      await new Promise<void>((resolve) => (held ? held.close(() => resolve()) : resolve()));
    });

    it('is exit 2 and one line naming the address, no stack', async () => {
      const r = await up(['--dashboard', `127.0.0.1:${port}`]);
      expect(r.code, r.stderr).toBe(2);
      expect(lines(r.stderr)).toEqual([
        // The flag set the address, so the message names the flag (issue 33, item 8), not the config.
        `blockx: address 127.0.0.1:${port} is already in use (EADDRINUSE): stop the other process or pass another --dashboard address`,
      ]);
      expect(r.stderr).not.toMatch(/^\s+at /m);
    });
  });
});
