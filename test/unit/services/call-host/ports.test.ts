// The two implementations of the call host's ports that the Worker uses too: readiness pushed by hand,
// and the CodeEpochSource over a Function Code View.
import { describe, expect, it } from 'vitest';
import {
  ManualExecutorReadiness,
  codeEpochsFromView,
  type ExecutorReadinessEvent,
} from '../../../../src/services/call-host/index.js';

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
