// Moved to the contracts module (src/contracts/registry-prefix.ts): the registry key prefixes are shared
// by the Worker, the Coordinator and the config rules. This path stays for its many importers (tests).
export {
  LEGACY_BLOCK_WORKER_REGISTRY_PREFIX,
  LEGACY_BUNDLE_WORKER_REGISTRY_PREFIX,
  PROD_DEFAULT_BLOCK_WORKER_REGISTRY_PREFIX,
  PROD_DEFAULT_BUNDLE_WORKER_REGISTRY_PREFIX,
  TEST_DEFAULT_BUNDLE_WORKER_REGISTRY_PREFIX,
  defaultRegistryPrefixes,
  parseRegistryPrefix,
  validateRegistryPrefixes,
  workerAddrFromKey,
  workerKey,
  type RegistryKind,
  type RegistryPrefix,
  type RegistryPrefixFormat,
  type RegistryPrefixListResult,
  type RegistryPrefixResult,
} from '../../contracts/registry-prefix.js';
