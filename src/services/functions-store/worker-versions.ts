// Which Worker runs which code version, from the heartbeats in etcd (heartbeat field `codeVersion`,
// contracts/heartbeat.ts): what `blockx functions list` shows next to the versions. Values that do not
// parse are skipped, as the Coordinator skips them.

import type { Etcd3 } from 'etcd3';
import { parseWorkerRegistration } from '../../contracts/heartbeat.js';

export interface WorkerCodeVersion {
  readonly workerAddr: string;
  readonly registryPrefix: string;
  /** '' when the Worker does not report one. */
  readonly codeVersion: string;
  readonly codeVersionError: string;
  readonly lastHeartbeatMs: number;
}

/** Most heartbeats read per prefix (a registry holds a few hundred Workers; the rest is ignored). */
export const MAX_LISTED_WORKERS_PER_PREFIX = 10_000;

export async function readWorkerCodeVersions(
  client: Etcd3,
  prefixes: readonly string[],
): Promise<WorkerCodeVersion[]> {
  const out: WorkerCodeVersion[] = [];
  for (const prefix of [...new Set(prefixes)].sort()) {
    const values = await client.getAll().prefix(prefix).limit(MAX_LISTED_WORKERS_PER_PREFIX).buffers();
    for (const [key, value] of Object.entries(values)) {
      const r = parseWorkerRegistration(prefix, key, value);
      if (!r.ok) continue;
      out.push({
        workerAddr: r.value.workerAddr,
        registryPrefix: prefix,
        codeVersion: r.value.codeVersion ?? '',
        codeVersionError: r.value.codeVersionError ?? '',
        lastHeartbeatMs: r.value.lastHeartbeatMs,
      });
    }
  }
  return out.sort((a, b) => (a.workerAddr < b.workerAddr ? -1 : a.workerAddr > b.workerAddr ? 1 : 0));
}
