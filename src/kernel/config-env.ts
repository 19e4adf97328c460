// Environment variables (docs/configuration.md § Environment variables), typed and validated. The
// bindings come from the config field table (kernel/config-fields/): each row with an `env` name is one
// binding, parsed by its type; a bad value is an issue naming the variable. Coordinator and worker
// variables apply to the deployment(s) a process runs; shared ones to the top level.
import { CONFIG_FIELDS, type ConfigField, type EnvParserName } from './config-fields/index.js';
import type { ConfigIssue } from './errors.js';
import { redactText } from './redact.js';

export type EnvScope = 'top' | 'coordinator' | 'worker';

type Parsed = { ok: true; value: unknown } | { ok: false; message: string };
export type Parser = (raw: string) => Parsed;

const INT = /^[+]?\d+$/;

const positiveInt: Parser = (raw) =>
  INT.test(raw.trim()) && Number(raw) >= 1 && Number.isSafeInteger(Number(raw))
    ? { ok: true, value: Number(raw) }
    : { ok: false, message: `expected a positive integer, got ${JSON.stringify(raw)}` };
const nonNegativeInt: Parser = (raw) =>
  INT.test(raw.trim()) && Number.isSafeInteger(Number(raw))
    ? { ok: true, value: Number(raw) }
    : { ok: false, message: `expected a non-negative integer, got ${JSON.stringify(raw)}` };
const fraction: Parser = (raw) => {
  const n = Number(raw);
  return raw.trim() !== '' && Number.isFinite(n) && n > 0 && n <= 1
    ? { ok: true, value: n }
    : { ok: false, message: `expected a number in (0, 1], got ${JSON.stringify(raw)}` };
};
const text: Parser = (raw) => ({ ok: true, value: raw });
const list: Parser = (raw) => {
  const items = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return items.length > 0
    ? { ok: true, value: items }
    : { ok: false, message: 'expected a comma-separated, non-empty list' };
};
const listenAddr: Parser = (raw) =>
  /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]*):\d{1,5}$/.test(raw) &&
  Number(raw.slice(raw.lastIndexOf(':') + 1)) <= 65535
    ? { ok: true, value: raw }
    : { ok: false, message: `expected host:port or :port, got ${JSON.stringify(raw)}` };
const storageUrl: Parser = (raw) =>
  /^(sqlite:.+|postgres(ql)?:\/\/.+)$/.test(raw)
    ? { ok: true, value: raw }
    : {
        ok: false,
        message: `expected sqlite:PATH, sqlite::memory: or postgres://..., got ${JSON.stringify(redactText(raw))}`,
      };
const boolean: Parser = (raw) => {
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return { ok: true, value: true };
  if (['0', 'false', 'no', 'off'].includes(v)) return { ok: true, value: false };
  return { ok: false, message: `expected true or false (1/0, yes/no, on/off), got ${JSON.stringify(raw)}` };
};
const pathString: Parser = (raw) =>
  raw.trim() !== '' ? { ok: true, value: raw } : { ok: false, message: 'expected a non-empty path' };

const urlPath: Parser = (raw) =>
  raw.startsWith('/')
    ? { ok: true, value: raw }
    : { ok: false, message: `expected a path starting with /, got ${JSON.stringify(raw)}` };
const oneOf =
  (values: readonly string[]): Parser =>
  (raw) =>
    values.includes(raw)
      ? { ok: true, value: raw }
      : {
          ok: false,
          message:
            values.length === 2
              ? `expected ${values[0]} or ${values[1]}, got ${JSON.stringify(raw)}`
              : `expected one of ${values.join(', ')}; got ${JSON.stringify(raw)}`,
        };

const NAMED: Readonly<Record<EnvParserName, Parser>> = {
  text,
  path: pathString,
  listenAddr,
  storageUrl,
  urlPath,
};

/** The parser of a field's variable: the row's `envParser`, else the one its type implies. */
export function envParserOf(field: ConfigField): Parser {
  if (field.envParser) return NAMED[field.envParser];
  const type = field.type;
  switch (type.t) {
    case 'int':
      return type.min >= 1 ? positiveInt : nonNegativeInt;
    case 'fraction':
      return fraction;
    case 'boolean':
      return boolean;
    case 'enum':
      return oneOf(type.values);
    case 'listenAddr':
      return listenAddr;
    case 'list':
      return list;
    case 'registryPrefix':
    case 'identifier':
    case 'string':
      return text;
    default: {
      const never: never = type;
      throw new Error(`unknown field type ${JSON.stringify(never)}`);
    }
  }
}

