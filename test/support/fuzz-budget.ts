// How many cases a fuzz test runs (test/README.md, "Fuzz budgets"). A file names its budget once, with the
// cap it gets under CI=true, where the whole suite must fit its time bound; a run by hand keeps the full
// budget, and `FUZZ_RUNS=N` asks for N cases whatever the budget and the cap (a longer search by hand).
//
//   const RUNS = fuzzRuns({ budget: 120, ciCap: 60 });
//   const TIMEOUT_MS = fuzzTimeoutMs(50_000); // the file's own bound; a FUZZ_RUNS run gets 30 min

export interface FuzzBudget {
  /** Cases run by default. */
  readonly budget: number;
  /** Cases run at most under CI=true. */
  readonly ciCap: number;
}

/** Whether FUZZ_RUNS asks for a number of cases (the caller may then need more time). */
export const fuzzRunsAsked = (): boolean => (process.env['FUZZ_RUNS'] ?? '') !== '';

export function fuzzRuns({ budget, ciCap }: FuzzBudget): number {
  const asked = process.env['FUZZ_RUNS'];
  if (asked !== undefined && asked !== '') {
    const n = Number(asked);
    if (!Number.isInteger(n) || n < 1) throw new Error(`FUZZ_RUNS must be a positive integer, got ${asked}`);
    return n;
  }
  return process.env['CI'] === 'true' ? Math.min(budget, ciCap) : budget;
}

/** `boundMs` for a budgeted run; half an hour when FUZZ_RUNS asks for a longer one. */
export function fuzzTimeoutMs(boundMs: number): number {
  return fuzzRunsAsked() ? 1_800_000 : boundMs;
}
