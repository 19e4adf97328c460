// EtcdRegistryReader: list+watch of registry prefixes in etcd, as RegistryEvents (registry-port.ts).
//
// Per prefix, one loop:
//   1. list:  getAll().prefix(p) → the contents and the revision R they were read at;
//   2. watch: watch().prefix(p).startRevision(R + 1), listeners attached at once; once etcd confirms the
//      watch, report `list` (then `reconnected` if this ends an outage) and forward put/delete live.
//      Nothing between the list and the watch is lost: the watch replays from R + 1.
//   3. on any watch failure (stream error, cancel, end) or list failure: report `disconnected` once per
//      outage, drop the watcher, wait `retryDelayMs`, and start again at 1 with a FULL re-list.
// We do not let etcd3 resume a broken watch by itself: if etcd came back with an empty data dir its
// revision went backwards and a resumed watch would silently receive nothing. A full re-list is correct
// whatever happened meanwhile; a revision lower than the last one seen is logged as a data-dir reset.
// Every key carries its lease id ("0" = none) so the consumer can ignore keys no Worker session wrote.

import { type ServiceLogger, silentLogger } from '../../kernel/observability/service-logger.js';
import type { Etcd3, IKeyValue, Watcher } from 'etcd3';
import { useOrCreateEtcdClient, type EtcdSecurity } from './etcd-client.js';
import { describeError } from './registry-port.js';
import type {
  RegistryEvent,
  RegistryEventListener,
  RegistryWatch,
  WorkerRegistryReader,
} from './registry-port.js';
import { defaultCoordinatorConfig } from '../../kernel/config-defaults.js';

/** coordinator.etcdWatchRetryDelayMs's default (docs/configuration.md). */
export const DEFAULT_ETCD_WATCH_RETRY_DELAY_MS = defaultCoordinatorConfig('block').etcdWatchRetryDelayMs;
/** Upper bound on waiting for etcd to confirm a watch cancel while stopping. */
const CANCEL_WAIT_MS = 1_000;

export interface EtcdRegistryReaderOptions {
  /** A client to use (not closed by the reader); otherwise one is created from `endpoints` and owned. */
  readonly client?: Etcd3;
  readonly endpoints?: readonly string[];
  /** Unary deadline for an owned client (COORDINATOR_ETCD_DIAL_TIMEOUT_MS). */
  readonly unaryDeadlineMs?: number;
  /** TLS and auth of an owned client (registry.etcd ca/cert/key/username/password; etcdSecurityOf). */
  readonly security?: EtcdSecurity;
  /** Pause between a failure and the next list+watch attempt (COORDINATOR_ETCD_WATCH_RETRY_DELAY_MS). */
  readonly retryDelayMs?: number;
  readonly logger?: ServiceLogger;
}

export class EtcdRegistryReader implements WorkerRegistryReader {
  private readonly client: Etcd3;
  private readonly ownsClient: boolean;
  private readonly retryDelayMs: number;
  private readonly logger: ServiceLogger;
  private readonly watches = new Set<RegistryWatch>();
  private closed = false;

  constructor(opts: EtcdRegistryReaderOptions) {
    ({ client: this.client, ownsClient: this.ownsClient } = useOrCreateEtcdClient(opts));
    this.retryDelayMs = opts.retryDelayMs ?? DEFAULT_ETCD_WATCH_RETRY_DELAY_MS;
    this.logger = opts.logger ?? silentLogger;
  }

  watch(prefixes: readonly string[], listener: RegistryEventListener): RegistryWatch {
    if (this.closed) throw new Error('EtcdRegistryReader is closed');
    const loops = [...new Set(prefixes)].map(
      (prefix) => new PrefixWatchLoop(this.client, prefix, listener, this.retryDelayMs, this.logger),
    );
    for (const loop of loops) loop.start();
    let closing: Promise<void> | undefined;
    const handle: RegistryWatch = {
      close: () => {
        closing ??= Promise.all(loops.map((l) => l.stop())).then(() => {
          this.watches.delete(handle);
        });
        return closing;
      },
    };
    this.watches.add(handle);
    return handle;
  }

