// The in-memory backend of the functions store (kv-port.ts): one process only. `blockx up` without etcd
// and unit tests use it. Revisions are a store-wide counter, like etcd's. `tamper()` rewrites a value
// without touching the index, as an attacker (or a bad disk) would, for tests of the hash check.

import type { FunctionsKv, KvRead, KvTxn } from './kv-port.js';

export class MemoryFunctionsKv implements FunctionsKv {
  private readonly data = new Map<string, { value: Buffer; revision: number }>();
  private revision = 0;

  get(key: string): Promise<KvRead | undefined> {
    const e = this.data.get(key);
    return Promise.resolve(
      e === undefined ? undefined : { value: Buffer.from(e.value), revision: String(e.revision) },
    );
  }

  putIfAbsent(key: string, value: Buffer): Promise<boolean> {
    if (this.data.has(key)) return Promise.resolve(false);
    this.set(key, value);
    return Promise.resolve(true);
  }

  put(key: string, value: Buffer): Promise<void> {
    this.set(key, value);
    return Promise.resolve();
  }

  commit(txn: KvTxn): Promise<boolean> {
    const held = String(this.data.get(txn.guard.key)?.revision ?? 0);
    if (held !== txn.guard.revision) return Promise.resolve(false);
    this.revision += 1;
    for (const p of txn.puts) this.data.set(p.key, { value: Buffer.from(p.value), revision: this.revision });
    for (const k of txn.deletes) this.data.delete(k);
    return Promise.resolve(true);
  }

  /** Keys held, sorted (tests). */
  keys(): string[] {
    return [...this.data.keys()].sort();
  }

  /** Overwrites a value behind the store's back (tests of tamper detection). */
  tamper(key: string, value: Buffer): void {
    this.set(key, value);
  }

  private set(key: string, value: Buffer): void {
    this.revision += 1;
    this.data.set(key, { value: Buffer.from(value), revision: this.revision });
  }
}
