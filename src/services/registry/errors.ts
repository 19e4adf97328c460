// Moved to the contracts module (src/contracts/errors.ts), with the heartbeat and prefix code they belong
// to. This path stays for its importers.
export { HeartbeatParseError, RegistryErrorCode, RegistryPrefixError } from '../../contracts/errors.js';
