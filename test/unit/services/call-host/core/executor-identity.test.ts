import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decideExecutorUser,
  findUser,
  parsePasswd,
  unreachableBecause,
  unwritableBecause,
  type PathMode,
  type UnixUser,
} from '../../../../../src/services/call-host/core/executor-identity.js';

const PASSWD = `root:x:0:0:root:/root:/bin/bash
# a comment
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
broken line
app:x:1000:1000::/home/app:/bin/sh
bad:x:12a:1::/:/bin/sh
`;
const USERS = parsePasswd(PASSWD);
const nobody: UnixUser = { name: 'nobody', uid: 65534, gid: 65534 };
const app: UnixUser = { name: 'app', uid: 1000, gid: 1000 };

const dir = (path: string, mode: number, uid = 0, gid = 0): PathMode => ({
  path,
  mode,
  uid,
  gid,
  isDirectory: true,
});
const file = (path: string, mode: number, uid = 0, gid = 0): PathMode => ({
  path,
  mode,
  uid,
  gid,
  isDirectory: false,
});

describe('parsePasswd / findUser', () => {
  it('reads name, uid and gid, skipping comments and malformed lines', () => {
    expect(USERS).toEqual([{ name: 'root', uid: 0, gid: 0 }, nobody, app]);
  });
  it.each([
    ['nobody', nobody],
    ['64123:64124', { name: '64123:64124', uid: 64123, gid: 64124 }],
    ['ghost', undefined],
    ['12:', undefined],
  ])('findUser(%s)', (spec, want) => {
    expect(findUser(spec, USERS)).toEqual(want);
  });
});

describe('unreachableBecause', () => {
  it.each([
    [
      'a world-readable tree',
      [dir('/', 0o755), dir('/srv', 0o755), file('/srv/f.ts', 0o644)],
      nobody,
      undefined,
    ],
    [
      'a 0700 ancestor',
      [dir('/', 0o755), dir('/root', 0o700), dir('/root/app', 0o755)],
      nobody,
      'nobody cannot enter /root (mode 0700, owner 0:0)',
    ],
    [
      'an unreadable file',
      [dir('/', 0o755), file('/k', 0o600)],
      nobody,
      'nobody cannot read /k (mode 0600, owner 0:0)',
    ],
    [
      'a search-only folder as target',
      [dir('/', 0o755), dir('/d', 0o711)],
      nobody,
      'nobody cannot read /d (mode 0711, owner 0:0)',
    ],
    ['owner bits for the owner', [dir('/', 0o755), dir('/home/app', 0o700, 1000, 1000)], app, undefined],
    ['group bits for the primary group', [dir('/', 0o755), dir('/g', 0o750, 0, 1000)], app, undefined],
    [
      'owner bits win over other bits',
      [dir('/', 0o755), file('/o', 0o077, 1000, 0)],
      app,
      'app cannot read /o (mode 0077, owner 1000:0)',
    ],
  ] as const)('%s', (_name, chain, who, want) => {
    expect(unreachableBecause(chain, who)).toBe(want);
  });

  it('a chain is reachable only if every ancestor has x for the user and the target has r', () => {
    const bits = fc.integer({ min: 0, max: 0o777 });
    fc.assert(
      fc.property(fc.array(bits, { minLength: 1, maxLength: 5 }), bits, (dirModes, fileMode) => {
        const chain = [...dirModes.map((m, i) => dir(`/d${i}`, m)), file('/f', fileMode)];
        const expected = dirModes.every((m) => (m & 1) !== 0) && (fileMode & 4) !== 0;
        expect(unreachableBecause(chain, nobody) === undefined).toBe(expected);
      }),
    );
  });
});

describe('unwritableBecause (the folder of EXECUTOR_CPU_PROFILE / EXECUTOR_TRACE)', () => {
  it.each([
    ['/tmp (1777)', [dir('/', 0o755), dir('/tmp', 0o1777)], undefined],
    [
      'a root-owned 0755 folder',
      [dir('/', 0o755), dir('/prof', 0o755)],
      'nobody cannot write in /prof (mode 0755, owner 0:0)',
    ],
    [
      'a 0700 ancestor',
      [dir('/', 0o755), dir('/root', 0o700), dir('/root/p', 0o777)],
      'nobody cannot enter /root (mode 0700, owner 0:0)',
    ],
    ['its own folder', [dir('/', 0o755), dir('/p', 0o700, 65534, 65534)], undefined],
  ] as const)('%s', (_name, chain, want) => {
    expect(unwritableBecause(chain, nobody)).toBe(want);
  });
});

