// The one scan result of the storage-read contract (docs/plugins.md § Reading storage,
// docs/functions.md § Reading storage): plugins (`TaskIo.scan`) and functions (`ctx.io.scan`) both get a
// RowScan — rows one at a time with `for await`, or all of them with `toArray()`. Pure, no imports, so
// the function SDK can use it.

/** Rows of a scan: iterate with `for await`, or collect with `toArray()` (memory grows with the result). */
export interface RowScan<R> extends AsyncIterable<R> {
  toArray(): Promise<R[]>;
}

/** A RowScan over `open()`; each iteration (and each `toArray`) opens the scan afresh. */
export function rowScan<R>(open: () => AsyncIterator<R>): RowScan<R> {
  const scan: RowScan<R> = {
    [Symbol.asyncIterator]: open,
    async toArray() {
      const rows: R[] = [];
      for await (const row of scan) rows.push(row);
      return rows;
    },
  };
  return scan;
}
