// Merging the Worker views of several registry prefixes into one (docs/coordinator.md § The registry watch;
// the legacy → v2 prefix migration). During a migration one Worker may be registered under a legacy and a
// v2 prefix at once; the Coordinator must see it once. Per workerAddr the winning entry is:
//   1. the one with the newer heartbeat.lastHeartbeatMs;
//   2. on a tie, the v2 entry over the legacy one;
//   3. on a further tie, the entry whose prefix string is lexicographically SMALLER (UTF-16 code-unit
//      order, i.e. byte order for the ASCII prefixes allowed), so the result never depends on the order
//      in which etcd events arrived.
// Pure: the etcd watcher adapter feeds events in and applies the resulting changes to CoordinatorCore.

import type { WorkerHeartbeat } from '../../../contracts/heartbeat.js';
import type { RegistryPrefixFormat } from '../../../contracts/registry-prefix.js';

export interface RegistryEntry {
  readonly prefix: string;
  readonly format: RegistryPrefixFormat;
  readonly heartbeat: WorkerHeartbeat;
}

/** True when `a` strictly beats `b` for the same workerAddr. */
export function registryEntryWins(a: RegistryEntry, b: RegistryEntry): boolean {
  const at = a.heartbeat.lastHeartbeatMs;
  const bt = b.heartbeat.lastHeartbeatMs;
  if (at !== bt) return at > bt;
  if (a.format !== b.format) return a.format === 'v2';
  return a.prefix < b.prefix;
}

/**
 * The winning entry per workerAddr (in order of first appearance). Among entries that tie on every rule
 * (same prefix, same timestamp) the first one listed is kept.
 */
export function mergeHeartbeats(entries: Iterable<RegistryEntry>): Map<string, RegistryEntry> {
  const winners = new Map<string, RegistryEntry>();
  for (const e of entries) {
    const addr = e.heartbeat.workerAddr;
    const current = winners.get(addr);
    if (current === undefined || registryEntryWins(e, current)) winners.set(addr, e);
  }
  return winners;
}
