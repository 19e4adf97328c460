// Worker registry prefixes (docs/architecture.md § etcd keys). A Worker's etcd key is `<prefix><workerAddr>`.
// Two forms:
//
//   legacy  /blockx/workers/                              (block)
//           /blockx/bundle-workers/                       (bundle)
//   v2      /blockx/<env>/lanes/<lane>/workers/           (block)
//           /blockx/<env>/lanes/<lane>/bundle-workers/    (bundle)
//
// `<env>` and `<lane>` match [a-z0-9][a-z0-9_-]*. The env names `workers` and `bundle-workers` are
// reserved: `/blockx/workers/lanes/x/workers/` would nest inside the legacy prefix `/blockx/workers/`,
// and a prefix watch on the legacy prefix would then see the v2 keys as workers named `lanes/x/...`.
// With that rule no two valid prefixes can nest, so watching several at once never sees a key twice.
// Pure: no IO.

import { RegistryErrorCode, RegistryPrefixError } from './errors.js';

export const LEGACY_BLOCK_WORKER_REGISTRY_PREFIX = '/blockx/workers/';
export const LEGACY_BUNDLE_WORKER_REGISTRY_PREFIX = '/blockx/bundle-workers/';
export const PROD_DEFAULT_BLOCK_WORKER_REGISTRY_PREFIX = '/blockx/prod/lanes/default/workers/';
export const PROD_DEFAULT_BUNDLE_WORKER_REGISTRY_PREFIX = '/blockx/prod/lanes/default/bundle-workers/';
export const TEST_DEFAULT_BUNDLE_WORKER_REGISTRY_PREFIX = '/blockx/test/lanes/default/bundle-workers/';

/** Which cluster a registry belongs to; a Coordinator's deployment must match its prefixes' kind. */
export type RegistryKind = 'block' | 'bundle';
export type RegistryPrefixFormat = 'legacy' | 'v2';

export interface RegistryPrefix {
  readonly prefix: string;
  readonly format: RegistryPrefixFormat;
  readonly kind: RegistryKind;
  /** v2 only. */
  readonly env?: string;
  /** v2 only. */
  readonly lane?: string;
}

export type RegistryPrefixResult =
  | { readonly ok: true; readonly value: RegistryPrefix }
  | { readonly ok: false; readonly error: RegistryPrefixError };

export type RegistryPrefixListResult =
  | { readonly ok: true; readonly value: readonly RegistryPrefix[] }
  | { readonly ok: false; readonly errors: readonly RegistryPrefixError[] };

const SEGMENT = '[a-z0-9][a-z0-9_-]*';
const V2_PREFIX = new RegExp(`^/blockx/(${SEGMENT})/lanes/(${SEGMENT})/(workers|bundle-workers)/$`);
const RESERVED_ENVS: ReadonlySet<string> = new Set(['workers', 'bundle-workers']);

const LEGACY: ReadonlyMap<string, RegistryKind> = new Map([
  [LEGACY_BLOCK_WORKER_REGISTRY_PREFIX, 'block'],
  [LEGACY_BUNDLE_WORKER_REGISTRY_PREFIX, 'bundle'],
]);

const FORMS =
  'expected /blockx/workers/, /blockx/bundle-workers/, or /blockx/<env>/lanes/<lane>/(workers|bundle-workers)/';

function invalid(prefix: string, message: string, index?: number): RegistryPrefixError {
  return new RegistryPrefixError(RegistryErrorCode.REGISTRY_PREFIX_INVALID, {
    prefix,
    ...(index === undefined ? {} : { index }),
    message: `invalid registry prefix ${JSON.stringify(prefix)}: ${message}`,
  });
}

