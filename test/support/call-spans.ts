// When and where calls ran, as functions that report it return it (the tenant tests: test/e2e/tenants.test.ts,
// test/integration/executor/python-tenants.test.ts): pairs that overlapped on one thread or process, and
// how many submitters each one served.

/** One call: whose it was, where it ran (a thread or process id) and its start and end on one clock. */
export interface CallSpan {
  readonly who: string;
  readonly where: string;
  readonly start: number;
  readonly end: number;
}

/** Pairs of calls that ran in one place at the same time: of one submitter (`same`) or of two (`cross`). */
export function overlaps(all: readonly CallSpan[]): { same: number; cross: number } {
  let same = 0;
  let cross = 0;
  for (const [i, a] of all.entries())
    for (const b of all.slice(i + 1))
      if (a.where === b.where && a.start < b.end && b.start < a.end) {
        if (a.who === b.who) same++;
        else cross++;
      }
  return { same, cross };
}

/** How many submitters each place served, by place. */
export function submittersPerPlace(all: readonly CallSpan[]): Map<string, number> {
  const by = new Map<string, Set<string>>();
  for (const s of all) by.set(s.where, (by.get(s.where) ?? new Set()).add(s.who));
  return new Map([...by].map(([where, who]) => [where, who.size]));
}
