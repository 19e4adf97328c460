// The config pipeline, as one visible function, so every step is in view in one place:
//   locate (cosmiconfig) → parse YAML keeping positions → validate with ajv (additionalProperties: false)
//   → defaults → env overrides → flag overrides → cross-field rules → resolve paths → freeze.
// Every problem is collected and reported at once with its YAML path and line:column, or the env var /
// flag it came from. Nothing half-valid leaves this module.
import path from 'node:path';
import type { ErrorObject } from 'ajv';
import { ConfigError, type ConfigIssue } from './errors.js';
import { locateConfig, readConfigSource, type ConfigSource } from './config-source.js';
import { readEnvOverrides, readSourceEnvOverrides } from './config-env.js';
import { checkConfigRules, type ConfigDraft } from './config-rules.js';
import { compileConfigSchema, describeSchemaError } from './config-schema.js';
import {
  defaultCoordinatorConfig,
  defaultExecutorConfig,
  defaultSourceConfig,
  defaultJobConfig,
  defaultWorkerConfig,
  TOP_LEVEL_DEFAULTS,
} from './config-defaults.js';
import type {
  BlockxConfig,
  DeploymentConfig,
  DeploymentKind,
  SourceConfig,
  JobConfig,
  TableConfig,
} from './config-types.js';

export interface FlagOverride {
  /** Full config path, e.g. ['deployments', 'block', 'worker', 'listen']. */
  path: string[];
  value: unknown;
  /** The flag as typed, e.g. `--listen`; named in errors. */
  flag: string;
}

export interface LoadConfigOptions {
  /** `--config FILE`; wins over BLOCKX_CONFIG and the search. */
  configPath?: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Deployments that coordinator/worker env vars apply to; default every declared deployment. */
  deployments?: string[];
  flags?: FlagOverride[];
}

/** Locates, parses, validates and resolves the config. Throws ConfigError listing every problem. */
export function loadConfig(opts: LoadConfigOptions = {}): BlockxConfig {
  const env = opts.env ?? process.env;
  const file = locateConfig({ explicitPath: opts.configPath, env, cwd: opts.cwd });
  return resolveConfig(readConfigSource(file), { ...opts, env });
}

/** The pipeline after the file is read; tests drive it with `parseConfigText`. */
export function resolveConfig(
  source: ConfigSource,
  opts: Omit<LoadConfigOptions, 'configPath' | 'cwd'> = {},
): BlockxConfig {
  const env = opts.env ?? {};
  const issues: ConfigIssue[] = [];
  const fileIssue = (segments: (string | number)[], message: string, key = false): ConfigIssue => {
    const pos = source.positionOf(segments, { key });
    return {
      source: 'file',
      file: source.file,
      path: segments.join('.'),
      message,
      ...(pos ? { line: pos.line, column: pos.column } : {}),
    };
  };

  // 1. Schema validation of what the user wrote.
  const validate = compileConfigSchema();
  const fileValid = validate(source.value);
  if (!fileValid) {
    for (const err of dedupeErrors(validate.errors ?? [])) {
      const d = describeSchemaError(err);
      issues.push(fileIssue(d.path, d.message, d.pointAtKey));
    }
  }
  // 2. Environment variables are parsed even when the file is bad, so one run shows every problem.
  const { overrides, issues: envIssues } = readEnvOverrides(env);
  issues.push(...envIssues);
  const sourceEnv = readSourceEnvOverrides(env);
  issues.push(...sourceEnv.issues);
  // Defaults cannot be merged into a file of the wrong shape; everything else is still checked below.
  if (!fileValid) throw new ConfigError(issues);

  // 3. Defaults under the file's values.
  const draft = withDefaults(source.value as FileConfig, source.file);

  // 4. Env overrides, then flags; remember who set what so later errors can name them.
  const provenance = new Map<string, ConfigIssue>();
  const targets = opts.deployments ?? Object.keys(draft.deployments);
  for (const unknown of targets.filter((d) => !(d in draft.deployments))) {
    issues.push({
      source: 'flag',
      variable: '--deployment',
      path: 'deployments',
      message: `unknown deployment "${unknown}" (declared: ${Object.keys(draft.deployments).join(', ') || 'none'})`,
    });
  }
  for (const { binding, value } of overrides) {
    const paths =
      binding.scope === 'top'
        ? [binding.path as string[]]
        : targets
            .filter((d) => d in draft.deployments)
            .map((d) => ['deployments', d, binding.scope, ...binding.path]);
    for (const p of paths) {
      setPath(draft, p, value);
      provenance.set(p.join('.'), {
        source: 'env',
        variable: binding.variable,
        path: p.join('.'),
        message: '',
      });
    }
  }
  // A source URL from the environment overrides the file's, or declares the source (defaults for the rest).
  const sources = draft.sources as Record<string, SourceConfig>;
  for (const o of sourceEnv.overrides) {
    sources[o.source] = { ...(sources[o.source] ?? defaultSourceConfig()), [o.field]: o.value };
    provenance.set(`sources.${o.source}.${o.field}`, {
      source: 'env',
      variable: o.variable,
      path: `sources.${o.source}.${o.field}`,
      message: '',
    });
  }
  for (const flag of opts.flags ?? []) {
    setPath(draft, flag.path, flag.value);
    provenance.set(flag.path.join('.'), {
      source: 'flag',
      variable: flag.flag,
      path: flag.path.join('.'),
      message: '',
    });
  }

  // 5. Cross-field rules, blamed on whoever set the value.
  for (const v of checkConfigRules(draft)) {
    const origin = provenance.get(v.path.join('.'));
    issues.push(origin ? { ...origin, message: v.message } : fileIssue(v.path, v.message));
  }
  if (issues.length > 0) throw new ConfigError(issues);

  // 6. Resolve paths against the config file's folder, then freeze.
  draft.functions = { ...draft.functions, dir: path.resolve(draft.baseDir, draft.functions.dir) };
  draft.plugins = { ...draft.plugins, dirs: draft.plugins.dirs.map((d) => path.resolve(draft.baseDir, d)) };
  const file = (p: string): string => (p === '' ? '' : path.resolve(draft.baseDir, p));
  draft.tls = { ...draft.tls, ca: file(draft.tls.ca), cert: file(draft.tls.cert), key: file(draft.tls.key) };
  const etcd = draft.registry.etcd;
  draft.registry = {
    ...draft.registry,
    etcd: { ...etcd, ca: file(etcd.ca), cert: file(etcd.cert), key: file(etcd.key) },
  };
  return deepFreeze(draft) as BlockxConfig;
}

