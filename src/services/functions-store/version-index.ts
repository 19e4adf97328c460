// The version index: which versions the store keeps and which one is current (docs/functions-deploy.md
// § Keys). Pure: bytes in, bytes out, `now` an argument; the store (functions-store.ts) reads it, applies
// one of the operations below and writes it back in one guarded etcd transaction.
//
// Rules:
//   - at most MAX_KEPT_VERSIONS entries, oldest first; deploying a new one when full prunes the oldest
//     (never the current version, which after a deploy is the new one);
//   - deploying a version already kept makes it current again and keeps its first deployedAtMs;
//   - `current` is '' (nothing deployed) or a kept version;
//   - `use PREFIX` resolves a unique prefix of a kept version (hex digits, at least MIN_PREFIX_CHARS).

import { isDigest, isVersionId } from './bundle.js';
import { MAX_INDEX_BYTES, MAX_KEPT_VERSIONS } from './bundle-limits.js';
import { FunctionsStoreError, FunctionsStoreErrorCode as Code } from './errors.js';

export const INDEX_FORMAT = 'blockx.functions.index/1';
/** The shortest prefix `use` accepts. */
export const MIN_PREFIX_CHARS = 4;

export interface VersionEntry {
  readonly version: string;
  readonly digest: string;
  /** Function file names, sorted. */
  readonly fileNames: readonly string[];
  /** Sum of the sources' UTF-8 bytes. */
  readonly sourceBytes: number;
  /** Stored (compressed) size. */
  readonly storedBytes: number;
  /** When it was first deployed (deployer's clock, UTC ms). */
  readonly deployedAtMs: number;
}

export interface VersionIndex {
  /** '' before the first deploy. */
  readonly current: string;
  /** When `current` last changed (UTC ms), 0 before the first deploy. */
  readonly changedAtMs: number;
  /** Oldest first. */
  readonly versions: readonly VersionEntry[];
}

export const EMPTY_INDEX: VersionIndex = Object.freeze({ current: '', changedAtMs: 0, versions: [] });

export function encodeIndex(index: VersionIndex): Buffer {
  return Buffer.from(JSON.stringify({ format: INDEX_FORMAT, ...index }), 'utf8');
}

/** Parses a stored index strictly; undefined input (no key) is the empty index. */
export function parseIndex(value: Uint8Array | undefined): VersionIndex {
  if (value === undefined) return EMPTY_INDEX;
  const corrupt = (why: string, cause?: unknown): FunctionsStoreError =>
    new FunctionsStoreError(Code.BUNDLE_CORRUPT, `the functions version index is corrupt: ${why}`, {
      ...(cause === undefined ? {} : { cause }),
    });
  if (value.length > MAX_INDEX_BYTES) throw corrupt(`${value.length} bytes, above ${MAX_INDEX_BYTES}`);
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(value).toString('utf8'));
  } catch (err) {
    throw corrupt('not JSON', err);
  }
  const r = raw as Record<string, unknown> | null;
  if (typeof r !== 'object' || r === null || r['format'] !== INDEX_FORMAT)
    throw corrupt(`format is not ${INDEX_FORMAT}`);
  const { current, changedAtMs, versions } = r;
  if (typeof current !== 'string' || (current !== '' && !isVersionId(current))) throw corrupt('bad current');
  if (!isCount(changedAtMs)) throw corrupt('bad changedAtMs');
  if (!Array.isArray(versions) || versions.length > MAX_KEPT_VERSIONS) throw corrupt('bad versions');
  const entries = versions.map((v: unknown, i) => {
    const e = v as Record<string, unknown> | null;
    const ok =
      typeof e === 'object' &&
      e !== null &&
      typeof e['version'] === 'string' &&
      isVersionId(e['version']) &&
      typeof e['digest'] === 'string' &&
      isDigest(e['digest']) &&
      e['digest'].startsWith(e['version']) &&
      Array.isArray(e['fileNames']) &&
      e['fileNames'].every((n) => typeof n === 'string') &&
      isCount(e['sourceBytes']) &&
      isCount(e['storedBytes']) &&
      isCount(e['deployedAtMs']);
    if (!ok) throw corrupt(`bad entry ${i}`);
    return {
      version: e['version'] as string,
      digest: e['digest'] as string,
      fileNames: [...(e['fileNames'] as string[])],
      sourceBytes: e['sourceBytes'] as number,
      storedBytes: e['storedBytes'] as number,
      deployedAtMs: e['deployedAtMs'] as number,
    };
  });
  if (new Set(entries.map((e) => e.version)).size !== entries.length)
    throw corrupt('a version appears twice');
  if (current !== '' && !entries.some((e) => e.version === current)) throw corrupt('current is not kept');
  return { current, changedAtMs, versions: entries };
}

