// EtcdWorkerWatcher (docs/coordinator.md § The registry watch): keeps the CoordinatorCore's Worker view in
// step with the registry. It consumes a WorkerRegistryReader — etcd's list+watch per prefix in production,
// the in-process registry under `blockx up` — so the name is historical: the code does not care which
// registry it is.
//
//   - A key with no lease (etcd lease "0") is ignored: every real Worker writes under its session's lease
//     (registry/etcd-registry-writer.ts), so a lease-less key was put by hand or by an attacker, and it
//     would otherwise never expire (docs/security.md § The registry). Warned once per key.
//   - Every value is parsed strictly (contracts/heartbeat.ts); a garbage value is skipped with a warning
//     (once per key and value), and a key whose value turned to garbage leaves the view.
//   - Several prefixes are merged per workerAddr by PrefixMergeView (newer heartbeat, then v2 over legacy,
//     then prefix string); a Worker leaves the view only when it is gone from every prefix.
//   - Nothing reaches the core before EVERY prefix has listed once; then one applyFullWorkerList, and from
//     then on the merge view's changes as updates and removals.
//   - A prefix's `disconnected` → markWatchDisconnected(now) (the core keeps the first one of an outage);
//     when every prefix is back (re-listed and watching) → markWatchReconnected(now).
// All core writes go through the server's write lock, the only synchronisation point.

import { type ServiceLogger, silentLogger } from '../../../kernel/observability/service-logger.js';
import type { CoordinatorCore } from '../core/coordinator-core.js';
import { PrefixMergeView } from '../core/prefix-merge-view.js';
import type { MergeChange } from '../core/prefix-merge-view.js';
import { parseWorkerRegistration } from '../../../contracts/heartbeat.js';
import type { HeartbeatParseError } from '../../../contracts/errors.js';
import type { WorkerHeartbeat } from '../../../contracts/heartbeat.js';
import { workerAddrFromKey } from '../../../contracts/registry-prefix.js';
import type { RegistryPrefixFormat } from '../../../contracts/registry-prefix.js';
import { describeError } from '../../registry/registry-port.js';
import type { RegistryEvent, RegistryWatch, WorkerRegistryReader } from '../../registry/registry-port.js';

/** The part of CoordinatorServer the watcher needs: the core under the write lock. */
export interface CoreWriteAccess {
  withCoreWrite<T>(fn: (core: CoordinatorCore) => T): Promise<T>;
}

export interface WorkerWatcherOptions {
  readonly reader: WorkerRegistryReader;
  /** The validated registry prefixes with their format (contracts/registry-prefix.ts). */
  readonly prefixes: readonly { readonly prefix: string; readonly format: RegistryPrefixFormat }[];
  readonly server: CoreWriteAccess;
  /** UTC ms (default Date.now). */
  readonly clock?: () => number;
  readonly logger?: ServiceLogger;
  /** A Worker left the view (e.g. so its gRPC channel can be closed). */
  readonly onWorkerRemoved?: (workerAddr: string) => void;
  /** Called after every change applied to the core (e.g. to refresh health). */
  readonly onCoreChanged?: () => void;
}

interface PrefixState {
  listed: boolean;
  connected: boolean;
}

export interface WatcherStats {
  readonly initialized: boolean;
  readonly workers: number;
  readonly byFormat: Record<RegistryPrefixFormat, number>;
  /** Values skipped because they do not parse (or fail the heartbeat's plausibility bounds). */
  readonly skippedValues: number;
  /** Values skipped because their key has no lease. */
  readonly unleasedValues: number;
  readonly disconnectedPrefixes: readonly string[];
}

export class EtcdWorkerWatcher {
  private readonly opts: WorkerWatcherOptions;
  private readonly merge: PrefixMergeView;
  private readonly prefixState = new Map<string, PrefixState>();
  private readonly clock: () => number;
  private readonly logger: ServiceLogger;
  /** Key → the raw value last warned about, so a garbage key is reported once, not on every re-list. */
  private readonly warned = new Map<string, string>();
  private initialized = false;
  private skippedValues = 0;
  private unleasedValues = 0;
  /** Lease-less keys already warned about (once per key until it is deleted). */
  private readonly warnedUnleased = new Set<string>();
  private watch: RegistryWatch | undefined;

  constructor(opts: WorkerWatcherOptions) {
    this.opts = opts;
    this.merge = new PrefixMergeView(opts.prefixes);
    for (const { prefix } of opts.prefixes) this.prefixState.set(prefix, { listed: false, connected: true });
    this.clock = opts.clock ?? Date.now;
    this.logger = opts.logger ?? silentLogger;
  }

  start(): void {
    if (this.watch !== undefined) return;
    this.watch = this.opts.reader.watch(this.merge.prefixes, (ev) => this.onEvent(ev));
  }

  async stop(): Promise<void> {
    const w = this.watch;
    this.watch = undefined;
    await w?.close();
  }

