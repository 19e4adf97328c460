// A scan inside a retry scope. Pages come from the backend's keyset-paginated scan; a retryable failure
// part-way re-runs the scan and skips the rows already yielded (the scan order is the primary key, so
// the continuation is the same as long as the table is not rewritten meanwhile). A page received since
// the last failure restores the full retry budget, so a long scan is not failed by a few far-apart
// hiccups. Aborting the scope rejects a pending page at once; stopping early releases the cursor.

import type { Row } from '../../../../kernel/plugin-types.js';
import type { StorageBackend, StorageScanQuery } from '../../../storage/types.js';
import { raceAbort, type RetryAttempts } from './retry-runner.js';

export interface ResumableScan<R = Row> {
  readonly backend: StorageBackend;
  readonly table: string;
  readonly query: StorageScanQuery;
  readonly signal: AbortSignal;
  readonly attempts: RetryAttempts;
  /** Sees every row before it is yielded (the scope seeds its get cache). */
  readonly onRow: ((row: R) => void) | undefined;
  /** The backend's pages (default: `backend.scan`; a JSON scan passes `backend.scanJson`). */
  readonly pages?: (signal: AbortSignal) => AsyncIterable<readonly R[]>;
}

export async function* resumableScan<R = Row>(scan: ResumableScan<R>): AsyncGenerator<R> {
  const { backend, table, query, signal, attempts, onRow } = scan;
  const pages =
    scan.pages ??
    ((s: AbortSignal) => backend.scan(table, query, { signal: s }) as AsyncIterable<readonly R[]>);
  let yielded = 0;
  for (;;) {
    if (signal.aborted) throw attempts.cancelled();
    const iterator = pages(signal)[Symbol.asyncIterator]();
    let skip = yielded;
    let finished = false;
    try {
      for (;;) {
        const page = await raceAbort(iterator.next(), signal, () => attempts.cancelled());
        if (page.done === true) {
          finished = true;
          return;
        }
        attempts.progressed();
        for (const row of page.value) {
          if (skip > 0) {
            skip--;
            continue;
          }
          onRow?.(row);
          yielded++;
          yield row;
        }
      }
    } catch (err) {
      await attempts.failed(err);
    } finally {
      // Stopped early (consumer break, error, cancel): release the backend's cursor, without waiting on
      // it (a cancelled page may still be pending).
      if (!finished) releaseIterator(iterator);
    }
  }
}

function releaseIterator(iterator: AsyncIterator<unknown>): void {
  try {
    void Promise.resolve(iterator.return?.()).catch(() => undefined);
  } catch {
    // a cursor that cannot be released is the backend's problem; the scan is over either way
  }
}
