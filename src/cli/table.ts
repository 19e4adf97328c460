// A plain aligned text table for terminal output (no colours, so it pipes cleanly).
export function renderTable<K extends string>(
  columns: readonly K[],
  rows: readonly Record<K, string>[],
): string {
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c]).length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return (
    [
      line(columns.map((c) => c.toUpperCase())),
      ...rows.map((r) => line(columns.map((c) => String(r[c])))),
    ].join('\n') + '\n'
  );
}
