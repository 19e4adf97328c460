// EtcdRegistry: the etcd implementation of the registry port, sharing one tuned etcd3 client
// (etcd-client.ts) between any number of readers and writers. A process that only reads (the
// Coordinator) or only writes (a Worker) may instead construct EtcdRegistryReader / EtcdRegistryWriter
// directly with `endpoints`; each then owns a client of its own.

import { type ServiceLogger, silentLogger } from '../../kernel/observability/service-logger.js';
import type { Etcd3 } from 'etcd3';
import { createEtcdClient } from './etcd-client.js';
import { EtcdRegistryReader } from './etcd-registry-reader.js';
import { EtcdRegistryWriter } from './etcd-registry-writer.js';

export { EtcdRegistryReader } from './etcd-registry-reader.js';
export type { EtcdRegistryReaderOptions } from './etcd-registry-reader.js';
export { EtcdRegistryWriter, leaseTtlSeconds } from './etcd-registry-writer.js';
export type { EtcdRegistryWriterOptions } from './etcd-registry-writer.js';
export { createEtcdClient, normalizeEtcdEndpoint, tunedFaultHandling } from './etcd-client.js';

export interface EtcdRegistryOptions {
  readonly endpoints: readonly string[];
  /** Deadline of every unary call (default 5 s). */
  readonly unaryDeadlineMs?: number;
  readonly logger?: ServiceLogger;
}

export class EtcdRegistry {
  readonly client: Etcd3;
  private readonly logger: ServiceLogger;
  private readonly readers: EtcdRegistryReader[] = [];
  private readonly writers: EtcdRegistryWriter[] = [];

  constructor(opts: EtcdRegistryOptions) {
    this.client = createEtcdClient({
      endpoints: opts.endpoints,
      ...(opts.unaryDeadlineMs === undefined ? {} : { unaryDeadlineMs: opts.unaryDeadlineMs }),
    });
    this.logger = opts.logger ?? silentLogger;
  }

  /** A reader on the shared client; `retryDelayMs` is the pause between failed list+watch attempts. */
  reader(opts: { retryDelayMs?: number } = {}): EtcdRegistryReader {
    const r = new EtcdRegistryReader({ client: this.client, logger: this.logger, ...opts });
    this.readers.push(r);
    return r;
  }

  /** A writer session (one lease) on the shared client. */
  writer(opts: { leaseTtlMs?: number } = {}): EtcdRegistryWriter {
    const w = new EtcdRegistryWriter({ client: this.client, logger: this.logger, ...opts });
    this.writers.push(w);
    return w;
  }

  /** Closes every reader and writer made here (writers revoke their leases), then the client. */
  async close(): Promise<void> {
    await Promise.all([...this.readers.map((r) => r.close()), ...this.writers.map((w) => w.close())]);
    this.client.close();
  }
}