export interface EnvBinding {
  readonly variable: string;
  readonly scope: EnvScope;
  /** Path inside the scope: the top-level config, or a deployment's coordinator/worker section. */
  readonly path: readonly string[];
  readonly parse: Parser;
}

/** One binding per table row with an `env` name, in table order. */
export const ENV_BINDINGS: readonly EnvBinding[] = Object.freeze(
  CONFIG_FIELDS.filter((f) => f.env !== undefined).map((f) => {
    if (
      f.section === 'executor' ||
      f.section === 'source' ||
      f.section === 'job' ||
      f.section === 'functionRetry'
    ) {
      throw new Error(`${f.env}: ${f.section} fields have no env scope`);
    }
    return { variable: f.env as string, scope: f.section, path: f.path.split('.'), parse: envParserOf(f) };
  }),
);

/** BLOCKX_CONFIG is read by locateConfig; it is listed here so `blockx config --env` can show it. */
export const LOCATOR_VARIABLES = ['BLOCKX_CONFIG'] as const;

export interface EnvOverride {
  readonly binding: EnvBinding;
  readonly value: unknown;
}

/** Parses every bound variable that is set (empty counts as unset). Returns overrides and all issues. */
export function readEnvOverrides(env: NodeJS.ProcessEnv): {
  overrides: EnvOverride[];
  issues: ConfigIssue[];
} {
  const overrides: EnvOverride[] = [];
  const issues: ConfigIssue[] = [];
  for (const binding of ENV_BINDINGS) {
    const raw = env[binding.variable];
    if (raw === undefined || raw === '') continue;
    const parsed = binding.parse(raw);
    if (parsed.ok) overrides.push({ binding, value: parsed.value });
    else
      issues.push({
        source: 'env',
        variable: binding.variable,
        path: (binding.scope === 'top'
          ? binding.path
          : ['deployments.*', binding.scope, ...binding.path]
        ).join('.'),
        message: parsed.message,
      });
  }
  return { overrides, issues };
}

/**
 * A source's URL from the environment: BLOCKX_SOURCE_<NAME>_RPC_URL, BLOCKX_SOURCE_<NAME>_FALLBACK_URL or
 * BLOCKX_SOURCE_<NAME>_WS_URL.
 */
export interface SourceEnvOverride {
  readonly variable: string;
  /** The source's name: <NAME> lower-cased (a `sources.<name>` key). */
  readonly source: string;
  readonly field: 'rpcUrl' | 'fallbackUrl' | 'wsUrl';
  readonly value: string;
}

const SOURCE_URL_VARIABLE = /^BLOCKX_SOURCE_([A-Z][A-Z0-9_]*?)_(RPC|FALLBACK|WS)_URL$/;

/** Each variable's field, and the URL schemes it takes. */
const SOURCE_URL_FIELDS = {
  RPC: { field: 'rpcUrl', scheme: /^https?:\/\/[^/]/i, expected: 'an http:// or https:// URL' },
  FALLBACK: { field: 'fallbackUrl', scheme: /^https?:\/\/[^/]/i, expected: 'an http:// or https:// URL' },
  WS: { field: 'wsUrl', scheme: /^wss?:\/\/[^/]/i, expected: 'a ws:// or wss:// URL' },
} as const;

/**
 * The source URLs the environment sets (docs/ingest.md § Where the URL lives): each one overrides the
 * field of `sources.<name>`, or declares the source with its defaults. Its value is never quoted in an
 * issue (it may hold a key).
 */
export function readSourceEnvOverrides(env: NodeJS.ProcessEnv): {
  overrides: SourceEnvOverride[];
  issues: ConfigIssue[];
} {
  const overrides: SourceEnvOverride[] = [];
  const issues: ConfigIssue[] = [];
  for (const [variable, raw] of Object.entries(env)) {
    const m = SOURCE_URL_VARIABLE.exec(variable);
    if (m === null || raw === undefined || raw === '') continue;
    const source = (m[1] as string).toLowerCase();
    const { field, scheme, expected } = SOURCE_URL_FIELDS[m[2] as keyof typeof SOURCE_URL_FIELDS];
    if (source.length > 63) {
      issues.push({
        source: 'env',
        variable,
        path: `sources.${source}`,
        message: 'the name is longer than 63',
      });
    } else if (!scheme.test(raw) || !URL.canParse(raw)) {
      issues.push({
        source: 'env',
        variable,
        path: `sources.${source}.${field}`,
        message: `expected ${expected}`,
      });
    } else overrides.push({ variable, source, field, value: raw });
  }
  return { overrides, issues };
}
