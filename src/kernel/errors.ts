// Stable error codes of the kernel (config pipeline, plugin loader, schema registry).
// Each key equals its code; test/unit/kernel/errors.test.ts pins that, so a code never drifts.
// Errors carry structured fields and `cause`; the message is for people, the fields are for programs.

export const KernelErrorCode = {
  CONFIG_NOT_FOUND: 'CONFIG_NOT_FOUND',
  CONFIG_INVALID: 'CONFIG_INVALID',
  /** A service was asked to run a deployment the config does not declare (runWorker, createExecutorPorts). */
  DEPLOYMENT_UNKNOWN: 'DEPLOYMENT_UNKNOWN',
  PLUGIN_MANIFEST_INVALID: 'PLUGIN_MANIFEST_INVALID',
  PLUGIN_SCHEMA_MISSING: 'PLUGIN_SCHEMA_MISSING',
  PLUGIN_SCHEMA_INVALID: 'PLUGIN_SCHEMA_INVALID',
  PLUGIN_IMPORT_FAILED: 'PLUGIN_IMPORT_FAILED',
  PLUGIN_EXPORT_INVALID: 'PLUGIN_EXPORT_INVALID',
  PLUGIN_DUPLICATE_TYPE: 'PLUGIN_DUPLICATE_TYPE',
  PLUGIN_NOT_FOUND: 'PLUGIN_NOT_FOUND',
  PLUGIN_HOOK_FAILED: 'PLUGIN_HOOK_FAILED',
  PLUGIN_LOAD_FAILED: 'PLUGIN_LOAD_FAILED',
  TASK_CONFIG_INVALID: 'TASK_CONFIG_INVALID',
  TEARDOWN_FAILED: 'TEARDOWN_FAILED',
} as const;
export type KernelErrorCode = (typeof KernelErrorCode)[keyof typeof KernelErrorCode];

/**
 * Codes that several packages' tables hold with one meaning, written here once (docs/architecture.md
 * § Errors): a table that has one takes it from here, `CANCELLED: SharedErrorCode.CANCELLED`.
 * test/unit/error-codes.test.ts fails when a table spells one out again.
 */
export const SharedErrorCode = {
  /**
   * Stopped on purpose before it finished: by a signal, a closed IO scope or client, a task that
   * converged elsewhere. Never a failure of what ran, and never retried as one by the layer that saw it.
   */
  CANCELLED: 'CANCELLED',
} as const;

/** Base class of every BlockX domain error: a stable `code` plus structured details. */
export class BlockxError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A short description of a thrown value, for failure messages: its message, else its name. */
export function describeError(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}

/** The `retryable` flag an error carries, or undefined when it does not say (the caller applies its default). */
export function reportedRetryable(err: unknown): boolean | undefined {
  if (typeof err === 'object' && err !== null && 'retryable' in err) {
    const flag = (err as { retryable: unknown }).retryable;
    if (typeof flag === 'boolean') return flag;
  }
  return undefined;
}

/**
 * `make()` with no stack trace captured: for errors that are expected business outcomes handed back as
 * values, not bugs (a Coordinator answering "no executable slot" thousands of times a second under load).
 * Capturing the stack is most of an Error's cost (~20 µs on our machines; docs/batched-protocol.md).
 */
