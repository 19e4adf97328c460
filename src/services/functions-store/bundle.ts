// A bundle: one immutable, content-addressed version of a functions folder (docs/functions-deploy.md
// § Bundle format). What it holds, how it is hashed and stored:
//
//   files    every function file at the folder's top level, of both languages (`<name>.ts|.mjs|.js`
//            for the JS executor, `<name>.py` for the Python one; the Worker code view's rule,
//            parseAnyFunctionFileName), as UTF-8 text, sorted by file name
//   digest   computeCodeDigest(files): SHA-256 over each file's name and source (64 hex digits)
//   version  the digest's first 16 hex digits: exactly the epoch id a Worker reading the same files
//            from a local folder computes, so one code version names the same code in both modes
//   signature  optional: the deployer's certificate and signature over the digest (bundle-signature.ts)
//   stored   gzip of the JSON record {format, version, digest, deployedAtMs, files, signature?}
//
// decodeBundle never trusts the stored value: it inflates at most MAX_BUNDLE_SOURCE_BYTES (plus the JSON
// framing), checks the shape, recomputes the digest from the files and refuses a bundle whose files do
// not hash to the version (or digest) it was stored and announced under (BUNDLE_TAMPERED).

import { gunzipSync, gzipSync } from 'node:zlib';
import { computeCodeDigest, EPOCH_ID_HEX_DIGITS } from '../../executor/code-epochs.js';
import {
  MAX_BUNDLE_FILE_BYTES,
  MAX_BUNDLE_FILES,
  MAX_BUNDLE_SOURCE_BYTES,
  MAX_BUNDLE_STORED_BYTES,
} from './bundle-limits.js';
import {
  MAX_SIGNATURE_CERTIFICATE_CHARS,
  MAX_SIGNATURE_VALUE_CHARS,
  signBundleDigest,
  type BundleSignature,
  type BundleSigner,
} from './bundle-signature.js';
import { FunctionsStoreError, FunctionsStoreErrorCode as Code } from './errors.js';
import { parseAnyFunctionFileName } from '../../executor/core/functions-inventory.js';

export const BUNDLE_FORMAT = 'blockx.functions.bundle/1';

export interface BundleFile {
  readonly fileName: string;
  readonly source: string;
}

export interface Bundle {
  readonly version: string;
  readonly digest: string;
  readonly deployedAtMs: number;
  /** Sorted by file name. */
  readonly files: readonly BundleFile[];
  /** Sum of the sources' UTF-8 bytes. */
  readonly sourceBytes: number;
  /** Who deployed it, when signed (docs/functions-deploy.md § Signed deploys). */
  readonly signature?: BundleSignature;
}

/** How a bundle is signed when encoded: by a signer's key, or with a signature made elsewhere. */
export interface SignWith {
  readonly signer?: BundleSigner;
  /** A signature over the same files made before (a Coordinator storing a client's signed bundle). */
  readonly signature?: BundleSignature;
}

export interface EncodedBundle extends Bundle {
  /** The value stored under `versions/<version>`. */
  readonly stored: Buffer;
}

/** JSON framing allowed on top of the sources when inflating (names, escapes, the record's fields). */
const INFLATE_SLACK_BYTES = 1024 * 1024;

const VERSION_PATTERN = new RegExp(`^[0-9a-f]{${EPOCH_ID_HEX_DIGITS}}$`);
const DIGEST_PATTERN = /^[0-9a-f]{64}$/;

/** True for a string shaped like a code version (16 lowercase hex digits). */
export function isVersionId(s: string): boolean {
  return VERSION_PATTERN.test(s);
}

