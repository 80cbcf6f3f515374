/**
 * The follow-up's own metrics, recorded from workflow code through the SDK's workflow metric meter: it emits nothing
 * while a workflow replays, so a worker restart or a cache eviction never counts a follow-up twice. They reach
 * Prometheus with the worker's runtime metrics (namespace, task_queue and workflow_type labels are added by the SDK).
 */
import { metricMeter } from '@temporalio/workflow';

/** How a follow-up ended, as the `outcome` label: the job's terminal status, or why there was none. */
export type FollowUpMetricOutcome = 'completed' | 'archived' | 'failed' | 'timed_out' | 'cancelled' | 'error';

export const FollowUpMetric = {
  started: 'agent_followup_started',
  finished: 'agent_followup_finished',
  polls: 'agent_followup_polls',
  timeToTerminal: 'agent_followup_time_to_terminal',
} as const;

/** A follow-up began (its first run; a continued run is the same follow-up). */
export function recordStarted(): void {
  metricMeter.createCounter(FollowUpMetric.started, '1', 'Follow-ups started').add(1);
}

/** One get-job poll came back, labelled with the status it read. */
export function recordPoll(status: string): void {
  metricMeter.createCounter(FollowUpMetric.polls, '1', 'Get-job polls that returned a job').add(1, { status: metricLabel(status) });
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

/** Statuses outside the contract are bucketed, so an API that invents values cannot explode label cardinality. */
function metricLabel(status: string): string {
  return ['active', 'completed', 'archived', 'failed'].includes(status) ? status : 'other';
}
