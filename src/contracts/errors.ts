// Stable error codes of the contracts module (registry prefixes and heartbeat values).
// Each key equals its code; test/unit/contracts/errors.test.ts pins that, so a code never drifts.
// These errors are usually *returned* (inside a `{ ok: false, error }` result) rather than thrown: a bad
// heartbeat value in etcd is skipped with a warning, and a bad prefix list becomes a config error in the coordinator's app/.

import { BlockxError } from '../kernel/errors.js';

export const RegistryErrorCode = {
  REGISTRY_PREFIX_INVALID: 'REGISTRY_PREFIX_INVALID',
  REGISTRY_PREFIX_KIND_MISMATCH: 'REGISTRY_PREFIX_KIND_MISMATCH',
  REGISTRY_PREFIX_DUPLICATE: 'REGISTRY_PREFIX_DUPLICATE',
  REGISTRY_PREFIXES_EMPTY: 'REGISTRY_PREFIXES_EMPTY',
  HEARTBEAT_INVALID: 'HEARTBEAT_INVALID',
} as const;
export type RegistryErrorCode = (typeof RegistryErrorCode)[keyof typeof RegistryErrorCode];

/** A registry prefix (or a list of them) that cannot be used; `prefix` is the offending value. */
export class RegistryPrefixError extends BlockxError {
  declare readonly code: Exclude<RegistryErrorCode, 'HEARTBEAT_INVALID'>;
  readonly prefix: string | undefined;
  /** Position in the configured list, when the prefix came from a list. */
  readonly index: number | undefined;
  constructor(
    code: Exclude<RegistryErrorCode, 'HEARTBEAT_INVALID'>,
    fields: { prefix?: string; index?: number; message: string },
  ) {
    super(code, fields.message);
    this.prefix = fields.prefix;
    this.index = fields.index;
  }
}

/** A heartbeat value that is not valid JSON or violates a field's type or range. */
export class HeartbeatParseError extends BlockxError {
  declare readonly code: 'HEARTBEAT_INVALID';
  /** The offending field, or undefined when the value as a whole is unusable (bad JSON, not an object). */
  readonly field: string | undefined;
  constructor(fields: { field?: string; message: string }, options?: { cause?: unknown }) {
    super(
      RegistryErrorCode.HEARTBEAT_INVALID,
      fields.field
        ? `invalid heartbeat: ${fields.field}: ${fields.message}`
        : `invalid heartbeat: ${fields.message}`,
      options,
    );
    this.field = fields.field;
  }
}
