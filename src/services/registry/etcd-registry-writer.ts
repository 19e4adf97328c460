// EtcdRegistryWriter: a Worker's registry session in etcd (docs/architecture.md § etcd keys). Every publish
// is a leased put of `<prefix><workerAddr>` = heartbeat JSON; the lease (TTL from config, 10 s by default) is
// kept alive by etcd3 in the background, so a Worker that dies without cleanup vanishes from the registry one
// TTL later.
//
// Lease loss. etcd3 declares a lease `lost` when etcd says it is gone (e.g. etcd came back with an empty
// data dir) or after 2×TTL without a successful keepalive (so a TTL
// above twice the outage rides one out). On `lost` of a lease that had been granted, the writer grants a
// new lease and re-puts every key it holds at once, so the Worker reappears without waiting for its next
// heartbeat. A lease whose grant failed (etcd down) is simply dropped: the next publish grants again, paced
// by the caller's interval, so an outage never turns into a tight retry loop.

import { type ServiceLogger, silentLogger } from '../../kernel/observability/service-logger.js';
import type { Etcd3, Lease } from 'etcd3';
import { useOrCreateEtcdClient, type EtcdSecurity } from './etcd-client.js';
import { encodeWorkerHeartbeat } from '../../contracts/heartbeat.js';
import type { WorkerHeartbeat } from '../../contracts/heartbeat.js';
import { workerKey } from '../../contracts/registry-prefix.js';
import { describeError } from './registry-port.js';
import type { WorkerRegistryWriter } from './registry-port.js';
import { TOP_LEVEL_DEFAULTS } from '../../kernel/config-defaults.js';

/** registry.etcd.leaseTtlMs's default (docs/configuration.md). */
export const DEFAULT_LEASE_TTL_MS = TOP_LEVEL_DEFAULTS.registry.etcd.leaseTtlMs;

export interface EtcdRegistryWriterOptions {
  /** A client to use (not closed by the writer); otherwise one is created from `endpoints` and owned. */
  readonly client?: Etcd3;
  readonly endpoints?: readonly string[];
  /** Unary deadline for an owned client (registry.etcd.dialTimeoutMs). */
  readonly unaryDeadlineMs?: number;
  /** TLS and auth of an owned client (registry.etcd ca/cert/key/username/password; etcdSecurityOf). */
  readonly security?: EtcdSecurity;
  /** Lease TTL (registry.etcd.leaseTtlMs); rounded up to whole seconds, at least 1 s. */
  readonly leaseTtlMs?: number;
  readonly logger?: ServiceLogger;
}

/** etcd leases have whole-second TTLs. */
export function leaseTtlSeconds(ttlMs: number): number {
  return Math.max(1, Math.ceil(ttlMs / 1000));
}

export class EtcdRegistryWriter implements WorkerRegistryWriter {
  private readonly client: Etcd3;
  private readonly ownsClient: boolean;
  private readonly ttlSeconds: number;
  private readonly logger: ServiceLogger;
  /** Last value published per key: what a re-grant re-puts. */
  private readonly held = new Map<string, string>();
  private lease: Lease | undefined;
  private republishing = false;
  private closed = false;
  private leasesGranted = 0;

  constructor(opts: EtcdRegistryWriterOptions) {
    ({ client: this.client, ownsClient: this.ownsClient } = useOrCreateEtcdClient(opts));
    this.ttlSeconds = leaseTtlSeconds(opts.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS);
    this.logger = opts.logger ?? silentLogger;
  }

  /** How many leases this writer has had granted (1 in a quiet life; more after losses). */
  get grantedLeaseCount(): number {
    return this.leasesGranted;
  }

  async publish(prefix: string, heartbeat: WorkerHeartbeat): Promise<void> {
    if (this.closed) throw new Error('EtcdRegistryWriter is closed');
    const key = workerKey(prefix, heartbeat.workerAddr);
    const value = encodeWorkerHeartbeat(heartbeat);
    this.held.set(key, value);
    await this.currentLease().put(key).value(value).exec();
  }

  async remove(prefix: string, workerAddr: string): Promise<void> {
    const key = workerKey(prefix, workerAddr);
    this.held.delete(key);
    await this.client.delete().key(key).exec();
  }

  /** Revokes the lease (etcd deletes every key bound to it); closes the client if the writer owns it. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const lease = this.lease;
    this.lease = undefined;
    this.held.clear();
    try {
      if (lease !== undefined) await lease.revoke();
    } catch (err) {
      this.logger.warn({ err: describeError(err) }, 'lease revoke failed; keys expire with the lease TTL');
    } finally {
      if (this.ownsClient) this.client.close();
    }
  }

  private currentLease(): Lease {
    if (this.lease !== undefined && !this.lease.revoked()) return this.lease;
    const lease = this.client.lease(this.ttlSeconds);
    this.lease = lease;
    let granted = false;
    lease.grant().then(
      () => {
        granted = true;
        this.leasesGranted += 1;
      },
      () => undefined, // reported through 'lost' below
    );
    lease.on('lost', (err: unknown) => {
      if (this.lease !== lease) return;
      this.lease = undefined;
      if (this.closed) return;
      if (!granted) {
        this.logger.debug({ err: describeError(err) }, 'lease grant failed; the next publish retries');
        return;
      }
      this.logger.warn({ err: describeError(err) }, 'etcd lease lost; granting a new lease and re-putting');
      void this.republish();
    });
    return lease;
  }

  private async republish(): Promise<void> {
    if (this.republishing || this.closed || this.held.size === 0) return;
    this.republishing = true;
    try {
      const lease = this.currentLease();
      for (const key of [...this.held.keys()]) {
        // Read the value at put time: a publish racing with this loop may have refreshed it.
        const value = this.held.get(key);
        if (this.closed) return;
        if (value !== undefined) await lease.put(key).value(value).exec();
      }
      this.logger.info({ keys: this.held.size }, 'registry keys re-put under a new lease');
    } catch (err) {
      this.logger.debug(
        { err: describeError(err) },
        're-put after lease loss failed; the next publish retries',
      );
    } finally {
      this.republishing = false;
    }
  }
}
