// Every file generated from the config field table, as { file, text } before formatting:
// scripts/gen-config.mjs writes them (prettier-formatted), scripts/check-generated.mjs compares them.
import { renderConfigDocs } from './render-docs.js';
import { renderConfigSchema } from './render-schema.js';
import { CONFIG_TYPES_FILES, renderDeploymentTypes, renderTopLevelTypes } from './render-types.js';
import { CONFIG_VALIDATOR_FILE, renderConfigValidator } from './render-validator.js';
import {
  KERNEL_VALIDATORS_FILE,
  PLUGIN_VALIDATORS_FILE,
  renderBuiltinPluginValidators,
  renderKernelSchemaValidators,
} from './render-schema-validators.js';

export interface ConfigArtefact {
  /** Repository-relative path. */
  readonly file: string;
  readonly text: string;
  /** False for code no one reads (the validator): written as rendered, not through prettier. */
  readonly format?: boolean;
}

export function configArtefacts(): ConfigArtefact[] {
  const schema = renderConfigSchema();
  return [
    // One line: prettier then lays it out as it would any hand-written JSON of the repository.
    { file: 'schemas/blockx.config.schema.json', text: `${JSON.stringify(schema)}\n` },
    { file: CONFIG_VALIDATOR_FILE, text: renderConfigValidator(schema), format: false },
    { file: CONFIG_TYPES_FILES.top, text: renderTopLevelTypes() },
    { file: CONFIG_TYPES_FILES.deployment, text: renderDeploymentTypes() },
    { file: 'docs/configuration.md', text: renderConfigDocs() },
    // Not from the field table: the validators of the other schemas every process checks at start.
    { file: KERNEL_VALIDATORS_FILE, text: renderKernelSchemaValidators(), format: false },
    { file: PLUGIN_VALIDATORS_FILE, text: renderBuiltinPluginValidators(), format: false },
  ];
}
