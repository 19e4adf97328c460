// Code epochs on the Python executor: a task's calls run the code as of its activation, so editing a
// `.py` during a long task changes only later tasks; RetireEpoch drops an epoch; without a DefineEpoch
// the executor serves only its directory's current epoch; module state is per task (isolation task).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { eventually } from '../../support/eventually.js';
import type { ExecutorHarness } from './executor-harness.js';
import { SnapshotEpochs, pythonHarness, snapshotOf } from './python-executor-harness.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const dir = mkdtempSync(join(tmpdir(), 'bx-py-epochs-'));
const version = (v: string) =>
  `import asyncio\n\n\nasync def main(ctx, ms=0):\n    await asyncio.sleep(ms / 1000)\n    return "${v}"\n`;
writeFileSync(join(dir, 'version.py'), version('v1'));
writeFileSync(
  join(dir, 'counter.py'),
  'calls = 0\n\n\ndef main(ctx):\n    global calls\n    calls += 1\n    return calls\n',
);
const epochs = new SnapshotEpochs();
let h: ExecutorHarness;

beforeAll(async () => {
  h = await pythonHarness({ functionsDir: dir, epochs }).start();
});

afterAll(async () => {
  await h?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('python executor: code epochs', () => {
  it('a long task keeps the code it was activated with while the file is edited', async () => {
    const v1 = epochs.take(dir); // task A activates
    const longCall = h.run({ function: 'version', args: [400], codeEpoch: v1, taskId: 'task-A' });
    await h.until(() => h.events.some((e) => e.type === 'callStarted'));
    writeFileSync(join(dir, 'version.py'), version('v2'));
    const v2 = epochs.take(dir); // task B activates after the edit
    expect(v2).not.toBe(v1);
    expect(await h.run({ function: 'version', codeEpoch: v2, taskId: 'task-B' })).toMatchObject({
      value: 'v2',
    });
    // Task A's calls, the running one and a new one, still run v1.
    expect(await longCall).toMatchObject({ type: 'callCompleted', value: 'v1' });
    expect(await h.run({ function: 'version', codeEpoch: v1, taskId: 'task-A' })).toMatchObject({
      value: 'v1',
    });
  });

  it('a retired epoch is dropped: its calls fail EPOCH_UNKNOWN once the directory moved on', async () => {
    writeFileSync(join(dir, 'version.py'), version('v3'));
    const v3 = epochs.take(dir);
    expect(await h.run({ function: 'version', codeEpoch: v3 })).toMatchObject({ value: 'v3' });
    writeFileSync(join(dir, 'version.py'), version('v4'));
    epochs.retire(v3);
    await eventually(async () =>
      expect(await h.run({ function: 'version', codeEpoch: v3 })).toMatchObject({
        kind: 'load',
        code: 'EPOCH_UNKNOWN',
      }),
    );
  });

  it('without a DefineEpoch it serves the epoch its directory holds now, and only that one', async () => {
    writeFileSync(join(dir, 'version.py'), version('v5'));
    const current = snapshotOf(dir).id; // never given to the link's code view
    expect(await h.run({ function: 'version', codeEpoch: current })).toMatchObject({ value: 'v5' });
    writeFileSync(join(dir, 'version.py'), version('v6'));
    // The executor looks at its directory at most every 100 ms (docs/executor.md).
    await eventually(async () =>
      expect(await h.run({ function: 'version', codeEpoch: current })).toMatchObject({
        kind: 'load',
        code: 'EPOCH_UNKNOWN',
        message: expect.stringContaining(snapshotOf(dir).id),
      }),
    );
  });

  it('module state is per task (isolation task): one task counts its own calls', async () => {
    const e = epochs.take(dir);
    const run = (taskId: string) => h.run({ function: 'counter', codeEpoch: e, taskId });
    // One execution process per task here, so the count is the task's own.
    const h1 = await pythonHarness({ functionsDir: dir, epochs, threads: 1 }).start();
    try {
      const one = (taskId: string) => h1.run({ function: 'counter', codeEpoch: e, taskId });
      expect((await one('t1')).type).toBe('callCompleted');
      expect(await one('t1')).toMatchObject({ value: 2 });
      expect(await one('t2')).toMatchObject({ value: 1 });
      expect(await one('t1')).toMatchObject({ value: 3 });
    } finally {
      await h1.stop();
    }
    expect((await run('t9')).type).toBe('callCompleted');
  });
});
