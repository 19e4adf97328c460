// The shape of one row of the config field table (docs/configuration.md § Adding a field). A row says
// where a setting lives, what values it takes, its default, the environment variable that overrides it
// and what it means; the schema, the env bindings, the defaults, the TS types and docs/configuration.md
// are all derived from the rows. Pure data: no IO, so cores may import the table.
import type { RegistryKind } from '../../contracts/registry-prefix.js';

/**
 * Where a field lives: the top level of the file, a deployment's coordinator/worker/executor section, a
 * `sources.<name>`, `jobs.<name>` or `functions.retry.<name>` entry.
 */
export type ConfigSection =
  'top' | 'coordinator' | 'worker' | 'executor' | 'source' | 'job' | 'functionRetry';

/** The values a field takes; each maps to one JSON Schema fragment, one TS type and one env parser. */
export type FieldType =
  | { readonly t: 'int'; readonly min: number; readonly max?: number }
  /** A number in (0, 1]. */
  | { readonly t: 'fraction' }
  | { readonly t: 'boolean' }
  /** `typed`: the schema also says `type: string` (an extra "must be string" for a number). */
  | { readonly t: 'enum'; readonly values: readonly string[]; readonly typed?: boolean }
  /** host:port or :port. */
  | { readonly t: 'listenAddr' }
  /** An etcd key prefix ending in '/'. */
  | { readonly t: 'registryPrefix' }
  /** A lower-case identifier (a deployment or table name). */
  | { readonly t: 'identifier' }
  | { readonly t: 'string'; readonly pattern?: string; readonly minLength?: number }
  | {
      readonly t: 'list';
      readonly item: 'string' | 'registryPrefix';
      /** With item `string`: the only values an item may take. */
      readonly values?: readonly string[];
      readonly minItems?: number;
      readonly uniqueItems?: boolean;
    };

/**
 * How an environment variable's text becomes a value. Unset: derived from the field type (integers by
 * their minimum, fractions, booleans, enums, lists, listen addresses; plain text otherwise).
 */
export type EnvParserName = 'text' | 'path' | 'listenAddr' | 'storageUrl' | 'urlPath';

/** A default that differs by deployment kind (registry prefixes). */
export interface ByKind<T> {
  readonly byKind: Readonly<Record<RegistryKind, T>>;
}

export type FieldDefault = string | number | boolean | readonly string[] | ByKind<string | readonly string[]>;

export interface ConfigField {
  readonly section: ConfigSection;
  /** Dotted path inside the section, e.g. `admission.builderSlots`. */
  readonly path: string;
  readonly type: FieldType;
  /** Omitted: the field has no default and stays unset (the code says what unset means). */
  readonly default?: FieldDefault;
  /** How the default reads in docs and the schema, when the bare value would not say enough. */
  readonly defaultText?: string;
  /** The environment variable that overrides the field (docs/configuration.md § Environment variables). */
  readonly env?: string;
  readonly envParser?: EnvParserName;
  /** What the field means, one or two sentences; the default and variable are appended when rendered. */
  readonly description: string;
  /**
   * `live`: a running `blockx up` or `blockx worker` takes a change of it when it reads its config file
   * again (a file change, SIGHUP; src/app/config-reload.ts). Omitted: a change waits for a restart.
   */
  readonly reload?: 'live';
}

/** A description of an object (a group of fields), e.g. `worker.admission`. */
export interface ConfigGroup {
  readonly section: ConfigSection;
  readonly path: string;
  readonly description: string;
  /** The name of its TS interface; groups sharing a name must have the same fields. Unset: inline type. */
  readonly typeName?: string;
}

export const isByKind = (d: FieldDefault | undefined): d is ByKind<string | readonly string[]> =>
  typeof d === 'object' && d !== null && !Array.isArray(d);

/** The default of a field for one deployment kind (undefined: no default). */
export function defaultFor(field: ConfigField, kind: RegistryKind): unknown {
  const d = field.default;
  if (d === undefined) return undefined;
  const v = isByKind(d) ? d.byKind[kind] : d;
  return Array.isArray(v) ? [...(v as readonly string[])] : v;
}

function showValue(v: unknown): string {
  if (Array.isArray(v)) return `[${v.join(', ')}]`;
  if (v === '') return 'empty';
  return String(v);
}

/** "5000", "empty", "[a, b]", "block [..]; bundle [..]", or the row's `defaultText`. */
export function defaultText(field: ConfigField): string | undefined {
  if (field.defaultText !== undefined) return field.defaultText;
  const d = field.default;
  if (d === undefined) return undefined;
  if (isByKind(d)) return `by kind: block ${showValue(d.byKind.block)}; bundle ${showValue(d.byKind.bundle)}`;
  return showValue(d);
}

/** The schema description of a field: meaning, default, variable. */
export function fieldDescription(field: ConfigField): string {
  const parts = [field.description];
  const d = defaultText(field);
  if (d !== undefined) parts.push(`Default ${d}.`);
  if (field.env) parts.push(`Env ${field.env}.`);
  return parts.join(' ');
}
