// Behaviour every StorageBackend must show, whatever the database. Run on SQLite (in memory and in a
// file: test/unit/services/storage/sqlite-backend.test.ts) and on a real PostgreSQL
// (test/e2e/storage/postgres-backend.test.ts). Each test gets a fresh, empty database.
import { describe } from 'vitest';
import { conformanceDataTests } from './storage-conformance-data.js';
import type { ConformanceCapabilities, MakeBackend } from './storage-conformance-fixtures.js';
import { conformanceJsonScanTests } from './storage-conformance-json.js';
import { conformanceOpsTests } from './storage-conformance-ops.js';
import { conformanceWriteTests } from './storage-conformance-writes.js';

export * from './storage-conformance-fixtures.js';

export function describeBackendConformance(
  name: string,
  makeBackend: MakeBackend,
  caps: ConformanceCapabilities = { sharedDatabase: true },
): void {
  describe(`${name}: StorageBackend conformance`, () => {
    conformanceDataTests(makeBackend);
    conformanceOpsTests(makeBackend, caps);
    conformanceWriteTests(makeBackend);
    conformanceJsonScanTests(makeBackend);
  });
}
