// Order statistics of a scenario's samples, one definition for every scenario (each had its own, rounding the
// middle of an even count its own way).

const ascending = (xs: readonly number[]): number[] => [...xs].sort((a, b) => a - b);

/** The median of `xs` (any order): the middle sample, or the mean of the two middle ones; NaN when there are none. */
export function median(xs: readonly number[]): number {
  const sorted = ascending(xs);
  const mid = sorted.length >> 1;
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** The sample at quantile `q` (0 < q < 1) of `xs` (any order), by nearest rank: the one that a fraction `q` of the
 * samples lie below (p99 of 200: the 199th); NaN when there are none. */
export function quantile(xs: readonly number[], q: number): number {
  const sorted = ascending(xs);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}