  /** Stops every watch; closes the client if the reader created it. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.watches].map((w) => w.close()));
    if (this.ownsClient) this.client.close();
  }
}

class PrefixWatchLoop {
  private stopped = false;
  /** An outage has been reported and not yet ended by a successful re-list. */
  private outage = false;
  private lastRevision: bigint | undefined;
  private watcher: Watcher | undefined;
  /** Ends the current watch attempt (resolves its promise) with a reason. */
  private endAttempt: ((reason: string) => void) | undefined;
  private wake: (() => void) | undefined;

  constructor(
    private readonly client: Etcd3,
    private readonly prefix: string,
    private readonly listener: RegistryEventListener,
    private readonly retryDelayMs: number,
    private readonly logger: ServiceLogger,
  ) {}

  start(): void {
    void this.run();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.wake?.();
    this.endAttempt?.('stopped');
    await this.dropWatcher();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let reason: string;
      try {
        reason = await this.listAndWatch();
      } catch (err) {
        reason = `list failed: ${describeError(err)}`;
      }
      if (this.stopped) return;
      await this.dropWatcher();
      if (!this.outage) {
        this.outage = true;
        this.logger.warn({ prefix: this.prefix, reason }, 'registry watch disconnected');
        this.emit({ type: 'disconnected', prefix: this.prefix, reason });
      } else {
        this.logger.debug({ prefix: this.prefix, reason }, 'registry watch retry failed');
      }
      await this.sleep(this.retryDelayMs);
    }
  }

  /** One list+watch attempt; resolves with the reason it ended (never while healthy). */
  private async listAndWatch(): Promise<string> {
    const res = await this.client.getAll().prefix(this.prefix).exec();
    if (this.stopped) return 'stopped';
    const revision = BigInt(res.header.revision);
    if (this.lastRevision !== undefined && revision < this.lastRevision) {
      this.logger.warn(
        { prefix: this.prefix, revision: String(revision), lastRevision: String(this.lastRevision) },
        'etcd revision went backwards (data dir reset?); re-listed from scratch',
      );
    }
    const entries = res.kvs.map((kv) => ({
      key: kv.key.toString('utf8'),
      value: kv.value,
      lease: String(kv.lease),
    }));

    const watcher = this.client
      .watch()
      .prefix(this.prefix)
      .startRevision((revision + 1n).toString())
      .watcher();
    this.watcher = watcher;

    return new Promise<string>((resolve) => {
      let live = false;
      let ended = false;
      const end = (reason: string): void => {
        if (ended) return;
        ended = true;
        this.endAttempt = undefined;
        resolve(reason);
      };
      this.endAttempt = end;
      const track = (kv: IKeyValue): void => {
        const rev = BigInt(kv.mod_revision);
        if (this.lastRevision === undefined || rev > this.lastRevision) this.lastRevision = rev;
      };
      watcher.on('connected', () => {
        if (live || ended || this.stopped) return;
        live = true;
        this.lastRevision = revision;
        this.emit({ type: 'list', prefix: this.prefix, entries, revision: String(revision) });
        if (this.outage) {
          this.outage = false;
          this.logger.info({ prefix: this.prefix, revision: String(revision) }, 'registry watch reconnected');
          this.emit({ type: 'reconnected', prefix: this.prefix });
        }
      });
      watcher.on('put', (kv) => {
        if (!live || ended) return;
        track(kv);
        this.emit({
          type: 'put',
          prefix: this.prefix,
          key: kv.key.toString('utf8'),
          value: kv.value,
          lease: String(kv.lease),
        });
      });
      watcher.on('delete', (kv) => {
        if (!live || ended) return;
        track(kv);
        this.emit({ type: 'delete', prefix: this.prefix, key: kv.key.toString('utf8') });
      });
      watcher.on('disconnected', (err) => end(`watch disconnected: ${describeError(err)}`));
      watcher.on('error', (err) => end(`watch error: ${describeError(err)}`));
      watcher.on('end', () => end('watch ended'));
    });
  }

  private async dropWatcher(): Promise<void> {
    const w = this.watcher;
    if (w === undefined) return;
    this.watcher = undefined;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      w.cancel().catch(() => undefined),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, CANCEL_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
  }

  private emit(event: RegistryEvent): void {
    if (this.stopped) return;
    try {
      this.listener(event);
    } catch (err) {
      this.logger.error(
        { prefix: this.prefix, event: event.type, err: describeError(err) },
        'registry event listener threw',
      );
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = undefined;
        done();
      };
    });
  }
}
