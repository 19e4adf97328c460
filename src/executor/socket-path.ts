// Unix socket path hygiene, shared by the Worker (which listens) and the Executor (which connects).
//
// - Linux `sun_path` holds 108 bytes including the NUL, and Node truncates silently: check first.
// - A socket file left by a dead process makes listen fail with EADDRINUSE. We take the path over only
//   when it is a socket and nothing answers on it (ECONNREFUSED): a stale socket of ours. A live
//   listener, or anything that is not a socket, is left alone and reported.
// - On close we unlink only the file we created (same device and inode), never a successor's.

import { lstat, unlink } from 'node:fs/promises';
import { connect, type Server } from 'node:net';
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
  const st = await lstat(path);
  return { path, dev: st.dev, ino: st.ino };
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
