/** p50 and p99 of millisecond samples (nearest rank). */
export function percentiles(samples: readonly number[]): { p50: number; p99: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (fraction: number) => sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)] ?? Number.NaN;
  return { p50: at(0.5), p99: at(0.99) };
}
