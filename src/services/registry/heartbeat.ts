// Moved to the contracts module (src/contracts/heartbeat.ts): the heartbeat JSON is shared by the Worker
// (writes it) and the Coordinator (parses it). This path stays for its many importers (tests, bench).
export * from '../../contracts/heartbeat.js';
