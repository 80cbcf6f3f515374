/**
 * What differs between the options of a follow-up being started and the one already running under the same id
 * (same project, job and prompt). Starting attaches to the running one and keeps its options, so a caller is told.
 */
import { formatMs } from '../kernel/duration';
import type { FollowUpRequest } from '../kernel/request';

const DURATIONS = [
  ['initialIntervalMs', 'initial interval'],
  ['maxIntervalMs', 'max interval'],
  ['timeoutMs', 'timeout'],
  ['settleWindowMs', 'settle window'],
] as const;

/** One line per option that differs: "timeout 1h here, 24h in the running follow-up". Empty when they agree. */
export function optionDifferences(given: FollowUpRequest, running: FollowUpRequest): string[] {
  const differences: string[] = [];
  for (const [field, name] of DURATIONS) {
    if (given.polling[field] !== running.polling[field]) {
      differences.push(
        `${name} ${formatMs(given.polling[field])} here, ${formatMs(running.polling[field])} in the running follow-up`,
      );
    }
  }
  if (given.polling.backoffCoefficient !== running.polling.backoffCoefficient) {
    differences.push(
      `backoff coefficient ${given.polling.backoffCoefficient} here, ${running.polling.backoffCoefficient} in the running follow-up`,
    );
  }
  if (given.onAmbiguousSend !== running.onAmbiguousSend) {
    differences.push(
      `on-ambiguous-send ${given.onAmbiguousSend} here, ${running.onAmbiguousSend} in the running follow-up`,
    );
  }
  return differences;
}
