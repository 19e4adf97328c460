// The config field table: one row per setting (docs/configuration.md). Everything else about a field is
// derived from its row: the defaults (`sectionDefaults`), the env bindings (kernel/config-env.ts), the
// JSON Schema and the TS types (render-*.ts, written by scripts/gen-config.mjs and checked fresh by
// scripts/check-generated.mjs) and docs/configuration.md. Pure data: cores import it for their defaults.
import type { RegistryKind } from '../../contracts/registry-prefix.js';
import { COORDINATOR_FIELDS, COORDINATOR_GROUPS } from './coordinator-fields.js';
import { EXECUTOR_FIELDS, EXECUTOR_GROUPS } from './executor-fields.js';
import { defaultFor, type ConfigField, type ConfigGroup, type ConfigSection } from './field.js';
import { SHARED_FIELDS, SHARED_GROUPS } from './shared-fields.js';
import { SOURCE_FIELDS, SOURCE_GROUPS } from './source-fields.js';
import { JOB_FIELDS, JOB_GROUPS } from './job-fields.js';
import { FUNCTION_RETRY_FIELDS, FUNCTION_RETRY_GROUPS } from './function-retry-fields.js';
import { WORKER_FIELDS, WORKER_GROUPS } from './worker-fields.js';

export {
  defaultFor,
  defaultText,
  fieldDescription,
  isByKind,
  type ByKind,
  type ConfigField,
  type ConfigGroup,
  type ConfigSection,
  type EnvParserName,
  type FieldDefault,
  type FieldType,
} from './field.js';

/** Every field, by section: deployment sections first (their env bindings are listed first), then the top level. */
export const CONFIG_FIELDS: readonly ConfigField[] = Object.freeze([
  ...COORDINATOR_FIELDS,
  ...WORKER_FIELDS,
  ...EXECUTOR_FIELDS,
  ...SHARED_FIELDS,
  ...SOURCE_FIELDS,
  ...JOB_FIELDS,
  ...FUNCTION_RETRY_FIELDS,
]);

export const CONFIG_GROUPS: readonly ConfigGroup[] = Object.freeze([
  ...SHARED_GROUPS,
  ...COORDINATOR_GROUPS,
  ...WORKER_GROUPS,
  ...EXECUTOR_GROUPS,
  ...SOURCE_GROUPS,
  ...JOB_GROUPS,
  ...FUNCTION_RETRY_GROUPS,
]);

export const CONFIG_SECTIONS: readonly ConfigSection[] = [
  'top',
  'coordinator',
  'worker',
  'executor',
  'source',
  'job',
  'functionRetry',
];

export function fieldsOf(section: ConfigSection): readonly ConfigField[] {
  return CONFIG_FIELDS.filter((f) => f.section === section);
}

/** The row of one field; throws for a path the table does not have (a typo in code, not user input). */
export function configField(section: ConfigSection, path: string): ConfigField {
  const row = CONFIG_FIELDS.find((f) => f.section === section && f.path === path);
  if (row === undefined) throw new Error(`no config field ${section}:${path}`);
  return row;
}

export function groupOf(section: ConfigSection, path: string): ConfigGroup | undefined {
  return CONFIG_GROUPS.find((g) => g.section === section && g.path === path);
}

/**
 * The defaults of one section as a fresh nested object, keys in row order; fields without a default
 * are absent. `kind` picks the per-kind defaults (registry prefixes).
 */
export function sectionDefaults(
  section: ConfigSection,
  kind: RegistryKind = 'block',
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of fieldsOf(section)) {
    const value = defaultFor(field, kind);
    if (value === undefined) continue;
    const segments = field.path.split('.');
    let node = out;
    for (const seg of segments.slice(0, -1)) node = (node[seg] ??= {}) as Record<string, unknown>;
    node[segments[segments.length - 1] as string] = value;
  }
  return out;
}
