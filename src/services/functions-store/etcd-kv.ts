// The etcd backend of the functions store (kv-port.ts). Values are plain keys (no lease: a deployment
// outlives every process); a transaction compares the guard key's mod revision (0 for an absent key,
// etcd's own convention) and applies its puts and deletes in one etcd Txn.

import type { Etcd3 } from 'etcd3';
import type { FunctionsKv, KvRead, KvTxn } from './kv-port.js';

export class EtcdFunctionsKv implements FunctionsKv {
  constructor(private readonly client: Etcd3) {}

  async get(key: string): Promise<KvRead | undefined> {
    const res = await this.client.get(key).exec();
    const kv = res.kvs[0];
    if (kv === undefined) return undefined;
    return { value: Buffer.from(kv.value), revision: String(kv.mod_revision) };
  }

  async putIfAbsent(key: string, value: Buffer): Promise<boolean> {
    const res = await this.client.if(key, 'Create', '==', 0).then(this.client.put(key).value(value)).commit();
    return res.succeeded;
  }

  async put(key: string, value: Buffer): Promise<void> {
    await this.client.put(key).value(value);
  }

  async commit(txn: KvTxn): Promise<boolean> {
    const ops = [
      ...txn.puts.map((p) => this.client.put(p.key).value(p.value)),
      ...txn.deletes.map((k) => this.client.delete().key(k)),
    ];
    const res = await this.client
      .if(txn.guard.key, 'Mod', '==', Number(txn.guard.revision))
      .then(...ops)
      .commit();
    return res.succeeded;
  }
}