// The file form: everything optional except what the schema requires; validated before this is used.
type FileDeployment = { kind: DeploymentKind } & {
  [K in 'coordinator' | 'worker' | 'executor']?: Record<string, unknown>;
};
interface FileConfig {
  version: 1;
  deployments?: Record<string, FileDeployment>;
  sources?: Record<string, Record<string, unknown>>;
  jobs?: Record<string, Record<string, unknown>>;
  tables?: Record<
    string,
    { columns: Record<string, { type: string; nullable?: boolean }> } & Record<string, unknown>
  >;
  [section: string]: unknown;
}

function withDefaults(file: FileConfig, configFile: string): ConfigDraft {
  const top = deepMerge(
    structuredClone(TOP_LEVEL_DEFAULTS),
    pick(file, Object.keys(TOP_LEVEL_DEFAULTS)),
  ) as typeof TOP_LEVEL_DEFAULTS;
  const deployments: Record<string, DeploymentConfig> = {};
  for (const [name, dep] of Object.entries(file.deployments ?? {})) {
    deployments[name] = {
      name,
      kind: dep.kind,
      coordinator: deepMerge(defaultCoordinatorConfig(dep.kind), dep.coordinator ?? {}),
      worker: deepMerge(defaultWorkerConfig(dep.kind), dep.worker ?? {}),
      executor: deepMerge(defaultExecutorConfig(), dep.executor ?? {}),
    } as DeploymentConfig;
  }
  // `blockx up` runs `block` when declared, otherwise the first declared deployment.
  if (!(file.up as { deployment?: string } | undefined)?.deployment) {
    const names = Object.keys(deployments);
    top.up.deployment = names.includes('block') ? 'block' : (names[0] ?? 'block');
  }
  const sources: Record<string, SourceConfig> = {};
  for (const [name, source] of Object.entries(file.sources ?? {})) {
    sources[name] = deepMerge(defaultSourceConfig(), source) as SourceConfig;
  }
  // `functions.retry.<name>` has no defaults (unset fields take the worker's callRetry): only an empty map.
  (top.functions as { retry?: unknown }).retry ??= {};
  const jobs: Record<string, JobConfig> = {};
  for (const [name, job] of Object.entries(file.jobs ?? {})) {
    jobs[name] = deepMerge(defaultJobConfig(), job) as JobConfig;
  }
  const tables: Record<string, TableConfig> = {};
  for (const [name, t] of Object.entries(file.tables ?? {})) {
    const columns = Object.fromEntries(
      Object.entries(t.columns).map(([c, decl]) => [c, { nullable: false, ...decl }]),
    );
    // Tasks may write only tables declared `writable: true` (docs/storage.md, "Which tables tasks may write").
    tables[name] = {
      writable: false,
      ...(t as unknown as TableConfig),
      columns: columns as TableConfig['columns'],
    };
  }
  return {
    version: 1,
    configFile,
    baseDir: configFile ? path.dirname(configFile) : process.cwd(),
    ...(top as unknown as Omit<
      ConfigDraft,
      'version' | 'configFile' | 'baseDir' | 'tables' | 'deployments' | 'sources' | 'jobs'
    >),
    tables,
    deployments,
    sources,
    jobs,
  };
}

function pick(obj: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => obj[k] !== undefined).map((k) => [k, obj[k]]));
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Merges `over` onto `base`: objects recursively, everything else (arrays included) replaced. */
function deepMerge<T>(base: T, over: Record<string, unknown>): T {
  const out = { ...(base as Record<string, unknown>) };
  for (const [k, v] of Object.entries(over)) {
    out[k] = isPlainObject(v) && isPlainObject(out[k]) ? deepMerge(out[k], v) : v;
  }
  return out as T;
}

function setPath(target: object, segments: readonly string[], value: unknown): void {
  let node = target as Record<string, unknown>;
  for (const seg of segments.slice(0, -1)) {
    if (!isPlainObject(node[seg])) node[seg] = {};
    node = node[seg] as Record<string, unknown>;
  }
  node[segments[segments.length - 1] as string] = value;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** ajv reports a failed `$ref`'d keyword and its parent `if`/`anyOf` noise; keep one error per path+keyword. */
function dedupeErrors(errors: ErrorObject[]): ErrorObject[] {
  const seen = new Set<string>();
  return errors.filter((e) => {
    // A bad key name yields the inner rule's error and a `propertyNames` error; keep the latter.
    if (e.propertyName !== undefined && e.keyword !== 'propertyNames') return false;
    const key = `${e.instancePath}|${e.keyword}|${JSON.stringify(e.params)}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
