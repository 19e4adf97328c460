// Moved to the contracts module (src/contracts/registry-prefix.ts): the registry key prefixes are shared
// by the Worker, the Coordinator and the config rules. This path stays for its many importers (tests).
export * from '../../contracts/registry-prefix.js';
