// The shape a plugin's default export must have, checked before anything calls into it.
import type { PluginKind } from './plugin-registry.js';

/** Entry points each kind must (or may) define, besides the common optional name/version/apply. */
const ENTRY_POINTS: Record<PluginKind, { required: readonly string[]; optional: readonly string[] }> = {
  builder: { required: ['build'], optional: ['stream'] },
  writer: { required: ['execute'], optional: [] },
};

const SIGNATURES: Record<string, string> = {
  build: 'build(taskCtx, config, io)',
  stream: 'stream(taskCtx, config, io)',
  execute: 'execute(taskCtx, config, outputs, io)',
};

/** Everything wrong with a default export for `kind`; `[]` means it has the right shape. */
export function checkPluginExport(kind: PluginKind, impl: unknown): string[] {
  if (impl === undefined) return ['the main module has no default export'];
  if (typeof impl === 'function') {
    return [
      `the default export is a function; export an object with ${SIGNATURES[ENTRY_POINTS[kind].required[0] ?? '']} ` +
        '(for a class, export an instance)',
    ];
  }
  if (typeof impl !== 'object' || impl === null || Array.isArray(impl)) {
    return [
      `the default export must be an object, got ${impl === null ? 'null' : Array.isArray(impl) ? 'an array' : typeof impl}`,
    ];
  }
  const value = impl as Record<string, unknown>;
  const problems: string[] = [];
  const { required, optional } = ENTRY_POINTS[kind];
  for (const method of required) {
    if (typeof value[method] !== 'function') problems.push(`a ${kind} must define ${SIGNATURES[method]}`);
  }
  for (const method of [...optional, 'apply']) {
    if (value[method] !== undefined && typeof value[method] !== 'function')
      problems.push(`${method} must be a function`);
  }
  const fusion = value.fusion;
  if (fusion !== undefined) {
    const many = kind === 'builder' ? 'buildMany' : 'executeMany';
    const f = fusion as Record<string, unknown> | null;
    if (typeof f !== 'object' || f === null || typeof f.key !== 'function' || typeof f[many] !== 'function')
      problems.push(`fusion must be an object with key(config) and ${many}(tasks, io) (docs/task-fusion.md)`);
  }
  for (const field of ['name', 'version']) {
    if (value[field] !== undefined && (typeof value[field] !== 'string' || value[field] === '')) {
      problems.push(`${field} must be a non-empty string`);
    }
  }
  return problems;
}

/**
 * The default export of an imported module namespace. A CommonJS module compiled from ESM
 * (`exports.default = …; exports.__esModule = true`) arrives as `{ default: { __esModule, default } }`;
 * unwrap that one level so both module systems work.
 */
export function defaultExport(namespace: unknown): unknown {
  const outer = (namespace as { default?: unknown } | null)?.default;
  if (
    typeof outer === 'object' &&
    outer !== null &&
    (outer as { __esModule?: unknown }).__esModule === true &&
    'default' in outer
  ) {
    return (outer as { default: unknown }).default;
  }
  return outer;
}
