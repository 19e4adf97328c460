import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SocketPathInUseError, SocketPathTooLongError } from '../../../src/executor/errors.js';
import {
  checkSocketPath,
  clearStaleSocket,
  listenOnSocket,
  MAX_SOCKET_PATH_BYTES,
  unlinkOwnSocket,
} from '../../../src/executor/socket-path.js';

let dir: string;
const servers: Server[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'bx-sock-'));
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  rmSync(dir, { recursive: true, force: true });
});

describe('socket paths', () => {
  it('refuses a path longer than sun_path allows, counting bytes not characters', () => {
    expect(() => checkSocketPath(`/${'a'.repeat(MAX_SOCKET_PATH_BYTES - 1)}`)).not.toThrow();
    expect(() => checkSocketPath(`/${'a'.repeat(MAX_SOCKET_PATH_BYTES)}`)).toThrow(SocketPathTooLongError);
    expect(() => checkSocketPath(`/${'é'.repeat(54)}`)).toThrow(/109 bytes/);
  });

  it('takes over a stale socket file (its owner died, nothing listens)', async () => {
    const path = join(dir, 'stale.sock');
    // A process that binds and dies at once leaves its socket file behind (a clean close would unlink it).
    spawnSync(process.execPath, [
      '-e',
      `require('node:net').createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, 'SIGKILL'))`,
    ]);
    expect(lstatSync(path).isSocket()).toBe(true);
    const server = createServer();
    servers.push(server);
    const identity = await listenOnSocket(server, path);
    expect(identity).toMatchObject({ path, ino: lstatSync(path).ino });
  });

  it('refuses a path where a live listener answers', async () => {
    const path = join(dir, 'live.sock');
    const live = createServer();
    servers.push(live);
    await listenOnSocket(live, path);
    await expect(clearStaleSocket(path)).rejects.toMatchObject({ reason: 'live-listener' });
  });

  it('refuses to delete something that is not a socket', async () => {
    const path = join(dir, 'file.sock');
    writeFileSync(path, 'precious');
    await expect(clearStaleSocket(path)).rejects.toBeInstanceOf(SocketPathInUseError);
    expect(existsSync(path)).toBe(true);
  });

  it('unlinks only the socket file it created', async () => {
    const path = join(dir, 'own.sock');
    const s = createServer();
    servers.push(s);
    const identity = await listenOnSocket(s, path);
    // A different file now sits at the path: it is not ours to remove.
    rmSync(path);
    writeFileSync(path, 'successor');
    await unlinkOwnSocket(identity);
    expect(existsSync(path)).toBe(true);
  });
});
