/**
 * Listing follow-ups (`FollowUpClient.list`, the CLI's `list`): the visibility query for a project, a job and a state,
 * and one row per follow-up from what the server keeps of it (its search attributes and times; no worker is asked).
 * A follow-up that continued as new is one row: its earlier runs are not listed.
 */
import type { WorkflowExecutionInfo } from '@temporalio/client';
import { identifierProblem } from '../kernel/request';
import {
  AgentFollowUpOutcome,
  AgentJobId,
  AgentJobStatus,
  AgentPrLink,
  AgentProjectId,
} from '../kernel/search-attributes';
import { FOLLOW_UP_OUTCOME_KINDS } from '../kernel/outcome-kind';
import type { FollowUpOutcomeKind } from '../kernel/types';
import { invalidField } from './errors';

/** `running`, `ended` (any way), or one way of ending. */
export const LIST_STATES = ['running', 'ended', ...FOLLOW_UP_OUTCOME_KINDS] as const;
export type ListState = (typeof LIST_STATES)[number];

export const LIST_LIMIT_MAX = 1_000;
const LIST_LIMIT_DEFAULT = 50;

export interface FollowUpListFilter {
  projectId?: string;
  jobId?: string;
  state?: ListState;
  /** At most this many (default 50, at most 1,000): running ones first, then the latest ended (Temporal's order). */
  limit?: number;
}

/** One follow-up as the server lists it. */
export interface ListedFollowUp {
  workflowId: string;
  projectId: string | null;
  jobId: string | null;
  /** Temporal's status of its current run: RUNNING, COMPLETED, FAILED, CANCELLED, TERMINATED, TIMED_OUT. */
  executionStatus: string;
  /** How it ended (null while running, and for a follow-up terminated from outside, which could not say). */
  outcome: FollowUpOutcomeKind | null;
  /** The job's status in the follow-up's last read (null before one, or once it stopped watching without one). */
  jobStatus: string | null;
  prLink: string | null;
  /** When its current run started (a follow-up that continued as new started earlier). */
  startedAt: string;
  endedAt: string | null;
}

export interface FollowUpList {
  followUps: ListedFollowUp[];
  /** More follow-ups match than the limit let through. */
  more: boolean;
}

/** The filter, checked: ids as a follow-up's input takes them (so they go into the query as they are), a known state. */
export function checkListFilter(filter: FollowUpListFilter): FollowUpListFilter & { limit: number } {
  for (const field of ['projectId', 'jobId'] as const) {
    const problem = filter[field] === undefined ? undefined : identifierProblem(field, filter[field]);
    if (problem) throw invalidField(field, problem);
  }
  if (filter.state !== undefined && !(LIST_STATES as readonly string[]).includes(filter.state))
    throw invalidField('state', `state must be one of ${LIST_STATES.join(', ')}; got '${String(filter.state)}'`);
  const limit = filter.limit ?? LIST_LIMIT_DEFAULT;
  if (!Number.isInteger(limit) || limit < 1 || limit > LIST_LIMIT_MAX)
    throw invalidField('limit', `limit must be a whole number from 1 to ${LIST_LIMIT_MAX}; got ${String(limit)}`);
  return { ...filter, limit };
}

/** One row, from what the server lists of a follow-up's run. */
export function listedFollowUp(execution: WorkflowExecutionInfo): ListedFollowUp {
  const attributes = execution.typedSearchAttributes;
  const outcome = attributes.get(AgentFollowUpOutcome);
  return {
    workflowId: execution.workflowId,
    projectId: attributes.get(AgentProjectId) ?? null,
    jobId: attributes.get(AgentJobId) ?? null,
    executionStatus: execution.status.name,
    outcome:
      outcome !== undefined && (FOLLOW_UP_OUTCOME_KINDS as readonly string[]).includes(outcome)
        ? (outcome as FollowUpOutcomeKind)
        : null,
    jobStatus: attributes.get(AgentJobStatus) ?? null,
    prLink: attributes.get(AgentPrLink) ?? null,
    startedAt: execution.startTime.toISOString(),
    endedAt: execution.closeTime?.toISOString() ?? null,
  };
}
