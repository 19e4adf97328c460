// The Function Code View: snapshots of the functions directory, one per code epoch.
//
// An epoch id is a content hash of every function file (name + source), so it changes when a file is
// added, changed or removed, is the same in every process that looks at the same files, and does not
// change when a file is merely touched. `currentEpoch()` stats the directory at most once per `ttlMs`
// and reads file contents only when the stat signature moved.
//
// A task pins the current epoch at activation (`pinCurrent()`, or `currentEpoch()` + `pin()`) and unpins
// it when it ends. An epoch's snapshot (its sources, in memory) lives while it is current or pinned;
// when neither holds, it is retired and `onRetire` listeners run. The Worker's executor link forwards
// that as RetireEpoch, and the executor recycles the threads that imported it: ESM modules are never
// freed, so a thread is the unit that frees them.

import { createHash } from 'node:crypto';
import { EpochUnknownError } from './errors.js';
import { listFunctionFiles, readFunctionSource, type FunctionFileStat } from './function-source.js';
import type { EpochFile } from './protocol.js';

export interface EpochSnapshot {
  readonly id: string;
  readonly functionsDir: string;
  /** Sorted by file name. */
  readonly files: readonly EpochFile[];
}

/** What the executor link needs from a code view: sources by epoch, and word of retirements. */
export interface EpochSource {
  snapshot(epoch: string): EpochSnapshot | undefined;
  onRetire(listener: (epoch: string) => void): () => void;
}

export interface FunctionCodeViewOptions {
  readonly dir: string;
  /** How long a directory stat stays fresh. Default 250 ms. */
  readonly ttlMs?: number;
  /** Milliseconds clock, injectable for tests. */
  readonly clock?: () => number;
  /** Which file names are functions (listFunctionFiles' `parse`). Default: the JS rule. */
  readonly parseFileName?: (fileName: string) => { readonly name: string } | null;
}

/**
 * The full SHA-256 (64 hex digits) of a set of files: order-independent, over each file's name and
 * source. A deployed bundle is verified against it (docs/functions-deploy.md); the epoch id is its prefix.
 */
export function computeCodeDigest(files: readonly Pick<EpochFile, 'fileName' | 'source'>[]): string {
  const hash = createHash('sha256');
  for (const f of [...files].sort((a, b) =>
    a.fileName < b.fileName ? -1 : a.fileName > b.fileName ? 1 : 0,
  )) {
    hash.update(f.fileName).update('\0').update(f.source).update('\0');
  }
  return hash.digest('hex');
}

/** Digits of the digest that make an epoch id (and a code version). */
export const EPOCH_ID_HEX_DIGITS = 16;

/** Content hash of a set of files: order-independent, 16 hex digits (the code version of the files). */
export function computeEpochId(files: readonly Pick<EpochFile, 'fileName' | 'source'>[]): string {
  return computeCodeDigest(files).slice(0, EPOCH_ID_HEX_DIGITS);
}

/**
 * What a Worker's executor side needs of a code view, whichever source feeds it: the local folder
 * (FunctionCodeView) or the cluster's deployed version (services/worker/adapters/code-view/cluster-code-view.ts).
 */
export interface WorkerCodeView extends EpochSource {
  /** The epoch new tasks get now. */
  currentEpoch(): Promise<string>;
  /** Resolve the current epoch and pin it in one step. */
  pinCurrent(): Promise<string>;
  unpin(epoch: string): void;
  /** The epoch last resolved as current (no IO), undefined before the first resolution. */
  readonly currentId: string | undefined;
  /** Live epochs with their pin counts (current first). */
  epochs(): { epoch: string; pins: number; current: boolean }[];
}

/**
 * The books both code views keep: the live snapshots, their pins, the current epoch, and the retire
 * listeners. A snapshot lives while it is current or pinned; `makeCurrent` switches new tasks to a
 * snapshot and retires the previous one unless a running task still pins it.
 */
export abstract class PinnedEpochs implements WorkerCodeView {
  protected readonly snapshots = new Map<string, EpochSnapshot>();
  protected readonly pins = new Map<string, number>();
  private readonly listeners = new Set<(epoch: string) => void>();
  protected current: string | undefined;

  abstract currentEpoch(): Promise<string>;

  /** Resolve the current epoch and pin it in one step, so it cannot be retired in between. */
  async pinCurrent(): Promise<string> {
    const epoch = await this.currentEpoch();
    this.pin(epoch);
    return epoch;
  }

