import { describe, expect, it } from 'vitest';
import {
  NoStorageIoScopeFactory,
  StaticCodeEpochSource,
} from '../../../../../../src/services/worker/adapters/orchestration/default-ports.js';

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
