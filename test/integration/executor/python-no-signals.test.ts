// An execution process of the Python executor may not signal its router (blockx_executor/no_signals.py,
// docs/security.md § Executors as their own user): a function's kill of the router, of the router's
// process group, of its own group (0) or of every process (-1) fails, while it may still end a child
// process of its own; the executor serves on. Both ways: in a PID namespace of its own (own_pidns.py, the
// default) the router has no pid there (ESRCH) and the process's parent is its namespace's init; with
// BLOCKX_PYTHON_PROCESS_PIDNS=off the seccomp filter refuses the router's pid and group (EPERM).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { SnapshotEpochs, pythonHarness } from './python-executor-harness.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const dir = mkdtempSync(join(tmpdir(), 'bx-py-signals-'));
writeFileSync(
  join(dir, 'signals.py'),
  [
    'import errno',
    'import os',
    'import subprocess',
    '',
    '',
    'def attempt(fn):',
    '    try:',
    '        fn()',
    '        return "ok"',
    '    except OSError as err:',
    '        return errno.errorcode.get(err.errno, str(err))',
    '',
    '',
    'def main(ctx, router, router_group):',
    '    child = subprocess.Popen(["sleep", "30"])',
    '    out = {',
    '        "parent": os.getppid(),',
    '        "router": attempt(lambda: os.kill(router, 0)),',
    '        "routerGroup": attempt(lambda: os.killpg(router_group, 0)),',
    '        "ownGroup": attempt(lambda: os.kill(0, 0)),',
    '        "everyone": attempt(lambda: os.kill(-1, 0)),',
    '        "self": attempt(lambda: os.kill(os.getpid(), 0)),',
    '        "child": attempt(child.kill),',
    '    }',
    '    child.wait()',
    '    return out',
    '',
  ].join('\n'),
);
const epochs = new SnapshotEpochs();
const epoch = epochs.take(dir);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each([
  { mode: 'in a PID namespace of its own', env: {}, router: 'ESRCH', parent: 1 },
  { mode: "sharing the router's namespace", env: { BLOCKX_PYTHON_PROCESS_PIDNS: 'off' }, router: 'EPERM' },
])('an execution process $mode', ({ env, router, parent }) => {
  it('cannot signal its router or its group, and may end its own child', async () => {
    const h = await pythonHarness({
      functionsDir: dir,
      epochs,
      threads: 1,
      env: { ...process.env, ...env },
    }).start();
    try {
      // The router's pid and process group as this process (and the router's /proc) names them.
      const pid = h.supervisor.pid!;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const group = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
      const r = await h.run({ function: 'signals', codeEpoch: epoch, args: [pid, group] });
      expect(r).toMatchObject({
        type: 'callCompleted',
        value: {
          router,
          routerGroup: router,
          ownGroup: 'EPERM',
          everyone: 'EPERM',
          self: 'ok',
          child: 'ok',
        },
      });
      expect((r as { value: { parent: number } }).value.parent).toBe(parent ?? pid);
      const again = await h.run({ function: 'signals', codeEpoch: epoch, args: [pid, group] });
      expect(again.type).toBe('callCompleted');
    } finally {
      await h.stop();
    }
  });
});
