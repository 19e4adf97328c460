// PrefixMergeView: the per-prefix registry contents and their merged view, maintained incrementally.
// The etcd watcher adapter keeps one; each list or watch event of one prefix goes in, and out comes the
// change (if any) to apply to CoordinatorCore. A Worker leaves the merged view only when it is gone from
// every prefix; when its winning entry disappears but another prefix still has it, the other entry takes
// over (an `upsert` with that entry's heartbeat). Merge rules: see prefix-merge.ts.
//
// Entries are keyed by heartbeat.workerAddr, so the adapter must only put values whose workerAddr equals
// the key suffix (contracts/heartbeat.ts `parseWorkerRegistration` checks that), else a later delete by key
// would miss the entry.

import type { WorkerHeartbeat } from '../../../contracts/heartbeat.js';
import type { RegistryPrefixFormat } from '../../../contracts/registry-prefix.js';
import { CoordinatorError, CoordinatorErrorCode } from './errors.js';
import { registryEntryWins } from './prefix-merge.js';
import type { RegistryEntry } from './prefix-merge.js';

export type MergeChange =
  /** The merged heartbeat of `workerAddr` is now `entry.heartbeat`: apply it as a worker update. */
  | { readonly type: 'upsert'; readonly workerAddr: string; readonly entry: RegistryEntry }
  /** `workerAddr` is gone from every prefix: apply a worker removal. */
  | { readonly type: 'remove'; readonly workerAddr: string };

interface PrefixState {
  readonly format: RegistryPrefixFormat;
  entries: Map<string, RegistryEntry>;
}

export class PrefixMergeView {
  private readonly byPrefix = new Map<string, PrefixState>();
  private readonly winners = new Map<string, RegistryEntry>();

  /** Throws CoordinatorError(InvalidArgument) on an empty or duplicate prefix list. */
  constructor(prefixes: readonly { readonly prefix: string; readonly format: RegistryPrefixFormat }[]) {
    if (prefixes.length === 0) throw invalid('at least one registry prefix is required');
    for (const { prefix, format } of prefixes) {
      if (this.byPrefix.has(prefix)) throw invalid(`duplicate registry prefix ${JSON.stringify(prefix)}`);
      this.byPrefix.set(prefix, { format, entries: new Map() });
    }
  }

  get prefixes(): readonly string[] {
    return [...this.byPrefix.keys()];
  }

  /** Number of distinct Workers in the merged view. */
  get size(): number {
    return this.winners.size;
  }

  /** A Worker's heartbeat under `prefix` was put (created or refreshed). */
  put(prefix: string, heartbeat: WorkerHeartbeat): MergeChange | undefined {
    const state = this.state(prefix);
    state.entries.set(heartbeat.workerAddr, { prefix, format: state.format, heartbeat });
    return this.recompute(heartbeat.workerAddr);
  }

  /** A Worker's key under `prefix` was deleted (or its lease expired). Unknown addresses are a no-op. */
  delete(prefix: string, workerAddr: string): MergeChange | undefined {
    const state = this.state(prefix);
    if (!state.entries.delete(workerAddr)) return undefined;
    return this.recompute(workerAddr);
  }

  /** `prefix` was (re-)listed: its contents are exactly `heartbeats` now. Returns every resulting change. */
  replacePrefix(prefix: string, heartbeats: readonly WorkerHeartbeat[]): MergeChange[] {
    const state = this.state(prefix);
    const affected = new Set(state.entries.keys());
    const next = new Map<string, RegistryEntry>();
    for (const heartbeat of heartbeats) {
      next.set(heartbeat.workerAddr, { prefix, format: state.format, heartbeat });
      affected.add(heartbeat.workerAddr);
    }
    state.entries = next;
    const changes: MergeChange[] = [];
    for (const addr of affected) {
      const change = this.recompute(addr);
      if (change !== undefined) changes.push(change);
    }
    return changes;
  }

  /** The winning entry of one Worker, or undefined. */
  winner(workerAddr: string): RegistryEntry | undefined {
    return this.winners.get(workerAddr);
  }

  /** The merged heartbeats, one per Worker: the input for CoordinatorCore.applyFullWorkerList. */
  merged(): WorkerHeartbeat[] {
    return [...this.winners.values()].map((e) => e.heartbeat);
  }

  /**
   * Distinct Workers registered under prefixes of each format (a Worker under both counts in both), for
   * the `blockx_coordinator_registry_workers{format}` gauge that tracks a migration's progress.
   */
  countsByFormat(): Record<RegistryPrefixFormat, number> {
    const seen: Record<RegistryPrefixFormat, Set<string>> = { legacy: new Set(), v2: new Set() };
    for (const state of this.byPrefix.values()) {
      for (const addr of state.entries.keys()) seen[state.format].add(addr);
    }
    return { legacy: seen.legacy.size, v2: seen.v2.size };
  }

  private state(prefix: string): PrefixState {
    const state = this.byPrefix.get(prefix);
    if (state === undefined) throw invalid(`unknown registry prefix ${JSON.stringify(prefix)}`);
    return state;
  }

  private recompute(workerAddr: string): MergeChange | undefined {
    let best: RegistryEntry | undefined;
    for (const state of this.byPrefix.values()) {
      const e = state.entries.get(workerAddr);
      if (e !== undefined && (best === undefined || registryEntryWins(e, best))) best = e;
    }
    const previous = this.winners.get(workerAddr);
    if (best === previous) return undefined;
    if (best === undefined) {
      this.winners.delete(workerAddr);
      return { type: 'remove', workerAddr };
    }
    this.winners.set(workerAddr, best);
    return { type: 'upsert', workerAddr, entry: best };
  }
}

function invalid(message: string): CoordinatorError {
  return new CoordinatorError(CoordinatorErrorCode.InvalidArgument, message);
}