  /** Add a reference to a live epoch. Throws EpochUnknownError for a retired or never-seen epoch. */
  pin(epoch: string): void {
    if (!this.snapshots.has(epoch)) throw new EpochUnknownError(epoch);
    this.pins.set(epoch, (this.pins.get(epoch) ?? 0) + 1);
  }

  /** Drop a reference; the last unpin of a non-current epoch retires it. Unpinning an unpinned epoch is a no-op. */
  unpin(epoch: string): void {
    const n = this.pins.get(epoch);
    if (n === undefined) return;
    if (n > 1) {
      this.pins.set(epoch, n - 1);
      return;
    }
    this.pins.delete(epoch);
    if (epoch !== this.current) this.retire(epoch);
  }

  snapshot(epoch: string): EpochSnapshot | undefined {
    return this.snapshots.get(epoch);
  }

  get currentId(): string | undefined {
    return this.current;
  }

  onRetire(listener: (epoch: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Live epochs with their pin counts (current first). */
  epochs(): { epoch: string; pins: number; current: boolean }[] {
    return [...this.snapshots.keys()]
      .map((epoch) => ({ epoch, pins: this.pins.get(epoch) ?? 0, current: epoch === this.current }))
      .sort((a, b) => Number(b.current) - Number(a.current));
  }

  /** New tasks get `snapshot` from now on; the previous epoch is retired unless pinned. */
  protected makeCurrent(snapshot: EpochSnapshot): string | undefined {
    if (!this.snapshots.has(snapshot.id)) this.snapshots.set(snapshot.id, snapshot);
    const previous = this.current;
    this.current = snapshot.id;
    if (previous !== undefined && previous !== snapshot.id && !this.pins.has(previous)) this.retire(previous);
    return previous;
  }

  private retire(epoch: string): void {
    if (!this.snapshots.delete(epoch)) return;
    for (const listener of this.listeners) listener(epoch);
  }
}

export class FunctionCodeView extends PinnedEpochs {
  readonly dir: string;
  private readonly ttlMs: number;
  private readonly clock: () => number;
  private readonly parseFileName: FunctionCodeViewOptions['parseFileName'];
  /** Source per file, valid while the file's stat key is unchanged. */
  private readonly sourceCache = new Map<string, { statKey: string; source: string }>();
  private signature: string | undefined;
  private checkedAtMs = Number.NEGATIVE_INFINITY;
  private refreshing: Promise<string> | undefined;

  constructor(options: FunctionCodeViewOptions) {
    super();
    this.dir = options.dir;
    this.ttlMs = options.ttlMs ?? 250;
    this.clock = options.clock ?? Date.now;
    this.parseFileName = options.parseFileName;
  }

  /** The epoch of the directory as it is now, at most `maxAgeMs` (default: the view's ttl) stale. */
  currentEpoch(maxAgeMs = this.ttlMs): Promise<string> {
    if (this.current !== undefined && this.clock() - this.checkedAtMs < maxAgeMs) {
      return Promise.resolve(this.current);
    }
    this.refreshing ??= this.refresh().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async refresh(): Promise<string> {
    const startedAt = this.clock();
    const listing = await listFunctionFiles(this.dir, this.parseFileName);
    let id = this.current;
    if (listing.signature !== this.signature || id === undefined) {
      const files = await this.readAll(listing.files);
      id = computeEpochId(files);
      this.makeCurrent(this.snapshots.get(id) ?? { id, functionsDir: this.dir, files });
      this.signature = listing.signature;
    }
    this.checkedAtMs = startedAt;
    return id;
  }

  private async readAll(stats: readonly FunctionFileStat[]): Promise<EpochFile[]> {
    const seen = new Set<string>();
    const files = await Promise.all(
      stats.map(async (f): Promise<EpochFile | null> => {
        seen.add(f.fileName);
        const statKey = `${f.size}:${f.mtimeNs}:${f.ctimeNs}:${f.ino}`;
        const cached = this.sourceCache.get(f.fileName);
        if (cached?.statKey === statKey) return { name: f.name, fileName: f.fileName, source: cached.source };
        const source = await readFunctionSource(f);
        if (source === null) return null;
        this.sourceCache.set(f.fileName, { statKey, source });
        return { name: f.name, fileName: f.fileName, source };
      }),
    );
    for (const name of this.sourceCache.keys()) if (!seen.has(name)) this.sourceCache.delete(name);
    return files.filter((f): f is EpochFile => f !== null);
  }
}
