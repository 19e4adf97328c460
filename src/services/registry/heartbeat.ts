// Moved to the contracts module (src/contracts/heartbeat.ts): the heartbeat JSON is shared by the Worker
// (writes it) and the Coordinator (parses it). This path stays for its many importers (tests, bench).
export {
  MAX_HEARTBEAT_SLOTS,
  encodeWorkerHeartbeat,
  parseWorkerHeartbeat,
  parseWorkerRegistration,
  type HeartbeatParseResult,
  type WorkerHeartbeat,
} from '../../contracts/heartbeat.js';