export interface IndexChange {
  readonly index: VersionIndex;
  /** Versions dropped from the index (their bundles are deleted in the same transaction). */
  readonly pruned: readonly string[];
  /** The version now current. */
  readonly entry: VersionEntry;
  /** False when the version was already current (nothing to write). */
  readonly changed: boolean;
}

/** Adds (or re-selects) `entry` and makes it current. */
export function applyDeploy(index: VersionIndex, entry: VersionEntry, now: number): IndexChange {
  const kept = index.versions.find((v) => v.version === entry.version);
  if (kept !== undefined) {
    if (index.current === kept.version) return { index, pruned: [], entry: kept, changed: false };
    return {
      index: { ...index, current: kept.version, changedAtMs: now },
      pruned: [],
      entry: kept,
      changed: true,
    };
  }
  const versions = [...index.versions, entry];
  const pruned: string[] = [];
  while (versions.length > MAX_KEPT_VERSIONS) pruned.push(versions.shift()!.version);
  return { index: { current: entry.version, changedAtMs: now, versions }, pruned, entry, changed: true };
}

/** Makes the kept version starting with `prefix` current (roll forward or back). */
export function applyUse(index: VersionIndex, prefix: string, now: number): IndexChange {
  const entry = resolveVersion(index, prefix);
  if (index.current === entry.version) return { index, pruned: [], entry, changed: false };
  return { index: { ...index, current: entry.version, changedAtMs: now }, pruned: [], entry, changed: true };
}

/** The kept version `prefix` names; VERSION_UNKNOWN / VERSION_AMBIGUOUS / NO_DEPLOYMENT otherwise. */
export function resolveVersion(index: VersionIndex, prefix: string): VersionEntry {
  const p = prefix.trim().toLowerCase();
  if (index.versions.length === 0) {
    throw new FunctionsStoreError(
      Code.NO_DEPLOYMENT,
      'no functions version has been deployed to this cluster yet (blockx functions deploy DIR)',
    );
  }
  if (!/^[0-9a-f]+$/.test(p) || p.length < MIN_PREFIX_CHARS) {
    throw new FunctionsStoreError(
      Code.VERSION_UNKNOWN,
      `${JSON.stringify(prefix)} is not a version: give at least ${MIN_PREFIX_CHARS} hex digits of one ` +
        `(blockx functions list shows them)`,
      { version: prefix },
    );
  }
  const matches = index.versions.filter((v) => v.version.startsWith(p));
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1) {
    throw new FunctionsStoreError(
      Code.VERSION_AMBIGUOUS,
      `${p} matches ${matches.length} versions (${matches.map((m) => m.version).join(', ')}): give more digits`,
      { version: p },
    );
  }
  throw new FunctionsStoreError(
    Code.VERSION_UNKNOWN,
    `no kept version starts with ${p}: the store keeps the last ${MAX_KEPT_VERSIONS} deployed versions and ` +
      `prunes older ones (it was never deployed, or was pruned: deploy that folder again)`,
    { version: p },
  );
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}
