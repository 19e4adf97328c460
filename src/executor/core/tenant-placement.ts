// Tenants on threads (docs/executor.md § Tenants on threads; issue 32, item 5): calls of different
// tenants (an opaque key per submitter identity, ExecuteCalls.tenant) never run on one execution thread
// at the same time, so a hostile function can reach only its own submitter's calls through the realm it
// shares with them. No IO, no clock.
//
// Theory of operation. A thread's tenant is the tenant of the calls on it (running, waiting on the
// Worker, or sent and not started); a thread with no call has none and takes any tenant. The queue is
// read in order and each call goes to the routable thread with the fewest running calls among those of
// its own tenant or of none, as `pickThread` would choose without tenants. A call that finds no such
// thread, of a tenant that holds no thread at all, reserves one (`reservedFor`): the thread with the
// fewest calls that is not reserved already. A reserved thread takes no new call of any other tenant, so
// it drains, and once empty takes the reserving tenant's calls (which clears the reservation). So a
// tenant with a steady stream of calls cannot keep another off the threads for longer than the calls
// already on one thread take. A reservation whose tenant has no queued call left is dropped.

import { routable, type ThreadLoad } from './pool-scheduler.js';

/** The key of calls that carry no tenant (a Worker that sends none): one tenant among the others. */
export const NO_TENANT = '';

/** What tenant placement reads and keeps of a thread, beside its routing load. */
export interface TenantThread extends ThreadLoad {
  /** The tenant of the calls on the thread; undefined while it has none (pool-calls.ts keeps it). */
  readonly tenant?: string | undefined;
  /** A tenant waiting for this thread: no new calls of others go to it until it has taken one. */
  reservedFor?: string | undefined;
  /** Calls on the thread in any state (a waiting call holds its thread's tenant too). */
  readonly calls: { readonly size: number };
}

/** Where queued calls go: `to[k]` takes the queued call at position `at[k]`; `scanned` positions were read. */
export interface TenantPlacement<T> {
  readonly at: number[];
  readonly to: T[];
  readonly scanned: number;
}

/**
 * Place the first queued calls (`n` of them; `tenantAt(i)` is the tenant of the call at position i, or
 * undefined for one that ended while queued) on `threads`, under the tenant rule above. Sets and clears
 * the threads' reservations. The reading stops once no routable thread has room.
 */
export function placeTenantCalls<T extends TenantThread>(
  threads: readonly T[],
  n: number,
  tenantAt: (i: number) => string | undefined,
  maxCallsPerThread: number,
  beatAgeMs: (t: T) => number,
): TenantPlacement<T> {
  const open: T[] = [];
  const running: number[] = [];
  const tenant: (string | undefined)[] = [];
  let room = 0;
  for (const t of threads) {
    if (!routable(t, beatAgeMs(t), maxCallsPerThread)) continue;
    open.push(t);
    running.push(t.running);
    tenant.push(t.calls.size === 0 ? undefined : t.tenant);
    room++;
  }
  const at: number[] = [];
  const to: T[] = [];
  const blocked = new Set<string>();
  const waiting = new Set<string>();
  let i = 0;
  for (; i < n && room > 0; i++) {
    const x = tenantAt(i);
    if (x === undefined) continue;
    waiting.add(x);
    if (blocked.has(x)) continue;
    let best = -1;
    for (let j = 0; j < open.length; j++) {
      const t = open[j]!;
      if (running[j]! >= maxCallsPerThread) continue;
      if (tenant[j] !== undefined && tenant[j] !== x) continue;
      if (t.reservedFor !== undefined && t.reservedFor !== x) continue;
      if (best < 0 || running[j]! < running[best]!) best = j;
    }
    if (best < 0) {
      blocked.add(x);
      reserveFor(threads, x);
      continue;
    }
    const t = open[best]!;
    at.push(i);
    to.push(t);
    tenant[best] = x;
    if (t.reservedFor === x) t.reservedFor = undefined;
    if (++running[best]! === maxCallsPerThread) room--;
  }
  // The whole queue was read: a reservation of a tenant with nothing queued holds a thread for nothing.
  if (i === n)
    for (const t of threads)
      if (t.reservedFor !== undefined && !waiting.has(t.reservedFor)) t.reservedFor = undefined;
  return { at, to, scanned: i };
}

/** Tenant `x` found no thread: unless it holds one (its own or reserved), reserve the least busy free one. */
function reserveFor<T extends TenantThread>(threads: readonly T[], x: string): void {
  let best: T | undefined;
  for (const t of threads) {
    if (t.dead || t.draining) continue;
    if (t.reservedFor === x || (t.calls.size > 0 && t.tenant === x)) return;
    if (t.reservedFor !== undefined) continue;
    if (best === undefined || t.calls.size < best.calls.size) best = t;
  }
  if (best !== undefined) best.reservedFor = x;
}