/** Builds and encodes a bundle; throws BUNDLE_EMPTY / BUNDLE_TOO_LARGE with the limit and the size. */
export function encodeBundle(
  files: readonly BundleFile[],
  deployedAtMs: number,
  sign: SignWith = {},
): EncodedBundle {
  const sorted = checkFiles(files);
  const digest = computeCodeDigest(sorted);
  const version = digest.slice(0, EPOCH_ID_HEX_DIGITS);
  const sourceBytes = sorted.reduce((n, f) => n + Buffer.byteLength(f.source, 'utf8'), 0);
  const signature =
    sign.signature ?? (sign.signer === undefined ? undefined : signBundleDigest(digest, sign.signer));
  const record = {
    format: BUNDLE_FORMAT,
    version,
    digest,
    deployedAtMs,
    files: sorted,
    ...(signature === undefined ? {} : { signature }),
  };
  const stored = gzipSync(Buffer.from(JSON.stringify(record), 'utf8'), { level: 9 });
  if (stored.length > MAX_BUNDLE_STORED_BYTES) {
    throw new FunctionsStoreError(
      Code.BUNDLE_TOO_LARGE,
      `the bundle is ${stored.length} bytes compressed (${sorted.length} files, ${sourceBytes} source bytes); ` +
        `a bundle may be at most ${MAX_BUNDLE_STORED_BYTES} bytes compressed (one etcd value, below etcd's ` +
        `1.5 MiB request limit): move data out of the function files or split the folder`,
      { version, limit: MAX_BUNDLE_STORED_BYTES, actual: stored.length, unit: 'bytes' },
    );
  }
  return { ...bundleOf(version, digest, deployedAtMs, sorted, signature), stored };
}

/**
 * Decodes a stored bundle and verifies it: its files must hash to `expect.version` and, when given,
 * to `expect.digest` (the current pointer's). Throws BUNDLE_CORRUPT or BUNDLE_TAMPERED; never returns
 * code that does not match its version.
 */
