// 200,000 rows in a SQLite file, scanned 1,000 at a time with bounded memory.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStorage } from '../../../../src/services/storage/open-storage.js';
import type { StorageBackend } from '../../../../src/services/storage/types.js';
import { conformanceSettings } from '../../../support/storage-conformance.js';
import { fillLargeTable, LARGE_TABLE, scanLargeTable } from '../../../support/storage-large-scan.js';

describe('SQLite scan of a large table', () => {
  let dir: string;
  let backend: StorageBackend;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'blockx-sqlite-large-'));
    backend = await openStorage(conformanceSettings(`sqlite:${join(dir, 'large.db')}`), LARGE_TABLE);
    await backend.migrate();
  });

  afterAll(async () => {
    await backend?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('yields 200,000 rows once each, in key order, in pages of 1,000, with bounded heap growth', async () => {
    await fillLargeTable(backend, 200_000);
    const result = await scanLargeTable(backend, 1_000);
    expect(result).toMatchObject({ count: 200_000, pages: 200, outOfOrder: 0 });
    expect(result.heapGrowthBytes).toBeLessThan(100 * 1024 * 1024);
  }, 30_000);
});