  get stats(): WatcherStats {
    return {
      initialized: this.initialized,
      workers: this.merge.size,
      byFormat: this.merge.countsByFormat(),
      skippedValues: this.skippedValues,
      unleasedValues: this.unleasedValues,
      disconnectedPrefixes: [...this.prefixState].filter(([, s]) => !s.connected).map(([p]) => p),
    };
  }

  /** Handles one registry event. Public for tests that drive the watcher without a reader. */
  onEvent(ev: RegistryEvent): void {
    const state = this.prefixState.get(ev.prefix);
    if (state === undefined) return; // not ours
    const now = this.clock();
    switch (ev.type) {
      case 'list': {
        const heartbeats: WorkerHeartbeat[] = [];
        for (const { key, value, lease } of ev.entries) {
          const hb = this.parse(ev.prefix, key, value, lease);
          if (hb !== undefined) heartbeats.push(hb);
        }
        const changes = this.merge.replacePrefix(ev.prefix, heartbeats);
        state.listed = true;
        if (this.initialized) {
          this.apply(changes, now);
        } else if ([...this.prefixState.values()].every((s) => s.listed)) {
          this.initialized = true;
          const list = this.merge.merged();
          this.write((core) => core.applyFullWorkerList(list, now));
          this.logger.info(
            { workers: list.length, prefixes: this.merge.prefixes },
            'worker view initialized from the registry',
          );
        }
        return;
      }
      case 'put': {
        const hb = this.parse(ev.prefix, ev.key, ev.value, ev.lease);
        if (hb !== undefined) {
          this.apply([this.merge.put(ev.prefix, hb)], now);
          return;
        }
        // The key no longer holds a valid registration: whatever it held before is gone.
        const addr = workerAddrFromKey(ev.prefix, ev.key);
        if (addr !== undefined) this.apply([this.merge.delete(ev.prefix, addr)], now);
        return;
      }
      case 'delete': {
        this.warned.delete(ev.key);
        this.warnedUnleased.delete(ev.key);
        const addr = workerAddrFromKey(ev.prefix, ev.key);
        if (addr !== undefined) this.apply([this.merge.delete(ev.prefix, addr)], now);
        return;
      }
      case 'disconnected':
        state.connected = false;
        this.write((core) => core.markWatchDisconnected(now));
        return;
      case 'reconnected':
        state.connected = true;
        if ([...this.prefixState.values()].every((s) => s.connected && s.listed)) {
          this.write((core) => core.markWatchReconnected(now));
          this.logger.info({ prefixes: this.merge.prefixes }, 'registry watch reconnected on every prefix');
        }
        return;
      default: {
        const _exhaustive: never = ev;
        throw new Error(`unknown registry event ${JSON.stringify(_exhaustive)}`);
      }
    }
  }

  private parse(
    prefix: string,
    key: string,
    value: string | Uint8Array,
    lease: string | undefined,
  ): WorkerHeartbeat | undefined {
    if (lease === '0') {
      this.unleasedValues += 1;
      if (!this.warnedUnleased.has(key)) {
        this.warnedUnleased.add(key);
        this.logger.warn(
          { key, reason: 'no lease' },
          'ignoring worker registration written without a lease (never routed to)',
        );
      }
      return undefined;
    }
    this.warnedUnleased.delete(key);
    const r = parseWorkerRegistration(prefix, key, value);
    if (r.ok) {
      this.warned.delete(key);
      return r.value;
    }
    this.skippedValues += 1;
    this.warnOnce(key, value, r.error);
    return undefined;
  }

  private warnOnce(key: string, value: string | Uint8Array, error: HeartbeatParseError): void {
    const raw = typeof value === 'string' ? value : Buffer.from(value).toString('utf8');
    if (this.warned.get(key) === raw) return;
    this.warned.set(key, raw);
    this.logger.warn(
      { key, field: error.field, error: error.message, value: raw.slice(0, 200) },
      'skipping unparseable worker registration',
    );
  }

  private apply(changes: readonly (MergeChange | undefined)[], now: number): void {
    if (!this.initialized) return;
    const effective = changes.filter((c): c is MergeChange => c !== undefined);
    if (effective.length === 0) return;
    this.write((core) => {
      for (const c of effective) {
        if (c.type === 'upsert') core.applyWorkerUpdate(c.entry.heartbeat, now);
        else core.applyWorkerRemoval(c.workerAddr, now);
      }
    });
    for (const c of effective) {
      if (c.type === 'remove') {
        this.logger.info({ workerAddr: c.workerAddr }, 'worker left the registry');
        this.opts.onWorkerRemoved?.(c.workerAddr);
      }
    }
  }

  private write(fn: (core: CoordinatorCore) => void): void {
    this.opts.server.withCoreWrite(fn).then(
      () => this.opts.onCoreChanged?.(),
      (err: unknown) => this.logger.error({ err: describeError(err) }, 'applying a registry change failed'),
    );
  }
}
