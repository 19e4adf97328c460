// Bundle arithmetic (docs/architecture.md § Block data): bundle 0 holds the genesis block only; bundle b ≥ 1
// holds the `size` consecutive blocks (b − 1)·size + 1 … b·size, so with size 1000 block n is in
// bundle floor((n − 1) / 1000) + 1.

export const DEFAULT_BUNDLE_SIZE = 1000;

/** The inclusive block range of `bundle`. */
export function bundleRange(
  bundle: number,
  size: number = DEFAULT_BUNDLE_SIZE,
): { from: number; to: number } {
  if (!Number.isSafeInteger(bundle) || bundle < 0)
    throw new RangeError(`bundle must be an integer ≥ 0, got ${bundle}`);
  if (!Number.isSafeInteger(size) || size < 1)
    throw new RangeError(`bundle size must be an integer ≥ 1, got ${size}`);
  if (bundle === 0) return { from: 0, to: 0 };
  return { from: (bundle - 1) * size + 1, to: bundle * size };
}

/** The bundle block `number` belongs to. */
export function bundleOf(number: number, size: number = DEFAULT_BUNDLE_SIZE): number {
  return number === 0 ? 0 : Math.floor((number - 1) / size) + 1;
}
