// An execution process of the Python executor may not signal its router (blockx_executor/no_signals.py,
// docs/security.md § Executors as their own user): a function's kill of the router, of the router's
// process group, of its own group (0) or of every process (-1) fails with EPERM, while it may still end
// a child process of its own; the executor serves on.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it, vi } from 'vitest';
import { SnapshotEpochs, pythonHarness } from './python-executor-harness.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const dir = mkdtempSync(join(tmpdir(), 'bx-py-signals-'));
writeFileSync(
  join(dir, 'signals.py'),
  [
    'import os',
    'import subprocess',
    '',
    '',
    'def attempt(fn):',
    '    try:',
    '        fn()',
    '        return "ok"',
    '    except OSError as err:',
    '        return "EPERM" if err.errno == 1 else str(err)',
    '',
    '',
    'def main(ctx):',
    '    router = os.getppid()',
    '    child = subprocess.Popen(["sleep", "30"])',
    '    out = {',
    '        "router": attempt(lambda: os.kill(router, 0)),',
    '        "routerGroup": attempt(lambda: os.killpg(os.getpgid(router), 0)),',
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

it('a function cannot signal its router or its group, and may end its own child', async () => {
  const h = await pythonHarness({ functionsDir: dir, epochs, threads: 1 }).start();
  try {
    const r = await h.run({ function: 'signals', codeEpoch: epoch });
    expect(r).toMatchObject({
      type: 'callCompleted',
      value: {
        router: 'EPERM',
        routerGroup: 'EPERM',
        ownGroup: 'EPERM',
        everyone: 'EPERM',
        self: 'ok',
        child: 'ok',
      },
    });
    expect((await h.run({ function: 'signals', codeEpoch: epoch })).type).toBe('callCompleted');
  } finally {
    await h.stop();
  }
});
