// Tenants on threads (src/executor/core/tenant-placement.ts, docs/executor.md § Tenants on threads):
// never two tenants' calls on one thread at once, drain-then-switch for a waiting tenant, and every call
// placed in the end, as a table and a fast-check property over arrivals, completions and waits.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CallQueue,
  assign,
  endWait,
  newPoolCall,
  release,
  startWait,
  tenantOf,
  type PoolCall,
  type ThreadBooks,
} from '../../../../src/executor/core/pool-calls.js';
import { placeTenantCalls } from '../../../../src/executor/core/tenant-placement.js';
import type { CallTask } from '../../../../src/executor/protocol.js';
import { idleThread } from './fake-books.js';

interface T extends ThreadBooks<C> {
  readonly name: string;
}
type C = PoolCall<T, unknown>;

function thread(name: string): T {
  return idleThread<C, { name: string }>({ name });
}

let seq = 0;
function call(tenant: string | undefined): C {
  const task: CallTask = {
    taskId: `task-${tenant}`,
    function: 'f',
    codeEpoch: 'e',
    budgetMs: 0,
    ...(tenant === undefined ? {} : { tenant }),
  };
  const id = `c${++seq}`;
  const c = newPoolCall<T, unknown>(task, { callId: id, attempt: 1, args: [] }, `${id}#1`);
  c.state = 'queued';
  return c;
}

/** The pool's pump (thread-pool.ts) on plain books: place, assign, keep the rest in order. */
function pump(threads: readonly T[], queue: CallQueue<C>, max: number, now = 0): void {
  const live = (c: C): boolean => c.state === 'queued';
  const { at, to, scanned } = placeTenantCalls(
    threads,
    queue.length,
    (i) => (live(queue.at(i)!) ? tenantOf(queue.at(i)!.task) : undefined),
    max,
    () => 0,
  );
  for (let k = 0; k < at.length; k++) assign(queue.at(at[k]!)!, to[k]!, now);
  queue.compact(scanned, live);
}

function finish(c: C): void {
  release<T, C>(c);
  c.state = 'resolving'; // ended: never placed again
}

function tenantsOn(t: T): Set<string> {
  return new Set([...t.calls].map((c) => tenantOf(c.task)));
}

describe('placeTenantCalls', () => {
  it('a thread holds one tenant; another tenant reserves a thread, drains it, then switches', () => {
    const [a, b] = [thread('a'), thread('b')];
    const threads = [a, b];
    const queue = new CallQueue<C>();
    const alice = [call('alice'), call('alice'), call('alice')];
    for (const c of alice) queue.push(c);
    pump(threads, queue, 4);
    expect([...a.calls].length + [...b.calls].length).toBe(3);
    expect(a.tenant).toBe('alice');
    expect(b.tenant).toBe('alice');
    const bob = call('bob');
    queue.push(bob);
    pump(threads, queue, 4);
    expect(bob.thread).toBeUndefined();
    // The thread with fewer calls is reserved for bob: alice's new calls go to the other one only.
    const reserved = threads.find((t) => t.reservedFor === 'bob')!;
    const other = threads.find((t) => t !== reserved)!;
    expect(reserved.calls.size).toBe(1);
    const more = [call('alice'), call('alice')];
    for (const c of more) queue.push(c);
    pump(threads, queue, 4);
    for (const c of more) expect(c.thread).toBe(other);
    for (const c of [...reserved.calls]) finish(c);
    pump(threads, queue, 4);
    expect(bob.thread).toBe(reserved);
    expect(reserved.tenant).toBe('bob');
    expect(reserved.reservedFor).toBeUndefined();
  });

  it('calls without a tenant are one tenant of their own', () => {
    const [a] = [thread('a')];
    const queue = new CallQueue<C>();
    const anon = call(undefined);
    const carol = call('carol');
    queue.push(anon);
    queue.push(carol);
    pump([a], queue, 4);
    expect(anon.thread).toBe(a);
    expect(carol.thread).toBeUndefined();
    expect(a.reservedFor).toBe('carol');
  });

  it('a waiting call keeps its thread its tenant’s; a reservation with nothing queued is dropped', () => {
    const [a] = [thread('a')];
    const queue = new CallQueue<C>();
    const x = call('x');
    queue.push(x);
    pump([a], queue, 1);
    startWait<T, C>(x, a, 1);
    const y = call('y');
    queue.push(y);
    pump([a], queue, 1);
    expect(y.thread).toBeUndefined(); // a has room, but x waits there
    expect(a.reservedFor).toBe('y');
    y.state = 'resolving'; // cancelled while queued
    pump([a], queue, 1);
    expect(a.reservedFor).toBeUndefined();
    expect(queue.pending).toBe(false);
  });

  it('property: never two tenants on a thread, and every call placed in the end', () => {
    type Step =
      | { kind: 'arrive'; tenant: number }
      | { kind: 'finish'; pick: number }
      | { kind: 'wait'; pick: number }
      | { kind: 'resume'; pick: number };
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.record({ kind: fc.constant('arrive' as const), tenant: fc.nat(3) }),
      fc.record({ kind: fc.constant('finish' as const), pick: fc.nat(50) }),
      fc.record({ kind: fc.constant('wait' as const), pick: fc.nat(50) }),
      fc.record({ kind: fc.constant('resume' as const), pick: fc.nat(50) }),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 3 }),
        fc.array(step, { maxLength: 80 }),
        (n, max, steps) => {
          const threads = Array.from({ length: n }, (_, i) => thread(`t${i}`));
          const queue = new CallQueue<C>();
          const all: C[] = [];
          const onThreads = (): C[] => threads.flatMap((t) => [...t.calls]);
          const check = (): void => {
            for (const t of threads) {
              const tenants = tenantsOn(t);
              expect(tenants.size).toBeLessThanOrEqual(1);
              if (tenants.size === 1) expect(t.tenant).toBe([...tenants][0]);
            }
          };
          let now = 0;
          for (const s of steps) {
            now++;
            const here = onThreads();
            const c = here.length === 0 ? undefined : here[(s as { pick?: number }).pick! % here.length];
            switch (s.kind) {
              case 'arrive': {
                const fresh = call(`tenant${s.tenant}`);
                all.push(fresh);
                queue.push(fresh);
                break;
              }
              case 'finish':
                if (c !== undefined) finish(c);
                break;
              case 'wait':
                if (c !== undefined && c.openWaits === 0) startWait<T, C>(c, c.thread!, now);
                break;
              case 'resume':
                if (c !== undefined && c.openWaits > 0) endWait<T, C>(c, c.thread!, now);
                break;
            }
            pump(threads, queue, max, now);
            check();
          }
          // No more arrivals: waits are answered and calls end, oldest first; everything gets placed.
          for (const c of onThreads()) if (c.openWaits > 0) endWait<T, C>(c, c.thread!, now);
          let rounds = 0;
          while (queue.pending || onThreads().length > 0) {
            expect(++rounds).toBeLessThanOrEqual(all.length + 2);
            for (const c of onThreads()) finish(c);
            pump(threads, queue, max, ++now);
            check();
          }
          for (const c of all) expect(c.state).toBe('resolving');
        },
      ),
      { numRuns: 300 },
    );
  });
});
