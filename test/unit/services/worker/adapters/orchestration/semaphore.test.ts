import { describe, expect, it } from 'vitest';
import {
  DEFAULT_ADMISSION_SLOTS,
  Semaphore,
  createAdmissionSemaphores,
  type Release,
} from '../../../../../../src/services/worker/adapters/orchestration/semaphore.js';

/** Lets every pending promise callback run. */
async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

describe('Semaphore', () => {
  it('grants up to capacity at once, then queues', async () => {
    const sem = new Semaphore('s', 2);
    const a = await sem.acquire();
    const b = await sem.acquire();
    expect(sem.available).toBe(0);
    expect(sem.inUse).toBe(2);
    let third: Release | undefined;
    void sem.acquire().then((r) => (third = r));
    await flush();
    expect(third).toBeUndefined();
    expect(sem.waiting).toBe(1);
    a();
    await flush();
    expect(third).toBeTypeOf('function');
    expect(sem.waiting).toBe(0);
    expect(sem.inUse).toBe(2);
    b();
    third?.();
    expect(sem.available).toBe(2);
  });

  it('hands permits to waiters in FIFO order', async () => {
    const sem = new Semaphore('s', 1);
    const first = await sem.acquire();
    const order: number[] = [];
    const releases: Release[] = [];
    for (let i = 0; i < 5; i++) {
      void sem.acquire().then((r) => {
        order.push(i);
        releases.push(r);
      });
    }
    first();
    for (let i = 0; i < 5; i++) {
      await flush();
      releases[i]?.();
    }
    await flush();
    expect(order).toEqual([0, 1, 2, 3, 4]);
    expect(sem.available).toBe(1);
  });

  it('does not let a new acquirer barge past waiters (tryAcquire fails while anyone waits)', async () => {
    const sem = new Semaphore('s', 1);
    const held = await sem.acquire();
    const waiter = sem.acquire();
    held();
    // The permit went to the waiter, not back to the pool.
    expect(sem.tryAcquire()).toBeUndefined();
    (await waiter)();
    expect(sem.tryAcquire()).toBeTypeOf('function');
  });

  it('a release function works once', async () => {
    const sem = new Semaphore('s', 2);
    const r = await sem.acquire();
    r();
    r();
    r();
    expect(sem.available).toBe(2);
  });

  it('an aborted signal rejects a waiting acquire with its reason and leaves the queue', async () => {
    const sem = new Semaphore('s', 1);
    const held = await sem.acquire();
    const controller = new AbortController();
    const waiting = sem.acquire(controller.signal);
    const after = sem.acquire();
    expect(sem.waiting).toBe(2);
    const reason = new Error('task converged');
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    expect(sem.waiting).toBe(1);
    held();
    // The next waiter in line gets the permit; the cancelled one never does.
    const r = await after;
    expect(sem.inUse).toBe(1);
    r();
    expect(sem.available).toBe(1);
  });

  it('an already aborted signal rejects at once without taking a permit', async () => {
    const sem = new Semaphore('s', 1);
    const controller = new AbortController();
    controller.abort();
    await expect(sem.acquire(controller.signal)).rejects.toBeInstanceOf(DOMException);
    expect(sem.available).toBe(1);
  });

  it('aborting after the permit was granted changes nothing', async () => {
    const sem = new Semaphore('s', 1);
    const controller = new AbortController();
    const r = await sem.acquire(controller.signal);
    controller.abort();
    expect(sem.inUse).toBe(1);
    r();
    expect(sem.available).toBe(1);
  });

  it('cancelling waiters in the middle of the queue keeps the others in order', async () => {
    const sem = new Semaphore('s', 1);
    const held = await sem.acquire();
    const controllers = Array.from({ length: 6 }, () => new AbortController());
    const order: number[] = [];
    const waits = controllers.map((c, i) =>
      sem.acquire(c.signal).then(
        (r) => {
          order.push(i);
          r();
        },
        () => undefined,
      ),
    );
    controllers[1]?.abort();
    controllers[3]?.abort();
    controllers[5]?.abort();
    expect(sem.waiting).toBe(3);
    held();
    await Promise.all(waits);
    expect(order).toEqual([0, 2, 4]);
    expect(sem.available).toBe(1);
  });

  it('stays FIFO with 10,000 waiters when every other one is cancelled', async () => {
    const sem = new Semaphore('s', 1);
    const held = await sem.acquire();
    const n = 10_000;
    const controllers: AbortController[] = [];
    const order: number[] = [];
    const waits: Promise<void>[] = [];
    for (let i = 0; i < n; i++) {
      const c = new AbortController();
      controllers.push(c);
      waits.push(
        sem.acquire(c.signal).then(
          (r) => {
            order.push(i);
            r();
          },
          () => undefined,
        ),
      );
    }
    for (let i = 0; i < n; i += 2) controllers[i]?.abort();
    expect(sem.waiting).toBe(n / 2);
    held();
    await Promise.all(waits);
    expect(order).toHaveLength(n / 2);
    expect(order.every((v, k) => v === 2 * k + 1)).toBe(true);
    expect(sem.waiting).toBe(0);
    expect(sem.available).toBe(1);
  });

  it('rejects a non-positive capacity', () => {
    expect(() => new Semaphore('s', 0)).toThrow(RangeError);
    expect(() => new Semaphore('s', 1.5)).toThrow(RangeError);
  });
});

describe('createAdmissionSemaphores', () => {
  it('uses the documented defaults: builder 16, executor 32, plugin 16, scan 8', () => {
    const sems = createAdmissionSemaphores();
    expect(DEFAULT_ADMISSION_SLOTS).toEqual({
      builderSlots: 16,
      executorTaskSlots: 32,
      pluginSlots: 16,
      scanSlots: 8,
    });
    expect(sems.builderSem.capacity).toBe(16);
    expect(sems.executorSem.capacity).toBe(32);
    expect(sems.pluginSem.capacity).toBe(16);
    expect(sems.scanSem.capacity).toBe(8);
    expect(sems.executorSem.name).toBe('executorSem');
  });
});