/** Parses one exact registry prefix. Never throws. */
export function parseRegistryPrefix(prefix: string, index?: number): RegistryPrefixResult {
  if (prefix.length === 0) return { ok: false, error: invalid(prefix, 'must not be empty', index) };
  if (!prefix.startsWith('/')) return { ok: false, error: invalid(prefix, "must start with '/'", index) };
  if (!prefix.endsWith('/')) return { ok: false, error: invalid(prefix, "must end with '/'", index) };

  const legacyKind = LEGACY.get(prefix);
  if (legacyKind !== undefined) return { ok: true, value: { prefix, format: 'legacy', kind: legacyKind } };

  const m = V2_PREFIX.exec(prefix);
  if (m === null) return { ok: false, error: invalid(prefix, FORMS, index) };
  const [, env = '', lane = '', leaf] = m;
  if (RESERVED_ENVS.has(env)) {
    return {
      ok: false,
      error: invalid(
        prefix,
        `env ${JSON.stringify(env)} is reserved (it would nest in a legacy prefix)`,
        index,
      ),
    };
  }
  const kind: RegistryKind = leaf === 'workers' ? 'block' : 'bundle';
  return { ok: true, value: { prefix, format: 'v2', kind, env, lane } };
}

/**
 * Validates a Coordinator's (or Worker's) configured prefix list against its deployment: the list is
 * non-empty, has no duplicates, every entry parses, and every entry's kind equals the deployment.
 * Reports every problem, not just the first.
 */
export function validateRegistryPrefixes(
  prefixes: readonly string[],
  deployment: RegistryKind,
): RegistryPrefixListResult {
  if (prefixes.length === 0) {
    return {
      ok: false,
      errors: [
        new RegistryPrefixError(RegistryErrorCode.REGISTRY_PREFIXES_EMPTY, {
          message: 'at least one registry prefix is required',
        }),
      ],
    };
  }
  const errors: RegistryPrefixError[] = [];
  const parsed: RegistryPrefix[] = [];
  const seen = new Set<string>();
  prefixes.forEach((p, index) => {
    if (seen.has(p)) {
      errors.push(
        new RegistryPrefixError(RegistryErrorCode.REGISTRY_PREFIX_DUPLICATE, {
          prefix: p,
          index,
          message: `duplicate registry prefix ${JSON.stringify(p)}`,
        }),
      );
      return;
    }
    seen.add(p);
    const r = parseRegistryPrefix(p, index);
    if (!r.ok) {
      errors.push(r.error);
      return;
    }
    if (r.value.kind !== deployment) {
      errors.push(
        new RegistryPrefixError(RegistryErrorCode.REGISTRY_PREFIX_KIND_MISMATCH, {
          prefix: p,
          index,
          message: `registry prefix ${JSON.stringify(p)} is a ${r.value.kind} registry, but the deployment is ${deployment}`,
        }),
      );
      return;
    }
    parsed.push(r.value);
  });
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value: parsed };
}

/**
 * The profile defaults (docs/coordinator.md § Configuration): block watches the legacy block registry;
 * bundle watches the legacy and the prod v2 bundle registries during the migration. Test clusters
 * replace the list as a whole via COORDINATOR_REGISTRY_PREFIXES.
 */
export function defaultRegistryPrefixes(deployment: RegistryKind): readonly string[] {
  switch (deployment) {
    case 'block':
      return [LEGACY_BLOCK_WORKER_REGISTRY_PREFIX];
    case 'bundle':
      return [LEGACY_BUNDLE_WORKER_REGISTRY_PREFIX, PROD_DEFAULT_BUNDLE_WORKER_REGISTRY_PREFIX];
    default: {
      const _exhaustive: never = deployment;
      throw new Error(`unknown deployment ${String(_exhaustive)}`);
    }
  }
}

/** The etcd key a Worker registers under. */
export function workerKey(prefix: string, workerAddr: string): string {
  return prefix + workerAddr;
}

/** The inverse of `workerKey`: the Worker address of a key under `prefix`, or undefined if it is not one. */
export function workerAddrFromKey(prefix: string, key: string): string | undefined {
  if (!key.startsWith(prefix) || key.length === prefix.length) return undefined;
  return key.slice(prefix.length);
}
