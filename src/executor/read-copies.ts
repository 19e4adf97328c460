// Read copies: an execution thread's copy of the Worker's answers to `ctx.io.get` / `ctx.io.getMany`,
// per Calls phase (the `ioCache` id of ExecuteCall), so that the calls of one task on one thread ask the
// Worker for a key once instead of once per call.
//
// Why it is safe: the Worker's task read cache already answers a key the same way for the whole task
// (the first read is cached, misses too; only a transaction of the task drops entries, and no
// transaction runs while the task's calls do: functions never write, writers run after the Calls
// phase). A copy of an answer is therefore the answer the Worker would give again. Only successful
// answers are kept; a failed read is asked again by the next call, as the Worker's cache does.
//
// Theory of operation:
//  - `lookup(scope, key)` finds an entry: a settled answer (a hit: no frame at all), or a read another
//    call on this thread has in flight (the caller waits for it; if that read fails, the caller asks the
//    Worker itself, so one call's cancellation never becomes another call's error).
//  - `track(scope, key, read, weight)` registers a read just sent to the Worker; its answer is deep-frozen
//    (every call on the thread shares the object) and kept. A read that fails is forgotten.
//  - `drop(scope)` (the Worker's DropIoCache) forgets a Calls phase.
//  - Bounded by `maxEntries` rows per thread over all scopes, as the Worker's cache is bounded by keys: a
//    `get` weighs 1, a `getMany` one per key (`readCopyHits`), so one large getMany cannot hold more rows
//    than the bound. Past the bound, answers are simply not kept (no eviction). 0 turns copies off.
//  - Hits are counted per call by the caller and reported in the call's terminal frame (`ioHits`), so the
//    Worker's hit and miss counts stay exact.
// Pure: no IO, no timers.

import { canonicalJson } from '../kernel/canonical-json.js';
import type { WaitRequest } from './protocol.js';

export type IoRequest = Extract<WaitRequest, { kind: 'io' }>;

export interface ReadCopy {
  /** The read's answer, once it arrived (frozen). */
  readonly settled: boolean;
  readonly value: unknown;
  /** Resolves with the frozen answer, or rejects with the read's error. */
  readonly read: Promise<unknown>;
}

interface Entry extends ReadCopy {
  settled: boolean;
  value: unknown;
  readonly weight: number;
}

interface Scope {
  readonly entries: Map<string, Entry>;
  weight: number;
}

export class ReadCopies {
  private readonly scopes = new Map<string, Scope>();
  private weight = 0;

  constructor(private readonly maxEntries: number) {}

  /** Rows kept now (settled or in flight), over every scope. */
  get size(): number {
    return this.weight;
  }

  get enabled(): boolean {
    return this.maxEntries > 0;
  }

  lookup(scope: string, key: string): ReadCopy | undefined {
    return this.scopes.get(scope)?.entries.get(key);
  }

  /**
   * Keeps `read`'s answer for the other calls of `scope` on this thread. Returns the promise the caller
   * should hand to the function: it resolves with the frozen answer (the same object later hits get).
   */
  track(scope: string, key: string, read: Promise<unknown>, weight = 1): Promise<unknown> {
    const frozen = read.then(deepFreeze);
    const w = Math.max(1, weight);
    if (this.weight + w > this.maxEntries) return frozen;
    let held = this.scopes.get(scope);
    if (held === undefined) {
      held = { entries: new Map(), weight: 0 };
      this.scopes.set(scope, held);
    }
    const owner = held;
    const entry: Entry = { settled: false, value: undefined, read: frozen, weight: w };
    owner.entries.set(key, entry);
    owner.weight += w;
    this.weight += w;
    frozen.then(
      (value) => {
        entry.settled = true;
        entry.value = value;
      },
      () => {
        // Forget a failed read, unless the scope was dropped (and its weight with it) meanwhile.
        if (this.scopes.get(scope) === owner && owner.entries.get(key) === entry) {
          owner.entries.delete(key);
          owner.weight -= w;
          this.weight -= w;
        }
      },
    );
    return frozen;
  }

  /** Forgets every entry of `scope`. */
  drop(scope: string): void {
    const held = this.scopes.get(scope);
    if (held === undefined) return;
    this.scopes.delete(scope);
    this.weight -= held.weight;
  }
}

/**
 * The copy key of a read, or undefined when the read is not copied (scans are not; nor is a key that
 * is not JSON). Object keys are sorted, so `{a, b}` and `{b, a}` are one entry.
 */
export function readCopyKey(request: IoRequest): string | undefined {
  try {
    switch (request.op) {
      case 'get':
        return `get\u0000${request.table}\u0000${canonicalJson(request.key)}`;
      case 'getMany':
        return `getMany\u0000${request.table}\u0000${canonicalJson(request.keys)}`;
      default:
        return undefined;
    }
  } catch {
    return undefined;
  }
}

/** How many Worker cache hits one copied answer stands for: one per key. */
export function readCopyHits(request: IoRequest): number {
  return request.op === 'getMany' ? request.keys.length : 1;
}

/** Freezes an answer and everything in it: every call on the thread shares it. */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const v of Object.values(value as object)) deepFreeze(v);
  return value;
}
