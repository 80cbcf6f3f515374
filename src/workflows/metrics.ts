/**
 * The follow-up's own metrics, recorded from workflow code through the SDK's workflow metric meter: it emits nothing
 * while a workflow replays, so a worker restart or a cache eviction never counts a follow-up twice. They reach
 * Prometheus with the worker's runtime metrics (namespace, task_queue and workflow_type labels are added by the SDK).
 * Polls are counted by the poll activity (`agent_followup_polls`), which sees every read.
 */
import { metricMeter } from '@temporalio/workflow';

/** How a follow-up ended, as the `outcome` label: the job's terminal status, or why there was none. */
export type FollowUpMetricOutcome = 'completed' | 'archived' | 'failed' | 'timed_out' | 'cancelled' | 'error';

export const FollowUpMetric = {
  started: 'agent_followup_started',
  finished: 'agent_followup_finished',
  timeToTerminal: 'agent_followup_time_to_terminal',
} as const;

/** A follow-up began (its first run; a continued run is the same follow-up). */
export function recordStarted(): void {
  metricMeter.createCounter(FollowUpMetric.started, '1', 'Follow-ups started').add(1);
}

export function recordFinished(outcome: FollowUpMetricOutcome): void {
  metricMeter.createCounter(FollowUpMetric.finished, '1', 'Follow-ups finished, by outcome').add(1, { outcome });
}

/** Seconds from the accepted send to the terminal read. */
export function recordTimeToTerminal(seconds: number, outcome: FollowUpMetricOutcome): void {
  metricMeter
    .createHistogram(FollowUpMetric.timeToTerminal, 'float', 's', 'Seconds from the accepted send to a terminal status')
    .record(seconds, { outcome });
}
