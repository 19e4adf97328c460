// Stable error codes of the functions store (docs/functions-deploy.md). Each key equals its value;
// test/unit/services/functions-store/errors.test.ts pins that. Every error carries the fields a
// program needs (the version, the limit, the actual size) next to a message that says what to do.

import { BlockxError } from '../../kernel/errors.js';

export const FunctionsStoreErrorCode = {
  /** The folder has no function file (`<name>.ts|.mjs|.js|.py`). */
  BUNDLE_EMPTY: 'BUNDLE_EMPTY',
  /** The folder holds more files, or bigger ones, than a bundle may (limits in bundle-limits.ts). */
  BUNDLE_TOO_LARGE: 'BUNDLE_TOO_LARGE',
  /** A stored value is not a bundle / index / pointer of this format (not gzip, not JSON, wrong shape). */
  BUNDLE_CORRUPT: 'BUNDLE_CORRUPT',
  /** A bundle's files do not hash to the version it is stored under: refused, never run. */
  BUNDLE_TAMPERED: 'BUNDLE_TAMPERED',
  /**
   * A cluster with a CA: the bundle is unsigned, or not signed by a deployer or admin certificate the CA
   * issued, or its signature does not match (docs/functions-deploy.md § Signed deploys): refused.
   */
  BUNDLE_UNTRUSTED: 'BUNDLE_UNTRUSTED',
  /** The functions folder cannot be read. */
  FOLDER_UNREADABLE: 'FOLDER_UNREADABLE',
  /** `use VERSION`: no kept version starts with it (never deployed, or pruned). */
  VERSION_UNKNOWN: 'VERSION_UNKNOWN',
  /** `use VERSION`: more than one kept version starts with it. */
  VERSION_AMBIGUOUS: 'VERSION_AMBIGUOUS',
  /** Nothing has been deployed to this cluster yet. */
  NO_DEPLOYMENT: 'NO_DEPLOYMENT',
  /** The index kept changing under us (concurrent deploys): gave up after a bounded number of tries. */
  STORE_CONFLICT: 'STORE_CONFLICT',
} as const;
export type FunctionsStoreErrorCode = (typeof FunctionsStoreErrorCode)[keyof typeof FunctionsStoreErrorCode];

export class FunctionsStoreError extends BlockxError {
  declare readonly code: FunctionsStoreErrorCode;
  /** The version concerned, when there is one. */
  readonly version: string | undefined;
  /** For size errors: the limit and the measured value, in the unit `unit`. */
  readonly limit: number | undefined;
  readonly actual: number | undefined;
  readonly unit: 'bytes' | 'files' | undefined;

  constructor(
    code: FunctionsStoreErrorCode,
    message: string,
    fields: {
      version?: string;
      limit?: number;
      actual?: number;
      unit?: 'bytes' | 'files';
      cause?: unknown;
    } = {},
  ) {
    super(code, message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.version = fields.version;
    this.limit = fields.limit;
    this.actual = fields.actual;
    this.unit = fields.unit;
  }
}
