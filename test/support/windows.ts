/** The most timestamps that fall within any one window of `windowMs` (a sliding count, as the vendor's limit counts). */
export function maxInAnyWindow(timesMs: number[], windowMs: number): number {
  const sorted = [...timesMs].sort((a, b) => a - b);
  let most = 0;
  let first = 0;
  for (let last = 0; last < sorted.length; last += 1) {
    while ((sorted[last] as number) - (sorted[first] as number) >= windowMs) first += 1;
    most = Math.max(most, last - first + 1);
  }
  return most;
}