describe('decideExecutorUser', () => {
  const reachable = () => undefined;
  const unreachable = (who: UnixUser) => `${who.name} cannot enter /root (mode 0700, owner 0:0)`;
  it.each([
    ['empty: the Worker’s user', '', 0, reachable, { kind: 'same' }],
    ['auto as a non-root user', 'auto', 1000, reachable, { kind: 'same' }],
    ['auto as root, reachable: nobody', 'auto', 0, reachable, { kind: 'drop', user: nobody }],
    ['a named user as root', 'app', 0, reachable, { kind: 'drop', user: app }],
    ['the Worker’s own user by name', 'app', 1000, reachable, { kind: 'same' }],
  ] as const)('%s', (_name, setting, selfUid, reach, want) => {
    expect(decideExecutorUser({ setting, selfUid, users: USERS, reach })).toEqual(want);
  });

  it('auto as root with the files out of reach warns and keeps the Worker’s user', () => {
    const d = decideExecutorUser({ setting: 'auto', selfUid: 0, users: USERS, reach: unreachable });
    expect(d).toMatchObject({
      kind: 'same-with-warning',
      warning: expect.stringContaining('cannot enter /root'),
    });
  });
  it('the warning says what running as root exposes, and each way out, root on purpose last', () => {
    const d = decideExecutorUser({ setting: 'auto', selfUid: 0, users: USERS, reach: unreachable });
    const warning = d.kind === 'same-with-warning' ? d.warning : '';
    expect(warning).toMatch(
      /^executors run as root, so functions can read the Worker's keys.*cannot enter \/root/,
    );
    expect(warning).toContain('executor.user: "65534:64123"');
    expect(warning).toContain('executor.user: ""');
  });

  it('the least-privilege recipe of the warning passes the check: a group with search on /root and read on the project', () => {
    const exec: UnixUser = { name: '65534:64123', uid: 65534, gid: 64123 };
    const before = [dir('/', 0o755), dir('/root', 0o700), dir('/root/p', 0o700), file('/root/p/f.ts', 0o600)];
    expect(unreachableBecause(before, exec)).toBe('65534:64123 cannot enter /root (mode 0700, owner 0:0)');
    // chgrp 64123 /root && chmod 0710 /root; chgrp -R 64123 /root/p && chmod -R g+rX /root/p
    const after = [
      dir('/', 0o755),
      dir('/root', 0o710, 0, 64123),
      dir('/root/p', 0o750, 0, 64123),
      file('/root/p/f.ts', 0o640, 0, 64123),
    ];
    expect(unreachableBecause(after, exec)).toBeUndefined();
    // Nobody else gains anything: other users still cannot enter /root.
    expect(unreachableBecause(after, nobody)).toBe('nobody cannot enter /root (mode 0710, owner 0:64123)');
  });

  it('auto as root without a nobody entry warns', () => {
    const d = decideExecutorUser({ setting: 'auto', selfUid: 0, users: [], reach: reachable });
    expect(d).toMatchObject({
      kind: 'same-with-warning',
      warning: expect.stringContaining('no user "nobody"'),
    });
  });
  it.each([
    ['an unknown user', 'ghost', 0, reachable, 'no user "ghost"'],
    ['another user without root', 'nobody', 1000, reachable, 'needs the Worker to run as root'],
    [
      'a named user out of reach is refused, never replaced by root',
      'nobody',
      0,
      unreachable,
      'cannot enter /root',
    ],
  ] as const)('%s is an error', (_name, setting, selfUid, reach, message) => {
    const d = decideExecutorUser({ setting, selfUid, users: USERS, reach });
    expect(d).toMatchObject({ kind: 'error', message: expect.stringContaining(message) });
  });
});