export function decodeBundle(stored: Uint8Array, expect: { version: string; digest?: string }): Bundle {
  const corrupt = (why: string, cause?: unknown): FunctionsStoreError =>
    new FunctionsStoreError(Code.BUNDLE_CORRUPT, `bundle ${expect.version}: ${why}`, {
      version: expect.version,
      ...(cause === undefined ? {} : { cause }),
    });
  if (stored.length > MAX_BUNDLE_STORED_BYTES) {
    throw corrupt(`stored value is ${stored.length} bytes, above the ${MAX_BUNDLE_STORED_BYTES}-byte limit`);
  }
  let text: string;
  try {
    text = gunzipSync(stored, { maxOutputLength: MAX_BUNDLE_SOURCE_BYTES + INFLATE_SLACK_BYTES }).toString(
      'utf8',
    );
  } catch (err) {
    throw corrupt('not a gzip stream within the size limit', err);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw corrupt('not JSON', err);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw corrupt('not a JSON object');
  const r = raw as Record<string, unknown>;
  if (r['format'] !== BUNDLE_FORMAT) throw corrupt(`format is not ${BUNDLE_FORMAT}`);
  const deployedAtMs = r['deployedAtMs'];
  if (typeof deployedAtMs !== 'number' || !Number.isSafeInteger(deployedAtMs) || deployedAtMs < 0)
    throw corrupt('deployedAtMs must be a non-negative integer');
  if (!Array.isArray(r['files'])) throw corrupt('files must be an array');
  const files: BundleFile[] = [];
  for (const f of r['files'] as unknown[]) {
    const o = f as Record<string, unknown> | null;
    if (
      typeof o !== 'object' ||
      o === null ||
      typeof o['fileName'] !== 'string' ||
      typeof o['source'] !== 'string'
    )
      throw corrupt('every file needs a string fileName and source');
    files.push({ fileName: o['fileName'], source: o['source'] });
  }
  let sorted: BundleFile[];
  try {
    sorted = checkFiles(files);
  } catch (err) {
    throw corrupt((err as Error).message, err);
  }
  const digest = computeCodeDigest(sorted);
  const version = digest.slice(0, EPOCH_ID_HEX_DIGITS);
  const claimed = [
    ['the version it is stored under', expect.version],
    ['the digest the current pointer announces', expect.digest],
    ['the version in the record', r['version']],
    ['the digest in the record', r['digest']],
  ] as const;
  for (const [what, value] of claimed) {
    if (value === undefined) continue;
    const ok = typeof value === 'string' && (value.length === 64 ? value === digest : value === version);
    if (!ok) {
      throw new FunctionsStoreError(
        Code.BUNDLE_TAMPERED,
        `its files hash to ${version}, not to ${what} (${String(value).slice(0, 16)}): the stored bundle ` +
          `was changed after it was deployed`,
        { version: expect.version },
      );
    }
  }
  return bundleOf(version, digest, deployedAtMs, sorted, signatureOf(r['signature'], corrupt));
}

function bundleOf(
  version: string,
  digest: string,
  deployedAtMs: number,
  files: BundleFile[],
  signature: BundleSignature | undefined,
): Bundle {
  const sourceBytes = files.reduce((n, f) => n + Buffer.byteLength(f.source, 'utf8'), 0);
  return {
    version,
    digest,
    deployedAtMs,
    files,
    sourceBytes,
    ...(signature === undefined ? {} : { signature }),
  };
}

/** The record's signature field: absent, or two bounded strings (whether it verifies is the Worker's check). */
function signatureOf(raw: unknown, corrupt: (why: string) => Error): BundleSignature | undefined {
  if (raw === undefined) return undefined;
  const o = raw as Record<string, unknown> | null;
  if (
    typeof o !== 'object' ||
    o === null ||
    typeof o['certificate'] !== 'string' ||
    typeof o['value'] !== 'string' ||
    o['certificate'].length > MAX_SIGNATURE_CERTIFICATE_CHARS ||
    o['value'].length > MAX_SIGNATURE_VALUE_CHARS
  )
    throw corrupt(
      `signature must be {certificate, value}, strings of at most ${MAX_SIGNATURE_CERTIFICATE_CHARS} and ` +
        `${MAX_SIGNATURE_VALUE_CHARS} characters`,
    );
  return { certificate: o['certificate'], value: o['value'] };
}

/** True for a 64-hex-digit digest. */
export function isDigest(s: string): boolean {
  return DIGEST_PATTERN.test(s);
}

/** Names are function file names, unique; sizes within the limits. Returns the files sorted by name. */
function checkFiles(files: readonly BundleFile[]): BundleFile[] {
  if (files.length === 0) {
    throw new FunctionsStoreError(
      Code.BUNDLE_EMPTY,
      'no function files to deploy (expected <name>.ts, .mjs, .js or .py at the top of the folder)',
    );
  }
  if (files.length > MAX_BUNDLE_FILES) {
    throw new FunctionsStoreError(
      Code.BUNDLE_TOO_LARGE,
      `${files.length} function files; a bundle may hold at most ${MAX_BUNDLE_FILES}`,
      { limit: MAX_BUNDLE_FILES, actual: files.length, unit: 'files' },
    );
  }
  const sorted = [...files].sort((a, b) => (a.fileName < b.fileName ? -1 : a.fileName > b.fileName ? 1 : 0));
  let total = 0;
  for (let i = 0; i < sorted.length; i++) {
    const f = sorted[i]!;
    if (parseAnyFunctionFileName(f.fileName) === null)
      throw new FunctionsStoreError(
        Code.BUNDLE_CORRUPT,
        `${JSON.stringify(f.fileName)} is not a function file name`,
      );
    if (i > 0 && sorted[i - 1]!.fileName === f.fileName)
      throw new FunctionsStoreError(Code.BUNDLE_CORRUPT, `${f.fileName} appears twice`);
    const bytes = Buffer.byteLength(f.source, 'utf8');
    if (bytes > MAX_BUNDLE_FILE_BYTES) {
      throw new FunctionsStoreError(
        Code.BUNDLE_TOO_LARGE,
        `${f.fileName} is ${bytes} bytes; one function file may be at most ${MAX_BUNDLE_FILE_BYTES} bytes`,
        { limit: MAX_BUNDLE_FILE_BYTES, actual: bytes, unit: 'bytes' },
      );
    }
    total += bytes;
  }
  if (total > MAX_BUNDLE_SOURCE_BYTES) {
    throw new FunctionsStoreError(
      Code.BUNDLE_TOO_LARGE,
      `the function files are ${total} bytes together; a bundle may hold at most ${MAX_BUNDLE_SOURCE_BYTES} ` +
        `source bytes`,
      { limit: MAX_BUNDLE_SOURCE_BYTES, actual: total, unit: 'bytes' },
    );
  }
  return sorted;
}
