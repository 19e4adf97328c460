// The functions store: deploy / list / use over a FunctionsKv (etcd or in-memory), and the verified fetch
// Workers use (docs/functions-deploy.md).
//
// deploy(files): encode the bundle (bundle.ts: size limits, content hash), put it under its version key
// if absent (content-addressed: same key, same files), then update the index and the current pointer in
// one transaction guarded by the index's revision. A concurrent deploy or use that wins the race makes
// the guard fail; the operation re-reads and re-applies, at most MAX_TXN_ATTEMPTS times (STORE_CONFLICT
// after that). Pruned versions' bundles are deleted in the same transaction.

import {
  decodeBundle,
  encodeBundle,
  type Bundle,
  type BundleFile,
  type EncodedBundle,
  type SignWith,
} from './bundle.js';
import { FunctionsStoreError, FunctionsStoreErrorCode as Code } from './errors.js';
import type { FunctionsKv } from './kv-port.js';
import {
  CURRENT_KEY,
  INDEX_KEY,
  encodePointer,
  parsePointer,
  versionKey,
  type CurrentPointer,
} from './store-keys.js';
import {
  applyDeploy,
  applyUse,
  encodeIndex,
  parseIndex,
  resolveVersion,
  type IndexChange,
  type VersionEntry,
  type VersionIndex,
} from './version-index.js';

/** Tries of one guarded index update before STORE_CONFLICT. */
export const MAX_TXN_ATTEMPTS = 8;

export interface DeployOutcome {
  readonly entry: VersionEntry;
  /** False when this version was already current (nothing changed). */
  readonly changed: boolean;
  /** False when the same version was deployed before (its bundle was already stored). */
  readonly newVersion: boolean;
  readonly pruned: readonly string[];
  readonly previous: string;
}

export interface UseOutcome {
  readonly entry: VersionEntry;
  readonly changed: boolean;
  readonly previous: string;
}

export class FunctionsStore {
  constructor(
    private readonly kv: FunctionsKv,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Stores `files` as a bundle (signed as `sign` says) and makes it current. */
  async deploy(files: readonly BundleFile[], sign: SignWith = {}): Promise<DeployOutcome> {
    const now = this.clock();
    const bundle = encodeBundle(files, now, sign);
    const entry: VersionEntry = {
      version: bundle.version,
      digest: bundle.digest,
      fileNames: bundle.files.map((f) => f.fileName),
      sourceBytes: bundle.sourceBytes,
      storedBytes: bundle.stored.length,
      deployedAtMs: now,
    };
    const stored = await this.storeBundle(bundle);
    const { change, previous } = await this.update((index) => applyDeploy(index, entry, this.clock()));
    return {
      entry: change.entry,
      changed: change.changed,
      newVersion: stored,
      pruned: change.pruned,
      previous,
    };
  }

  async use(prefix: string): Promise<UseOutcome> {
    // The bundle must still be there and intact before the cluster is pointed at it.
    const index = await this.list();
    const wanted = resolveVersion(index, prefix);
    if (index.current !== wanted.version)
      await this.fetch({ version: wanted.version, digest: wanted.digest });
    const { change, previous } = await this.update((i) => applyUse(i, wanted.version, this.clock()));
    return { entry: change.entry, changed: change.changed, previous };
  }

  async list(): Promise<VersionIndex> {
    return parseIndex((await this.kv.get(INDEX_KEY))?.value);
  }

  /** The current pointer, or undefined before the first deploy. */
  async current(): Promise<CurrentPointer | undefined> {
    const read = await this.kv.get(CURRENT_KEY);
    return read === undefined ? undefined : parsePointer(read.value);
  }

  /** Fetches and verifies one bundle (BUNDLE_TAMPERED / BUNDLE_CORRUPT / VERSION_UNKNOWN). */
  async fetch(pointer: { version: string; digest?: string }): Promise<Bundle> {
    const read = await this.kv.get(versionKey(pointer.version));
    if (read === undefined) {
      throw new FunctionsStoreError(
        Code.VERSION_UNKNOWN,
        `bundle ${pointer.version} is not in the store (${versionKey(pointer.version)} is missing)`,
        { version: pointer.version },
      );
    }
    return decodeBundle(read.value, pointer);
  }

  /**
   * Puts the bundle unless an intact copy is stored already (true: it was not). A damaged copy (one a
   * Worker would refuse) is overwritten: redeploying the folder repairs the version. So is a copy with
   * another signature (or none) when this deploy is signed: a deployer's redeploy replaces a bundle of
   * the same files that was written unsigned or by someone else (docs/functions-deploy.md § Signed
   * deploys).
   */
  private async storeBundle(bundle: EncodedBundle): Promise<boolean> {
    const { version, digest } = bundle;
    const key = versionKey(version);
    if (await this.kv.putIfAbsent(key, bundle.stored)) return true;
    const existing = await this.kv.get(key);
    if (existing !== undefined) {
      try {
        const kept = decodeBundle(existing.value, { version, digest });
        if (bundle.signature === undefined || kept.signature?.value === bundle.signature.value) return false;
      } catch {
        // damaged: fall through and replace it
      }
    }
    await this.kv.put(key, bundle.stored);
    return true;
  }

  private async update(
    apply: (index: VersionIndex) => IndexChange,
  ): Promise<{ change: IndexChange; previous: string }> {
    for (let attempt = 1; attempt <= MAX_TXN_ATTEMPTS; attempt++) {
      const read = await this.kv.get(INDEX_KEY);
      const index = parseIndex(read?.value);
      const change = apply(index);
      if (!change.changed) return { change, previous: index.current };
      const pointer = encodePointer({
        version: change.entry.version,
        digest: change.entry.digest,
        changedAtMs: change.index.changedAtMs,
      });
      const ok = await this.kv.commit({
        guard: { key: INDEX_KEY, revision: read?.revision ?? '0' },
        puts: [
          { key: INDEX_KEY, value: encodeIndex(change.index) },
          { key: CURRENT_KEY, value: pointer },
        ],
        deletes: change.pruned.map(versionKey),
      });
      if (ok) return { change, previous: index.current };
    }
    throw new FunctionsStoreError(
      Code.STORE_CONFLICT,
      `the functions index changed ${MAX_TXN_ATTEMPTS} times while this update ran (concurrent deploys?): try again`,
    );
  }
}
