// The schema of blockx.config.yaml as a validator, and the translation of ajv errors into sentences a user
// can act on ("unknown key "maxCandidate" (did you mean maxCandidates?)", "must be one of: block, bundle").
// The validator is ajv's code for schemas/blockx.config.schema.json, generated with it from the field
// table (config-fields/render-validator.ts), so no process compiles the schema when it starts.
import type { ErrorObject, ValidateFunction } from 'ajv';
import validateConfig from './config-fields/generated/config-validator.js';

export function compileConfigSchema(): ValidateFunction {
  return validateConfig as ValidateFunction;
}

export interface DescribedError {
  path: (string | number)[];
  message: string;
  /** Point at the key rather than the value (unknown keys, bad key names). */
  pointAtKey: boolean;
}

export function describeSchemaError(err: ErrorObject): DescribedError {
  const path = err.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const got = err.data === undefined ? '' : ` (got ${JSON.stringify(err.data)})`;
  switch (err.keyword) {
    case 'additionalProperties': {
      const key = String((err.params as { additionalProperty: string }).additionalProperty);
      const known = Object.keys((err.parentSchema as { properties?: object } | undefined)?.properties ?? {});
      const guess = closest(key, known);
      return {
        path: [...path, key],
        pointAtKey: true,
        message: `unknown key "${key}"${guess ? ` (did you mean "${guess}"?)` : known.length ? ` (allowed: ${known.join(', ')})` : ''}`,
      };
    }
    case 'required': {
      const key = (err.params as { missingProperty: string }).missingProperty;
      return { path, pointAtKey: false, message: `missing required key "${key}"` };
    }
    case 'enum': {
      const allowed = (err.params as { allowedValues: unknown[] }).allowedValues;
      return {
        path,
        pointAtKey: false,
        message: `must be one of: ${allowed.map((v) => String(v)).join(', ')}${got}`,
      };
    }
    case 'const':
      return {
        path,
        pointAtKey: false,
        message: `must be ${JSON.stringify((err.params as { allowedValue: unknown }).allowedValue)}${got}`,
      };
    case 'type':
      return { path, pointAtKey: false, message: `must be ${(err.params as { type: string }).type}${got}` };
    case 'propertyNames': {
      const name = (err.params as { propertyName: string }).propertyName;
      return {
        path: [...path, name],
        pointAtKey: true,
        message: `invalid name "${name}": use lower-case letters, digits and _`,
      };
    }
    default:
      return { path, pointAtKey: false, message: `${err.message ?? 'is invalid'}${got}` };
  }
}

/**
 * Closest candidate by edit distance, when it is close enough to be a plausible typo. Also the
 * "did you mean" of `blockx validate`'s function, table and column checks (src/cli/task-references.ts).
 */
export function closest(word: string, candidates: string[]): string | undefined {
  let best: string | undefined;
  let bestDist = Infinity;
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    if (d < bestDist) [best, bestDist] = [c, d];
  }
  return bestDist <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length]!;
}
