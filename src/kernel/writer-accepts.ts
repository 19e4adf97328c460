// What a writer takes beyond the fields of its own schema (docs/plugins.md § Writers that follow), declared
// in its manifest: `"accepts": ["fence"]`. A writer that accepts `fence` is given `fence {jobId, term}` by a
// follow job's runner (docs/follow.md § Fencing) and checks it with tx.checkFence first in the transaction
// that writes. The kernel validates the field against schemas/write-fence.schema.json, the one description
// of it, so no writer's schema repeats it, and hands the config on with the field in place.
import type { ErrorObject, ValidateFunction } from 'ajv';
import { kernelValidator } from './schema-validator.js';

/** Everything a manifest's `accepts` may hold. */
export const WRITER_ACCEPTS = ['fence'] as const;
export type WriterAccepts = (typeof WRITER_ACCEPTS)[number];

/** Where the fence travels in a writer's config. */
export const FENCE_FIELD = 'fence';

/**
 * `validate` (the writer's own schema, compiled) extended with the fields `accepts` names: with `fence`,
 * a config's `fence` is checked against the kernel's schema (its issues under `/fence`) and the rest
 * against the writer's, which never sees the field. Without anything accepted, `validate` itself.
 */
export function withAcceptedFields(
  validate: ValidateFunction,
  accepts: readonly WriterAccepts[],
): ValidateFunction {
  if (!accepts.includes('fence')) return validate;
  const fenceValidate = kernelValidator('write-fence');
  const extended = function (this: unknown, config: unknown): boolean {
    if (typeof config !== 'object' || config === null || Array.isArray(config) || !(FENCE_FIELD in config)) {
      const ok = validate.call(this, config);
      extended.errors = validate.errors;
      return ok;
    }
    const fields = config as Record<string, unknown>;
    const fence = fields[FENCE_FIELD];
    // ajv fills defaults into the object it checks, so the writer's schema checks this very object.
    delete fields[FENCE_FIELD];
    try {
      const ok = validate.call(this, fields);
      const fenceOk = fenceValidate(fence);
      const errors: ErrorObject[] = [
        ...(validate.errors ?? []),
        ...(fenceValidate.errors ?? []).map((e) => ({
          ...e,
          instancePath: `/${FENCE_FIELD}${e.instancePath}`,
        })),
      ];
      extended.errors = errors.length > 0 ? errors : null;
      return ok && fenceOk;
    } finally {
      fields[FENCE_FIELD] = fence;
    }
  } as ValidateFunction;
  extended.schema = validate.schema;
  extended.schemaEnv = validate.schemaEnv;
  return extended;
}
