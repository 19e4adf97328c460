import { describe, expect, it } from 'vitest';
import {
  ManualExecutorReadiness,
  codeEpochsFromView,
  NoStorageIoScopeFactory,
  StaticCodeEpochSource,
} from '../../../../../../src/services/worker/adapters/orchestration/default-ports.js';
import type { ExecutorReadinessEvent } from '../../../../../../src/services/worker/adapters/orchestration/ports.js';

describe('NoStorageIoScopeFactory', () => {
  it('says it has no storage; every operation rejects with NO_STORAGE; close is counted once', async () => {
    const factory = new NoStorageIoScopeFactory();
    expect(factory.hasStorage).toBe(false);
    const scope = await factory.open('t1');
    expect(factory.openCount).toBe(1);
    for (const phase of ['builder', 'calls', 'result'] as const) {
      await expect(scope.io(phase).get('blocks', { number: 1 })).rejects.toMatchObject({
        code: 'NO_STORAGE',
      });
    }
    const io = scope.io('result');
    await expect(io.get('blocks', { number: 1 })).rejects.toMatchObject({
      code: 'NO_STORAGE',
      operation: 'get',
    });
    await expect(io.getMany('blocks', [])).rejects.toMatchObject({ code: 'NO_STORAGE' });
    await expect(io.transaction(async () => 1)).rejects.toMatchObject({ code: 'NO_STORAGE' });
    await expect(io.scan('blocks')[Symbol.asyncIterator]().next()).rejects.toMatchObject({
      code: 'NO_STORAGE',
    });
    await scope.close();
    await scope.close();
    expect(factory.openCount).toBe(0);
  });
});

describe('StaticCodeEpochSource', () => {
  it('pins its epoch and counts releases once', async () => {
    const epochs = new StaticCodeEpochSource('e7');
    const a = await epochs.pin();
    const b = await epochs.pin();
    expect(a.epoch).toBe('e7');
    expect(epochs.pins).toBe(2);
    a.release();
    a.release();
    b.release();
    expect(epochs.pins).toBe(0);
  });
});

describe('ManualExecutorReadiness', () => {
  it('replays the last state to a new listener and reports changes', () => {
    const readiness = new ManualExecutorReadiness(true);
    const seen: ExecutorReadinessEvent[] = [];
    const off = readiness.subscribe((e) => seen.push(e));
    readiness.markLost('exited');
    off();
    readiness.markReady();
    expect(seen).toEqual([{ type: 'ready' }, { type: 'lost', reason: 'exited' }]);
  });

  it('tells nothing to a listener before the first event', () => {
    const seen: ExecutorReadinessEvent[] = [];
    new ManualExecutorReadiness(false).subscribe((e) => seen.push(e));
    expect(seen).toEqual([]);
  });
});

describe('codeEpochsFromView', () => {
  it('pins the current epoch of the view and unpins it once', async () => {
    const calls: string[] = [];
    const source = codeEpochsFromView({
      pinCurrent: async () => {
        calls.push('pin');
        return 'abc123';
      },
      unpin: (epoch) => void calls.push(`unpin ${epoch}`),
    });
    const pin = await source.pin();
    expect(pin.epoch).toBe('abc123');
    pin.release();
    pin.release();
    expect(calls).toEqual(['pin', 'unpin abc123']);
  });

  it('lists the function names of the current epoch, both languages, unpinning it after', async () => {
    const calls: string[] = [];
    const files = ['b.ts', 'a.py', 'a_helper.mjs', 'README.md', '__init__.py', 'b.js', 'pkg.json'];
    const source = codeEpochsFromView({
      pinCurrent: async () => {
        calls.push('pin');
        return 'e1';
      },
      unpin: (epoch) => void calls.push(`unpin ${epoch}`),
      snapshot: (epoch) => (epoch === 'e1' ? { files: files.map((fileName) => ({ fileName })) } : undefined),
    });
    expect(await source.functionNames?.()).toEqual(['a', 'a_helper', 'b']);
    expect(calls).toEqual(['pin', 'unpin e1']);
    // A view without snapshots cannot say.
    expect(codeEpochsFromView({ pinCurrent: async () => 'e', unpin: () => undefined }).functionNames).toBe(
      undefined,
    );
  });
});
