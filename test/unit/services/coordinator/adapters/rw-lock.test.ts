import { describe, expect, it } from 'vitest';
import { RwLock } from '../../../../../src/services/coordinator/adapters/rw-lock.js';

/** A promise with its resolve exposed. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

describe('RwLock', () => {
  it('runs an uncontended synchronous section before read/write return', () => {
    const lock = new RwLock();
    const log: string[] = [];
    void lock.write(() => log.push('w'));
    void lock.read(() => log.push('r'));
    log.push('after');
    expect(log).toEqual(['w', 'r', 'after']);
    expect(lock.state).toEqual({ readers: 0, writer: false, waiting: 0 });
  });

  it('returns the section result and propagates its error, releasing either way', async () => {
    const lock = new RwLock();
    await expect(lock.read(() => 42)).resolves.toBe(42);
    await expect(
      lock.write(() => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    await expect(lock.write(async () => Promise.reject(new Error('late')))).rejects.toThrow('late');
    expect(lock.state).toEqual({ readers: 0, writer: false, waiting: 0 });
  });

  it('lets readers share, makes a writer wait for them, and keeps FIFO order behind the writer', async () => {
    const lock = new RwLock();
    const log: string[] = [];
    const r1 = gate();
    const reading = lock.read(async () => {
      log.push('r1 start');
      await r1.promise;
      log.push('r1 end');
    });
    const r2 = lock.read(() => log.push('r2')); // shares with r1
    const w = lock.write(() => log.push('w'));
    const r3 = lock.read(() => log.push('r3')); // queued behind the writer, not admitted with r1
    expect(log).toEqual(['r1 start', 'r2']);
    expect(lock.state).toEqual({ readers: 1, writer: false, waiting: 2 });
    r1.open();
    await Promise.all([reading, r2, w, r3]);
    expect(log).toEqual(['r1 start', 'r2', 'r1 end', 'w', 'r3']);
  });

  it('excludes everyone while a writer holds the lock', async () => {
    const lock = new RwLock();
    const log: string[] = [];
    const g = gate();
    const w1 = lock.write(async () => {
      log.push('w1 start');
      await g.promise;
      log.push('w1 end');
    });
    const r = lock.read(() => log.push('r'));
    const w2 = lock.write(() => log.push('w2'));
    expect(log).toEqual(['w1 start']);
    g.open();
    await Promise.all([w1, r, w2]);
    expect(log).toEqual(['w1 start', 'w1 end', 'r', 'w2']);
  });
});
