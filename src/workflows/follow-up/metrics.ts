/**
 * The follow-up's own metrics, recorded from workflow code through the SDK's workflow metric meter: it emits nothing
 * while a workflow replays, so a worker restart or a cache eviction never counts a follow-up twice. They reach
 * Prometheus with the worker's runtime metrics (namespace, task_queue and workflow_type labels are added by the SDK).
 * Polls are counted by the poll activity (`agent_followup_polls_total`), which sees every read.
 */
import { metricMeter } from '@temporalio/workflow';
import type { FollowUpOutcomeKind } from '../../kernel/outcome-kind';

/** The outcome label: the same word as the AgentFollowUpOutcome search attribute and the CLI (outcome-kind.ts). */
export type FollowUpMetricOutcome = FollowUpOutcomeKind;

export const FollowUpMetric = {
  started: 'agent_followup_started_total',
  finished: 'agent_followup_finished_total',
  timeToTerminal: 'agent_followup_time_to_terminal_seconds',
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
