// The etcd keys of the functions store (docs/functions-deploy.md § Keys):
//
//   /blockx/_functions/index              the version index (version-index.ts): kept versions, current
//   /blockx/_functions/current            the current pointer {version, digest, changedAtMs}: small, what
//                                         Workers poll; written in the same transaction as the index
//   /blockx/_functions/versions/<version> one bundle (bundle.ts), immutable, deleted when pruned
//
// `_functions` cannot be a registry env name (those start with [a-z0-9], contracts/registry-prefix.ts),
// so no Worker registry prefix nests inside these keys, nor they inside one.

import { isDigest, isVersionId } from './bundle.js';
import { MAX_INDEX_BYTES } from './bundle-limits.js';
import { FunctionsStoreError, FunctionsStoreErrorCode as Code } from './errors.js';

export const FUNCTIONS_STORE_PREFIX = '/blockx/_functions/';
export const INDEX_KEY = `${FUNCTIONS_STORE_PREFIX}index`;
export const CURRENT_KEY = `${FUNCTIONS_STORE_PREFIX}current`;
export const versionKey = (version: string): string => `${FUNCTIONS_STORE_PREFIX}versions/${version}`;

export const POINTER_FORMAT = 'blockx.functions.current/1';

export interface CurrentPointer {
  readonly version: string;
  readonly digest: string;
  readonly changedAtMs: number;
}

export function encodePointer(p: CurrentPointer): Buffer {
  return Buffer.from(JSON.stringify({ format: POINTER_FORMAT, ...p }), 'utf8');
}

export function parsePointer(value: Uint8Array): CurrentPointer {
  const corrupt = (why: string): FunctionsStoreError =>
    new FunctionsStoreError(
      Code.BUNDLE_CORRUPT,
      `the current-version pointer (${CURRENT_KEY}) is corrupt: ${why}`,
    );
  if (value.length > MAX_INDEX_BYTES) throw corrupt('too large');
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(value).toString('utf8'));
  } catch {
    throw corrupt('not JSON');
  }
  const r = raw as Record<string, unknown> | null;
  if (typeof r !== 'object' || r === null || r['format'] !== POINTER_FORMAT)
    throw corrupt(`format is not ${POINTER_FORMAT}`);
  const { version, digest, changedAtMs } = r;
  if (typeof version !== 'string' || !isVersionId(version)) throw corrupt('bad version');
  if (typeof digest !== 'string' || !isDigest(digest) || !digest.startsWith(version))
    throw corrupt('bad digest');
  if (typeof changedAtMs !== 'number' || !Number.isSafeInteger(changedAtMs) || changedAtMs < 0)
    throw corrupt('bad changedAtMs');
  return { version, digest, changedAtMs };
}
