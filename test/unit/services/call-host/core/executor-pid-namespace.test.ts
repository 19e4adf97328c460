import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decidePidNamespace,
  pidNamespaceCommand,
  type PidNamespaceInput,
} from '../../../../../src/services/call-host/core/executor-pid-namespace.js';

const NODE = '/usr/bin/node';
const TOOLS = { unshare: '/usr/bin/unshare', setpriv: '/usr/bin/setpriv' };
const UNSHARE = [
  '/usr/bin/unshare',
  '--pid',
  '--fork',
  '--kill-child',
  '--mount-proc',
  '--propagation=slave',
  '--',
];
const nobody = { name: 'nobody', uid: 65534, gid: 65534 };

describe('pidNamespaceCommand', () => {
  it.each([
    {
      what: 'node, as the Worker user: unshare, then node with its flag',
      command: [NODE, 'bin/blockx.js', 'executor'],
      runAs: undefined,
      want: [...UNSHARE, NODE, '--disable-wasm-trap-handler', 'bin/blockx.js', 'executor'],
    },
    {
      what: 'node behind prlimit, as a user of its own: setpriv inside unshare, the flag after node',
      command: ['/usr/bin/prlimit', '--nproc=100:100', '--', NODE, '--import', 'tsx', 'cli-entry.ts'],
      runAs: nobody,
      want: [
        ...UNSHARE,
        '/usr/bin/setpriv',
        '--reuid=65534',
        '--regid=65534',
        '--clear-groups',
        '--pdeathsig=keep',
        '--',
        '/usr/bin/prlimit',
        '--nproc=100:100',
        '--',
        NODE,
        '--disable-wasm-trap-handler',
        '--import',
        'tsx',
        'cli-entry.ts',
      ],
    },
    {
      what: 'python: no node flag',
      command: ['python3', '-B', 'blockx-executor.py'],
      runAs: { name: '64123:64124', uid: 64123, gid: 64124 },
      want: [
        ...UNSHARE,
        '/usr/bin/setpriv',
        '--reuid=64123',
        '--regid=64124',
        '--clear-groups',
        '--pdeathsig=keep',
        '--',
        'python3',
        '-B',
        'blockx-executor.py',
      ],
    },
  ])('$what', ({ command, runAs, want }) => {
    expect(pidNamespaceCommand({ command, node: NODE }, TOOLS, runAs)).toEqual(want);
  });

  it('refuses an empty command, and a user to drop to without setpriv', () => {
    expect(() => pidNamespaceCommand({ command: [], node: NODE }, TOOLS, undefined)).toThrow(/empty/);
    expect(() => pidNamespaceCommand({ command: [NODE], node: NODE }, { unshare: 'u' }, nobody)).toThrow(
      /setpriv/,
    );
  });

  it('ends with the command itself, the flag right after node when node is in it', () => {
    const FLAG = '--disable-wasm-trap-handler';
    const word = fc.string({ minLength: 1 }).filter((w) => w !== FLAG && w !== NODE);
    fc.assert(
      fc.property(
        fc.array(word, { minLength: 1, maxLength: 6 }),
        fc.nat(6),
        fc.boolean(),
        fc.boolean(),
        (cmd, at, node, drop) => {
          const i = Math.min(at, cmd.length);
          const command = node ? [...cmd.slice(0, i), NODE, ...cmd.slice(i)] : cmd;
          const inner = node ? [...cmd.slice(0, i), NODE, FLAG, ...cmd.slice(i)] : cmd;
          const out = pidNamespaceCommand({ command, node: NODE }, TOOLS, drop ? nobody : undefined);
          expect(out.slice(out.length - inner.length)).toEqual(inner);
          expect(out.slice(0, UNSHARE.length)).toEqual(UNSHARE);
          expect(out.length - inner.length).toBe(UNSHARE.length + (drop ? 6 : 0));
        },
      ),
    );
  });
});

describe('decidePidNamespace', () => {
  const base: PidNamespaceInput = {
    enabled: true,
    selfUid: 0,
    dropsUser: true,
    unshare: TOOLS.unshare,
    setpriv: TOOLS.setpriv,
    trial: () => undefined,
  };

  it.each([
    { what: 'root, tools there, the trial works', input: {}, want: { kind: 'on', tools: TOOLS } },
    {
      what: 'root keeping its user: setpriv is not needed',
      input: { dropsUser: false, setpriv: undefined },
      want: { kind: 'on', tools: { unshare: TOOLS.unshare } },
    },
    { what: 'turned off', input: { enabled: false }, want: { kind: 'off' } },
    { what: 'not root: off, silently', input: { selfUid: 1000 }, want: { kind: 'off' } },
    {
      what: 'no unshare',
      input: { unshare: undefined },
      want: { kind: 'off-with-warning', warning: expect.stringMatching(/unshare is not installed/) },
    },
    {
      what: 'no setpriv while dropping a user',
      input: { setpriv: undefined },
      want: { kind: 'off-with-warning', warning: expect.stringMatching(/setpriv is not installed/) },
    },
    {
      what: 'the trial fails (a container without CAP_SYS_ADMIN)',
      input: { trial: () => 'unshare: unshare failed: Operation not permitted' },
      want: {
        kind: 'off-with-warning',
        warning: expect.stringMatching(
          /unshare --pid failed here \(unshare: unshare failed: Operation not permitted\)/,
        ),
      },
    },
  ])('$what', ({ input, want }) => {
    expect(decidePidNamespace({ ...base, ...input })).toEqual(want);
  });

  it('a warning says what is exposed and the ways out, and names the docs', () => {
    const d = decidePidNamespace({ ...base, unshare: undefined });
    expect(d.kind === 'off-with-warning' && d.warning).toMatch(
      /can kill or stop its executor.*Install util-linux, or set executor.pidNamespace: false.*docs\/security.md/,
    );
  });

  it('tries a namespace only when everything else allows one', () => {
    fc.assert(
      fc.property(
        fc.record({
          enabled: fc.boolean(),
          selfUid: fc.constantFrom(0, 1000),
          dropsUser: fc.boolean(),
          unshare: fc.option(fc.constant(TOOLS.unshare), { nil: undefined }),
          setpriv: fc.option(fc.constant(TOOLS.setpriv), { nil: undefined }),
          fails: fc.boolean(),
        }),
        (r) => {
          let tried = 0;
          const d = decidePidNamespace({
            ...r,
            trial: () => (tried++, r.fails ? 'no' : undefined),
          });
          const allowed =
            r.enabled &&
            r.selfUid === 0 &&
            r.unshare !== undefined &&
            (!r.dropsUser || r.setpriv !== undefined);
          expect(tried).toBe(allowed ? 1 : 0);
          expect(d.kind === 'on').toBe(allowed && !r.fails);
          // Root with the setting on never goes without a namespace silently.
          if (r.enabled && r.selfUid === 0) expect(d.kind).not.toBe('off');
        },
      ),
    );
  });
});
