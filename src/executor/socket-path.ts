// Unix socket path hygiene, shared by the Worker (which listens) and the Executor (which connects).
//
// - Linux `sun_path` holds 108 bytes including the NUL, and Node truncates silently: check first.
// - A socket file left by a dead process makes listen fail with EADDRINUSE. We take the path over only
//   when it is a socket and nothing answers on it (ECONNREFUSED): a stale socket of ours. A live
//   listener, or anything that is not a socket, is left alone and reported.
// - On close we unlink only the file we created (same device and inode), never a successor's.
// - The socket is the Worker's private channel to its Executor (docs/security.md, "The executor
//   socket"): it lives in a directory of its own created 0700 (`makePrivateSocketDir`), and the file is
//   chmod 0600 right after listen, whatever the umask. The directory closes the window between bind
//   (the file gets umask bits) and chmod; the chmod keeps the file private if the directory is not.

import { chmod, lstat, mkdir, mkdtemp, rm, unlink } from 'node:fs/promises';
import { connect, type Server } from 'node:net';
import { join } from 'node:path';
import { SocketPathInUseError, SocketPathTooLongError } from './errors.js';

/** Longest usable path in bytes (108 minus the terminating NUL). */
export const MAX_SOCKET_PATH_BYTES = 107;

export function checkSocketPath(path: string): void {
  const bytes = Buffer.byteLength(path);
  if (bytes > MAX_SOCKET_PATH_BYTES) throw new SocketPathTooLongError(path, bytes, MAX_SOCKET_PATH_BYTES);
}

/** Identity of a socket file we created, so we only ever remove our own. */
export interface SocketFileIdentity {
  readonly path: string;
  readonly dev: number;
  readonly ino: number;
}

/** Make `path` free for listen: remove a stale socket, refuse a live one or a non-socket. */
export async function clearStaleSocket(path: string): Promise<void> {
  checkSocketPath(path);
  let st;
  try {
    st = await lstat(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  if (!st.isSocket()) throw new SocketPathInUseError(path, 'not-a-socket');
  const live = await new Promise<boolean>((resolve) => {
    const probe = connect(path);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
  if (live) throw new SocketPathInUseError(path, 'live-listener');
  await unlink(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
}

/** Listen on `path` (after clearing a stale socket) and record the file's identity. */
export async function listenOnSocket(server: Server, path: string): Promise<SocketFileIdentity> {
  await clearStaleSocket(path);
  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once('error', onError);
    server.listen(path, () => {
      server.off('error', onError);
      resolve();
    });
  });
  await chmod(path, 0o600);
  const st = await lstat(path);
  return { path, dev: st.dev, ino: st.ino };
}

/** File name of the socket inside its private directory. */
export const SOCKET_FILE_NAME = 'executor.sock';

/** A directory only this user can enter, made under `parent`, and the socket path inside it. */
export interface PrivateSocketDir {
  readonly dir: string;
  readonly socketPath: string;
}

/** `<parent>/bx-XXXXXX/executor.sock`, the directory created with mode 0700 (the length checked first). */
export async function makePrivateSocketDir(parent: string): Promise<PrivateSocketDir> {
  // mkdtemp appends six characters to the prefix: check the final length before creating anything.
  checkSocketPath(join(parent, 'bx-XXXXXX', SOCKET_FILE_NAME));
  await mkdir(parent, { recursive: true });
  const dir = await mkdtemp(join(parent, 'bx-'));
  await chmod(dir, 0o700); // mkdtemp already uses 0700; say so explicitly rather than rely on it
  return { dir, socketPath: join(dir, SOCKET_FILE_NAME) };
}

/** Remove a directory made by `makePrivateSocketDir` (and anything left in it). */
export async function removePrivateSocketDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/** Remove the socket file if it is still the one we created. */
export async function unlinkOwnSocket(identity: SocketFileIdentity): Promise<void> {
  try {
    const st = await lstat(identity.path);
    if (st.isSocket() && st.dev === identity.dev && st.ino === identity.ino) await unlink(identity.path);
  } catch {
    // gone already
  }
}
