// Code epochs with the real executor: a pinned epoch keeps its code after the file changes (even on a
// restarted executor), a later epoch sees the new code, retiring an epoch recycles the threads that
// loaded it, and an executor without DefineEpoch serves the directory's current epoch.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FunctionCodeView } from '../../../src/executor/code-epochs.js';
import { ExecutorHarness } from './executor-harness.js';

// Real executor processes started from src/ under tsx: the bounds these tests had in the process tier.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

let dir: string;
let h: ExecutorHarness | undefined;
const writeVersion = (v: string) =>
  writeFileSync(
    join(dir, 'version.ts'),
    `export default async (): Promise<string> => ${JSON.stringify(v)};\n`,
  );

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'bx-epoch-fns-'));
  writeVersion('v1');
});
afterEach(async () => {
  await h?.stop();
  h = undefined;
  rmSync(dir, { recursive: true, force: true });
});

describe('code epochs through the executor', () => {
  it('runs the pinned old code for the old epoch and the new code for the new epoch', async () => {
    const view = new FunctionCodeView({ dir, ttlMs: 0 });
    h = await new ExecutorHarness({ functionsDir: dir, epochs: view }).start();
    const e1 = await view.pinCurrent();
    expect(await h.run({ function: 'version', codeEpoch: e1 })).toMatchObject({ value: 'v1' });

    writeVersion('v2');
    const e2 = await view.pinCurrent();
    expect(e2).not.toBe(e1);
    const [old, fresh] = await Promise.all([
      h.run({ function: 'version', codeEpoch: e1 }),
      h.run({ function: 'version', codeEpoch: e2 }),
    ]);
    expect(old).toMatchObject({ type: 'callCompleted', value: 'v1' });
    expect(fresh).toMatchObject({ type: 'callCompleted', value: 'v2' });

    // A restarted executor has never loaded e1; the link defines it again, so the old code still runs.
    process.kill(h.supervisor.pid!, 'SIGKILL');
    await h.until(() => h!.count('executorReady') === 2);
    expect(await h.run({ function: 'version', codeEpoch: e1 })).toMatchObject({ value: 'v1' });
    expect(await h.run({ function: 'version', codeEpoch: e2 })).toMatchObject({ value: 'v2' });
  });

  it('loads an old epoch it has never seen after the file changed (snapshot, not disk)', async () => {
    const view = new FunctionCodeView({ dir, ttlMs: 0 });
    const e1 = await view.pinCurrent();
    writeVersion('v2');
    await view.currentEpoch();
    h = await new ExecutorHarness({ functionsDir: dir, epochs: view }).start();
    expect(await h.run({ function: 'version', codeEpoch: e1 })).toMatchObject({ value: 'v1' });
  });

  it('retiring an epoch recycles the threads that loaded it', async () => {
    const view = new FunctionCodeView({ dir, ttlMs: 0 });
    h = await new ExecutorHarness({ functionsDir: dir, epochs: view }).start();
    const e1 = await view.pinCurrent();
    await Promise.all(Array.from({ length: 8 }, () => h!.run({ function: 'version', codeEpoch: e1 })));
    await h.until(() => h!.events.some((e) => e.type === 'heartbeat' && e.epochs === 1));
    writeVersion('v2');
    const e2 = await view.pinCurrent();
    await Promise.all(Array.from({ length: 8 }, () => h!.run({ function: 'version', codeEpoch: e2 })));
    await h.until(() => h!.events.some((e) => e.type === 'heartbeat' && e.epochs === 2));
    const seen = h.events.length;
    // e1 is neither pinned nor current now: retired → RetireEpoch → every thread that imported it is
    // drained and replaced. Both threads had loaded e1, so the fresh threads hold no module at all.
    view.unpin(e1);
    await h.until(() =>
      h!.events.slice(seen).some((e) => e.type === 'heartbeat' && e.epochs === 0 && e.threads === 2),
    );
    expect(await h.run({ function: 'version', codeEpoch: e2 })).toMatchObject({ value: 'v2' });
    expect(h.count('executorLost')).toBe(0);
  });

  it('without DefineEpoch the executor serves the directory’s current epoch and refuses an old one', async () => {
    const view = new FunctionCodeView({ dir, ttlMs: 0 });
    const e1 = await view.currentEpoch();
    h = await new ExecutorHarness({ functionsDir: dir }).start(); // no epochs source
    expect(await h.run({ function: 'version', codeEpoch: e1 })).toMatchObject({ value: 'v1' });
    writeVersion('v2');
    const e2 = await view.currentEpoch();
    expect(await h.run({ function: 'version', codeEpoch: e2 })).toMatchObject({ value: 'v2' });
    const stale = await h.run({ function: 'version', codeEpoch: 'ffffffffffffffff' });
    expect(stale).toMatchObject({ type: 'callFailed', kind: 'load', code: 'EPOCH_UNKNOWN' });
    expect(stale.type === 'callFailed' && stale.message).toContain(`now holds epoch ${e2}`);
  });
});
