// InProcessRegistry: the registry port for `blockx up`, where one process holds the Coordinator and etcd
// would be overkill; its Workers write here directly, or from their child processes through
// ipc-registry.ts. Same contract as etcd (registry-port.ts): keys
// `<prefix><workerAddr>` hold the heartbeat JSON, a writer is a session whose keys vanish when it closes
// (the lease revoke), and readers get list / put / delete events asynchronously, in order.
//
// For tests and drills it can also simulate a registry outage: `simulateDisconnect()` reports
// `disconnected` on every watched prefix and withholds changes; `simulateReconnect()` re-lists each prefix
// and reports `reconnected`, exactly the sequence the etcd reader produces after etcd comes back.

import type { WorkerHeartbeat } from '../../contracts/heartbeat.js';
import { encodeWorkerHeartbeat } from '../../contracts/heartbeat.js';
import { workerKey } from '../../contracts/registry-prefix.js';
import type {
  RegistryEvent,
  RegistryEventListener,
  RegistryKeyValue,
  RegistryWatch,
  WorkerRegistryReader,
  WorkerRegistryWriter,
} from './registry-port.js';

interface Subscription {
  readonly prefixes: readonly string[];
  readonly listener: RegistryEventListener;
  closed: boolean;
}

export class InProcessRegistry implements WorkerRegistryReader {
  private readonly data = new Map<string, string>();
  private readonly subscriptions = new Set<Subscription>();
  private revision = 0;
  private disconnected = false;

  /** A new writer session. Closing it deletes every key it published. */
  writer(): WorkerRegistryWriter {
    return new InProcessRegistryWriter(this);
  }

  watch(prefixes: readonly string[], listener: RegistryEventListener): RegistryWatch {
    const sub: Subscription = { prefixes: [...new Set(prefixes)], listener, closed: false };
    this.subscriptions.add(sub);
    for (const prefix of sub.prefixes) {
      this.deliver(
        sub,
        this.disconnected
          ? { type: 'disconnected', prefix, reason: 'in-process registry disconnected (simulated)' }
          : this.listEvent(prefix),
      );
    }
    return {
      close: async () => {
        sub.closed = true;
        this.subscriptions.delete(sub);
      },
    };
  }

  /** The raw value under `key`, or undefined. */
  get(key: string): string | undefined {
    return this.data.get(key);
  }

  /** Keys under `prefix` (all keys when omitted), sorted. */
  keys(prefix = ''): string[] {
    return [...this.data.keys()].filter((k) => k.startsWith(prefix)).sort();
  }

  /** Writes a raw value, bypassing any session (e.g. to plant garbage in tests). */
  putRaw(key: string, value: string): void {
    this.data.set(key, value);
    this.revision += 1;
    this.broadcast(key, (prefix) => ({ type: 'put', prefix, key, value }));
  }

  /** Deletes a key, bypassing any session. */
  deleteRaw(key: string): void {
    if (!this.data.delete(key)) return;
    this.revision += 1;
    this.broadcast(key, (prefix) => ({ type: 'delete', prefix, key }));
  }

  /** Every watcher sees `disconnected`; changes are withheld until `simulateReconnect`. */
  simulateDisconnect(reason = 'in-process registry disconnected (simulated)'): void {
    if (this.disconnected) return;
    this.disconnected = true;
    for (const sub of this.subscriptions) {
      for (const prefix of sub.prefixes) this.deliver(sub, { type: 'disconnected', prefix, reason });
    }
  }

  /** Every watcher gets a fresh `list` of each prefix, then `reconnected`. */
  simulateReconnect(): void {
    if (!this.disconnected) return;
    this.disconnected = false;
    for (const sub of this.subscriptions) {
      for (const prefix of sub.prefixes) {
        this.deliver(sub, this.listEvent(prefix));
        this.deliver(sub, { type: 'reconnected', prefix });
      }
    }
  }

  private listEvent(prefix: string): RegistryEvent {
    const entries: RegistryKeyValue[] = this.keys(prefix).map((key) => ({
      key,
      value: this.data.get(key) as string,
    }));
    return { type: 'list', prefix, entries, revision: String(this.revision) };
  }

  private broadcast(key: string, event: (prefix: string) => RegistryEvent): void {
    if (this.disconnected) return;
    for (const sub of this.subscriptions) {
      for (const prefix of sub.prefixes) {
        if (key.startsWith(prefix) && key.length > prefix.length) this.deliver(sub, event(prefix));
      }
    }
  }

  /** Asynchronous like real IO, FIFO across all events; nothing reaches a closed subscription. */
  private deliver(sub: Subscription, event: RegistryEvent): void {
    queueMicrotask(() => {
      if (!sub.closed) sub.listener(event);
    });
  }
}

/** One writer session of an InProcessRegistry. */
class InProcessRegistryWriter implements WorkerRegistryWriter {
  private readonly held = new Set<string>();
  private closed = false;

  constructor(private readonly registry: InProcessRegistry) {}

  async publish(prefix: string, heartbeat: WorkerHeartbeat): Promise<void> {
    if (this.closed) throw new Error('in-process registry writer is closed');
    const key = workerKey(prefix, heartbeat.workerAddr);
    this.held.add(key);
    this.registry.putRaw(key, encodeWorkerHeartbeat(heartbeat));
  }

  async remove(prefix: string, workerAddr: string): Promise<void> {
    const key = workerKey(prefix, workerAddr);
    this.held.delete(key);
    this.registry.deleteRaw(key);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const key of this.held) this.registry.deleteRaw(key);
    this.held.clear();
  }
}
