// A memory ceiling per Executor with the real kernel (docs/security.md § A memory ceiling per Executor):
// the supervisor puts each executor in a cgroup of its own with `memoryMaxMb`, and a function that
// allocates past it is ended by the kernel inside that executor: the Python call fails with
// EXECUTOR_MEMORY_LIMIT naming the ceiling while its executor serves on; the JS executor (one process)
// is ended, the Worker logs why, and a new one serves the next call. The soft checks (threadMemoryMb,
// maxRssMb) are off here so that only the ceiling can act. Skipped, with the reason, where this host
// lets the Worker make no memory cgroup (not root, no memory controller).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { openExecutorCgroup } from '../../../src/services/call-host/adapters/executor-cgroup.js';
import { eventually, present } from '../../support/eventually.js';
import { ExecutorHarness } from './executor-harness.js';
import { SnapshotEpochs, pythonHarness } from './python-executor-harness.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const CEILING_MB = 160;
const probe = openExecutorCgroup('probe', CEILING_MB);
if (probe.kind === 'ok') probe.cgroup.remove();
const skipped = probe.kind === 'ok' ? '' : ` (skipped: ${probe.reason})`;

const dir = mkdtempSync(join(tmpdir(), 'bx-ceiling-'));
// Each touches what it allocates (a fill, a repeated bytes object), so the pages count.
writeFileSync(
  join(dir, 'hog.mjs'),
  'export default async (ctx, mb) => Buffer.alloc(mb * 1024 * 1024, 1).length;\n',
);
writeFileSync(join(dir, 'hog_py.py'), 'def main(ctx, mb):\n    return len(b"x" * (mb * 1024 * 1024))\n');
const epochs = new SnapshotEpochs();
const epoch = epochs.take(dir);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const soft = {
  threadMemoryMb: 0,
  maxRssMb: 0,
  memoryMaxMb: CEILING_MB,
  threads: 1,
  functionsDir: dir,
  epochs,
};

describe.skipIf(probe.kind !== 'ok')(`a memory ceiling per executor${skipped}`, () => {
  it('Python: the call past the ceiling fails EXECUTOR_MEMORY_LIMIT; the executor serves the next one', async () => {
    const h = await pythonHarness({ ...soft, label: 'python' }).start();
    try {
      const small = await h.run({ function: 'hog_py', codeEpoch: epoch, args: [8] });
      expect(small).toMatchObject({ type: 'callCompleted', value: 8 * 1024 * 1024 });
      const pid = h.supervisor.pid;
      const big = await h.run({ function: 'hog_py', codeEpoch: epoch, args: [4 * CEILING_MB] });
      expect(big).toMatchObject({
        type: 'callFailed',
        kind: 'executor_crash',
        retryable: true,
        code: 'EXECUTOR_MEMORY_LIMIT',
        message: expect.stringMatching(
          new RegExp(
            `ended by the kernel at the executor's memory ceiling \\(${CEILING_MB} MiB, executor.memoryMaxMb\\)`,
          ),
        ),
      });
      const after = await h.run({ function: 'hog_py', codeEpoch: epoch, args: [8] });
      expect(after.type).toBe('callCompleted');
      expect(h.supervisor.pid).toBe(pid);
    } finally {
      await h.stop();
    }
  });

  it('JS: the executor is ended inside its cgroup, the reason logged, and a new one serves', async () => {
    const lines: string[] = [];
    const h = await new ExecutorHarness({ ...soft, label: 'js', log: (_l, m) => lines.push(m) }).start();
    try {
      const pid = h.supervisor.pid;
      const big = await h.run({ function: 'hog', codeEpoch: epoch, args: [4 * CEILING_MB] });
      expect(big).toMatchObject({ type: 'callFailed', kind: 'executor_crash', retryable: true });
      const line = await eventually(() =>
        present(
          lines.find((l) => l.includes('the kernel ended it')),
          'the line',
        ),
      );
      expect(line).toMatch(
        new RegExp(`executor process ${pid} exited \\(SIGKILL\\): .*executor.memoryMaxMb ${CEILING_MB} MiB`),
      );
      await h.supervisor.whenReady();
      const after = await h.run({ function: 'hog', codeEpoch: epoch, args: [8] });
      expect(after).toMatchObject({ type: 'callCompleted', value: 8 * 1024 * 1024 });
      expect(h.supervisor.pid).not.toBe(pid);
    } finally {
      await h.stop();
    }
  });
});
