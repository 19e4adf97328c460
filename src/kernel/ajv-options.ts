// The ajv options of every validator BlockX compiles or generates (schema-validator.ts at run time,
// config-fields/render-schema-validators.ts at build time): one table, so a generated validator reports
// the same errors and fills the same defaults as one compiled when a process starts.
import type { Options } from 'ajv';

export const AJV_OPTIONS: Options = {
  allErrors: true,
  // Keep the offending value on each error so messages can say what was found.
  verbose: true,
  // Unknown keywords and formats are errors: a typo in a schema must not silently accept everything.
  // The stylistic lints (types, tuples, required-without-properties) flag valid schemas, so they are off.
  strictSchema: true,
  strictNumbers: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
};

// Plugin schemas fill in their defaults (`useDefaults`): the config a plugin receives has every
// `default` of its schema applied, so the schema is the only place a plugin default is written
// (docs/plugins.md § Config and defaults).
export const FOREIGN_AJV_OPTIONS: Options = { ...AJV_OPTIONS, useDefaults: true };
