// Which Unix user the Executors run as (`executor.user`, docs/security.md § Executors as their own user).
//
// Pure: the caller reads /etc/passwd and stats the paths (adapters/executor-user.ts); this file decides.
//
// - `''` (or the Worker's own user): the Executors run as the Worker's user, as before.
// - a name or `UID:GID`: they run as that user; a user that does not exist, or that cannot reach the
//   files an Executor needs (its package, the functions folder), is a config error: the Worker does not
//   start rather than run functions as root against the operator's word.
// - `auto` (the default): as root, the unprivileged `nobody` when it can reach those files, else the
//   Worker's user with one warning naming the path and its mode, what that exposes and each way out
//   (rootFallbackWarning); as any other user, that user.

/** A passwd entry: what `uid`/`gid` spawn options and chown need. */
export interface UnixUser {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
}

/** What `executor.user: auto` drops to when the Worker runs as root. */
export const AUTO_EXECUTOR_USER = 'nobody';

/** `name:x:uid:gid:...` lines of /etc/passwd; malformed lines are skipped. */
export function parsePasswd(text: string): UnixUser[] {
  const users: UnixUser[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const [name, , uid, gid] = line.split(':');
    if (!name || uid === undefined || gid === undefined) continue;
    if (!/^\d+$/.test(uid) || !/^\d+$/.test(gid)) continue;
    users.push({ name, uid: Number(uid), gid: Number(gid) });
  }
  return users;
}

/** A user by name, or `UID:GID` numbers (a name-less id, e.g. in a container without that entry). */
export function findUser(spec: string, users: readonly UnixUser[]): UnixUser | undefined {
  const ids = /^(\d+):(\d+)$/.exec(spec);
  if (ids) return { name: spec, uid: Number(ids[1]), gid: Number(ids[2]) };
  return users.find((u) => u.name === spec);
}

/** The part of a stat an access check needs. */
export interface PathMode {
  readonly path: string;
  readonly mode: number;
  readonly uid: number;
  readonly gid: number;
  readonly isDirectory: boolean;
}

/** The permission bits (r=4, w=2, x=1) `who` gets on `p`: owner, group or other, as the kernel picks. */
function bitsFor(p: PathMode, who: UnixUser): number {
  if (who.uid === 0) return 7;
  if (p.uid === who.uid) return (p.mode >> 6) & 7;
  if (p.gid === who.gid) return (p.mode >> 3) & 7;
  return p.mode & 7;
}

/**
 * Why `who` cannot read `chain`'s last entry, or undefined when it can. `chain` is the path's ancestors
 * from `/` down to the path itself, each stat'ed; every ancestor needs search (x), the target needs
 * read (and search too when it is a folder). Only the primary group counts (the Executor is spawned
 * with no supplementary groups).
 */
export function unreachableBecause(chain: readonly PathMode[], who: UnixUser): string | undefined {
  for (let i = 0; i < chain.length; i++) {
    const p = chain[i]!;
    const bits = bitsFor(p, who);
    const last = i === chain.length - 1;
    const mode = `mode ${(p.mode & 0o777).toString(8).padStart(4, '0')}, owner ${p.uid}:${p.gid}`;
    if (p.isDirectory && (bits & 1) === 0) return `${who.name} cannot enter ${p.path} (${mode})`;
    if (last && (bits & 4) === 0) return `${who.name} cannot read ${p.path} (${mode})`;
  }
  return undefined;
}

/**
 * Why `who` cannot create files in the folder `chain` ends with (search on every ancestor, write and
 * search on the folder itself), or undefined when it can.
 */
export function unwritableBecause(chain: readonly PathMode[], who: UnixUser): string | undefined {
  for (let i = 0; i < chain.length; i++) {
    const p = chain[i]!;
    const bits = bitsFor(p, who);
    const mode = `mode ${(p.mode & 0o777).toString(8).padStart(4, '0')}, owner ${p.uid}:${p.gid}`;
    if ((bits & 1) === 0) return `${who.name} cannot enter ${p.path} (${mode})`;
    if (i === chain.length - 1 && (bits & 2) === 0) return `${who.name} cannot write in ${p.path} (${mode})`;
  }
  return undefined;
}

/**
 * The one warning of `auto` falling back to root: what that means, why, and each way out, the
 * least-privilege one first (docs/security.md § Executors as their own user, "Under /root").
 */
export function rootFallbackWarning(why: string): string {
  return (
    `executors run as root, so functions can read the Worker's keys, storage and environment, and signal it: ${why}. ` +
    `To run them unprivileged, give a group of their own search on the folders above the project and read on it ` +
    `(e.g. chgrp 64123 /root && chmod 0710 /root; chgrp -R 64123 PROJECT && chmod -R g+rX PROJECT) and set ` +
    `executor.user: "65534:64123"; or move the project under /srv or /opt; or set executor.user to a user that can ` +
    `read it. To keep root on purpose and drop this warning, set executor.user: "" ` +
    `(docs/security.md § Executors as their own user)`
  );
}

export type ExecutorUserDecision =
  | { readonly kind: 'same' }
  | { readonly kind: 'drop'; readonly user: UnixUser }
  | { readonly kind: 'same-with-warning'; readonly warning: string }
  | { readonly kind: 'error'; readonly message: string };

export interface ExecutorUserInput {
  /** `executor.user`. */
  readonly setting: string;
  /** The Worker's own uid. */
  readonly selfUid: number;
  readonly users: readonly UnixUser[];
  /** Why the candidate cannot reach what an Executor needs (unreachableBecause over each path), or undefined. */
  readonly reach: (who: UnixUser) => string | undefined;
}

/** The user the Executors run as, from `executor.user` (see the header). */
export function decideExecutorUser(input: ExecutorUserInput): ExecutorUserDecision {
  const setting = input.setting.trim();
  if (setting === '') return { kind: 'same' };
  if (setting === 'auto') {
    if (input.selfUid !== 0) return { kind: 'same' };
    const user = findUser(AUTO_EXECUTOR_USER, input.users);
    if (user === undefined)
      return {
        kind: 'same-with-warning',
        warning: rootFallbackWarning(`there is no user "${AUTO_EXECUTOR_USER}" to drop to`),
      };
    const why = input.reach(user);
    if (why === undefined) return { kind: 'drop', user };
    return { kind: 'same-with-warning', warning: rootFallbackWarning(why) };
  }
  const user = findUser(setting, input.users);
  if (user === undefined)
    return {
      kind: 'error',
      message: `executor.user: no user "${setting}" (a name in /etc/passwd, or UID:GID)`,
    };
  if (user.uid === input.selfUid) return { kind: 'same' };
  if (input.selfUid !== 0)
    return {
      kind: 'error',
      message: `executor.user: "${setting}" needs the Worker to run as root (it runs as uid ${input.selfUid}); leave executor.user empty or auto`,
    };
  const why = input.reach(user);
  if (why !== undefined) return { kind: 'error', message: `executor.user: ${why}` };
  return { kind: 'drop', user };
}
