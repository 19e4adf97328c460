// The rows of `token_transfers` for the Anvil chain as the follow e2e tests compare them: one line per row,
// `block:logIndex token from→to amount`, sorted, read from the cluster's storage with its own config.
import { loadConfig } from '../../src/kernel/config.js';
import { openStorage } from '../../src/services/storage/open-storage.js';
import { ANVIL_CHAIN_ID } from './anvil.js';
import type { TestCluster } from './cluster.js';

/** A token_transfers row as one comparable line. */
export const transferRowText = (r: Record<string, unknown>): string =>
  `${String(r.block_number)}:${String(r.log_idx)} ${String(r.token)} ` +
  `${String(r.from_address)}→${String(r.to_address)} ${String(r.amount)}`;

/** The cluster's token_transfers rows of the Anvil chain, as sorted lines. */
export async function clusterTransferRows(cluster: TestCluster): Promise<string[]> {
  const config = loadConfig({ configPath: cluster.configPath, env: cluster.env });
  const backend = await openStorage(config.storage, config.tables, { baseDir: config.baseDir });
  try {
    const rows: string[] = [];
    for await (const page of backend.scan('token_transfers', { where: { chain_id: ANVIL_CHAIN_ID } })) {
      for (const r of page) rows.push(transferRowText(r as Record<string, unknown>));
    }
    return rows.sort();
  } finally {
    await backend.close();
  }
}
