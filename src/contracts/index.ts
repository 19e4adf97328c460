// The contracts both services share, in one place (docs/architecture.md § Code layout): the heartbeat
// JSON a Worker writes and a Coordinator parses, the registry key prefixes and the key layout
// `<prefix><workerAddr>`, and their error codes. Pure data and functions: no IO, no clock, no imports
// but each other and the kernel's base error class, so every layer — cores included — may import them.
export { HeartbeatParseError, RegistryErrorCode, RegistryPrefixError } from './errors.js';
export {
  MAX_HEARTBEAT_SLOTS,
  encodeWorkerHeartbeat,
  parseWorkerHeartbeat,
  parseWorkerRegistration,
  type HeartbeatParseResult,
  type WorkerHeartbeat,
} from './heartbeat.js';
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
} from './registry-prefix.js';
