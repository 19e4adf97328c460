// Rendezvous (highest-random-weight) hashing for the `affinity` placement policy (docs/placement.md).
//
// Every (taskId, Worker) pair gets a pseudo-random score; a task goes to the routable Worker with the
// highest score. While the set of routable Workers stays the same, a task id always lands on the same
// Worker, and when a Worker leaves only the tasks whose top Worker it was move (to their second-highest).
//
// The score must be stable across processes and restarts (two Coordinators, or one restarted, agree), so
// it is a fixed function, not a seeded one: FNV-1a over the string's UTF-16 code units, finished with the
// murmur3 32-bit finalizer for avalanche (FNV-1a alone mixes its last characters poorly, and Worker
// addresses differ mostly in their last digits). The Worker's half is computed once per view; the task's
// once per selection; combining them is one xor and one finalizer per Worker, so the scan stays O(n)
// without allocation. fmix32 is a bijection, so two Workers with different address hashes never tie.

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/**
 * murmur3's fmix32: a bijective 32-bit mixer with full avalanche. The same six lines as `avalanche` in
 * storage/block-data/prng.ts, kept here on purpose: the coordinator core depends on nothing outside itself
 * but types, and a storage generator is no place for routing to hang from.
 */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A stable 32-bit hash of `s` (FNV-1a over UTF-16 code units, then fmix32). */
export function hashString32(s: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, FNV_PRIME);
  }
  return fmix32(h >>> 0);
}

/** Mixed into every score: keeps a task whose hash equals a Worker's from scoring fmix32(0) there. */
export const RENDEZVOUS_SALT = 0x9e3779b9 | 0;

/**
 * The rendezvous score of a task (by its hash) on a Worker (by its address hash). Higher wins. A signed
 * int32 on purpose: a Smi, so the selection loop allocates nothing (an unsigned value above 2^31 would be
 * a heap number). Any fixed total order works for rendezvous hashing.
 */
export function rendezvousScore(taskHash: number, addrHash: number): number {
  // fmix32 without the final unsigned conversion. selection.ts inlines the same lines in its loop; the
  // affinity tests compare the two.
  let h = taskHash ^ addrHash ^ RENDEZVOUS_SALT;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}