export function outcomeError<E extends Error>(make: () => E): E {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** One problem found while loading or validating configuration. */
export interface ConfigIssue {
  /** Where the value came from: the config file, an environment variable, or a CLI flag. */
  source: 'file' | 'env' | 'flag' | 'default';
  /** Dotted path into the config, e.g. `deployments.block.coordinator.maxCandidates`. */
  path: string;
  message: string;
  /** File, line and column (1-based) when the value came from the config file. */
  file?: string;
  line?: number;
  column?: number;
  /** The environment variable or flag the value came from. */
  variable?: string;
}

export function formatConfigIssue(issue: ConfigIssue): string {
  const where =
    issue.source === 'file' && issue.file
      ? `${issue.file}${issue.line ? `:${issue.line}:${issue.column ?? 1}` : ''}`
      : issue.variable
        ? `${issue.source === 'env' ? 'env' : 'flag'} ${issue.variable}`
        : issue.source;
  return `${where}: ${issue.path || '(root)'}: ${issue.message}`;
}

/** All problems of a config at once, never just the first. */
export class ConfigError extends BlockxError {
  readonly issues: readonly ConfigIssue[];
  constructor(issues: readonly ConfigIssue[], options?: { cause?: unknown }) {
    super(
      KernelErrorCode.CONFIG_INVALID,
      `invalid configuration (${issues.length} problem${issues.length === 1 ? '' : 's'}):\n` +
        issues.map((i) => `  - ${formatConfigIssue(i)}`).join('\n'),
      options,
    );
    this.issues = issues;
  }
}

/** The config declares no deployment of that name. */
export class DeploymentUnknownError extends BlockxError {
  declare readonly code: typeof KernelErrorCode.DEPLOYMENT_UNKNOWN;
  readonly deployment: string;
  constructor(deployment: string, declared: readonly string[]) {
    super(
      KernelErrorCode.DEPLOYMENT_UNKNOWN,
      `unknown deployment "${deployment}" (declared: ${declared.join(', ') || 'none'})`,
    );
    this.deployment = deployment;
  }
}

export class ConfigNotFoundError extends BlockxError {
  readonly searchedFrom: string;
  constructor(searchedFrom: string, detail?: string) {
    super(
      KernelErrorCode.CONFIG_NOT_FOUND,
      detail ??
        `no BlockX config found searching from ${searchedFrom} (blockx.config.yaml, .blockxrc.yaml or package.json#blockx); pass --config FILE or set BLOCKX_CONFIG`,
    );
    this.searchedFrom = searchedFrom;
  }
}

const PLUGIN_ERROR_BRAND = Symbol.for('blockx.PluginError');

/** Where a kernel-made PluginError happened: the plugin's path and, when relevant, its name and hook. */
export interface PluginErrorLocation {
  readonly pluginPath: string;
  readonly plugin?: string;
  readonly hook?: string;
  readonly message: string;
}

/** Options of a PluginError a plugin throws. */
export interface PluginErrorOptions<D = undefined> {
  /** Whether resubmitting the task may succeed. Default false: a plugin's own error is about the data. */
  readonly retryable?: boolean;
  /** Structured fields for programs (which output, which block, ...). */
  readonly details?: D;
  readonly cause?: unknown;
}

/**
 * The one plugin error, in two uses (docs/plugins.md § Errors):
 *
 * - a plugin throws it for a failure of its own: `new PluginError(code, message, { retryable, details })`
 *   (or a subclass naming its codes); the Worker reads `code` and `retryable` (docs/task-lifecycle.md
 *   § Failure codes);
 * - the kernel makes it when a plugin fails to load or register, or a hook tap throws:
 *   `new PluginError(code, { pluginPath, plugin, hook, message })`; `pluginPath` names the package.
 *
 * `err instanceof PluginError` holds for an error made by any copy of this module (a plugin loaded
 * from source next to a kernel loaded from dist/, or two installed copies of the package): instances
 * carry a `Symbol.for` brand, which `PluginError[Symbol.hasInstance]` checks. A subclass keeps the
 * ordinary `instanceof`.
 */
export class PluginError<C extends string = string, D = unknown> extends BlockxError {
  declare readonly code: C;
  readonly retryable: boolean;
  readonly details: D;
  /** The plugin package's path (kernel-made errors); empty for an error a plugin threw itself. */
  readonly pluginPath: string;
  readonly plugin: string | undefined;
  readonly hook: string | undefined;

  constructor(code: C, message: string, options?: PluginErrorOptions<D>);
  constructor(code: C, fields: PluginErrorLocation, options?: { cause?: unknown });
  constructor(code: C, what: string | PluginErrorLocation, options: PluginErrorOptions<D> = {}) {
    const located = typeof what === 'string' ? undefined : what;
    super(
      code,
      located
        ? `${code}: plugin ${located.plugin ? `${located.plugin} ` : ''}at ${located.pluginPath}: ${located.message}`
        : (what as string),
      'cause' in options ? { cause: options.cause } : undefined,
    );
    this.retryable = options.retryable ?? false;
    this.details = options.details as D;
    this.pluginPath = located?.pluginPath ?? '';
    this.plugin = located?.plugin;
    this.hook = located?.hook;
    Object.defineProperty(this, PLUGIN_ERROR_BRAND, { value: true });
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    // Subclasses (a plugin's own error class) keep the prototype-chain check.
    if (this !== PluginError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return (
      typeof value === 'object' &&
      value !== null &&
      (value as { [PLUGIN_ERROR_BRAND]?: unknown })[PLUGIN_ERROR_BRAND] === true
    );
  }
}

/** Every plugin problem found in one loading pass, never just the first; no broken plugin is registered. */
export class PluginLoadError extends BlockxError {
  readonly errors: readonly PluginError[];
  constructor(errors: readonly PluginError[]) {
    super(
      KernelErrorCode.PLUGIN_LOAD_FAILED,
      `plugin loading failed (${errors.length} problem${errors.length === 1 ? '' : 's'}):\n` +
        errors.map((e) => `  - ${e.message}`).join('\n'),
    );
    this.errors = errors;
  }
}

/** One schema violation inside a task or plugin config, with its JSON path and the rule it broke. */
export interface SchemaIssue {
  /** JSON pointer-like path, e.g. `/functionCallConfig/config/callList/0`. */
  path: string;
  /** The JSON Schema keyword that failed, e.g. `required`, `type`, `additionalProperties`. */
  rule: string;
  message: string;
}

export class TaskConfigError extends BlockxError {
  readonly issues: readonly SchemaIssue[];
  readonly pluginType: string | undefined;
  constructor(issues: readonly SchemaIssue[], pluginType?: string) {
    super(
      KernelErrorCode.TASK_CONFIG_INVALID,
      `invalid task config${pluginType ? ` for ${pluginType}` : ''}: ` +
        issues.map((i) => `${i.path || '/'} ${i.message} (rule: ${i.rule})`).join('; '),
    );
    this.issues = issues;
    this.pluginType = pluginType;
  }
}

/** One teardown step that threw or rejected. */
export interface TeardownFailure {
  /** The name the step was registered under, e.g. `worker`, `storage`, `metrics server`. */
  readonly step: string;
  readonly error: unknown;
}

/** Some steps of a TeardownStack failed; every other step still ran. `failures` in the order they ran. */
export class TeardownError extends BlockxError {
  declare readonly code: 'TEARDOWN_FAILED';
  readonly failures: readonly TeardownFailure[];
  constructor(failures: readonly TeardownFailure[]) {
    const steps = failures.map((f) => f.step).join(', ');
    super(
      KernelErrorCode.TEARDOWN_FAILED,
      `teardown failed in ${failures.length} step(s): ${steps}`,
      failures.length === 1 ? { cause: failures[0]?.error } : {},
    );
    this.failures = failures;
  }
}
