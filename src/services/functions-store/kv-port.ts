// What the functions store needs of a key-value backend: reads with a modification revision, and one
// guarded transaction (compare a key's revision, then apply puts and deletes atomically). Two
// implementations: etcd (etcd-kv.ts, every cluster with `registry.etcd.endpoints`) and in-memory
// (memory-kv.ts: one process, for `blockx up` without etcd and for unit tests).

export interface KvRead {
  readonly value: Buffer;
  /** The key's modification revision; guards the next write. */
  readonly revision: string;
}

export interface KvTxn {
  /** Apply only if `key`'s modification revision is still `revision` ('0': the key must be absent). */
  readonly guard: { readonly key: string; readonly revision: string };
  readonly puts: readonly { readonly key: string; readonly value: Buffer }[];
  readonly deletes: readonly string[];
}

export interface FunctionsKv {
  /** The value and revision of `key`, or undefined when absent. */
  get(key: string): Promise<KvRead | undefined>;
  /** Puts `value` unless `key` exists (content-addressed values never change). True if written. */
  putIfAbsent(key: string, value: Buffer): Promise<boolean>;
  /** Puts `value` whatever `key` holds (repairs a damaged bundle on redeploy). */
  put(key: string, value: Buffer): Promise<void>;
  /** Applies the transaction if its guard holds; false (nothing written) when it did not. */
  commit(txn: KvTxn): Promise<boolean>;
}
