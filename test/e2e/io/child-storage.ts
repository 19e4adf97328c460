// The storage a child process of the IO tests writes to (not a test file): the backend of URL opened with
// the repository's config, as a Worker opens it.
import path from 'node:path';
import { loadConfig } from '../../../src/kernel/config.js';
import { openStorage } from '../../../src/services/storage/open-storage.js';
import type { StorageBackend } from '../../../src/services/storage/types.js';

export function openChildStorage(url: string): Promise<StorageBackend> {
  const repo = path.resolve(import.meta.dirname, '../../..');
  const config = loadConfig({
    configPath: path.join(repo, 'blockx.config.yaml'),
    cwd: repo,
    env: { BLOCKX_STORAGE_URL: url },
  });
  return openStorage(config.storage, config.tables, { baseDir: config.baseDir });
}
