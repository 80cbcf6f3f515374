/**
 * The custom search attributes a follow-up carries, so `AgentJobId="..."` finds every follow-up of a job in the Web
 * UI and `temporal workflow list`. Keywords: exact match, which is what ids, statuses and links need.
 *
 * They must be registered on the namespace before a worker runs (`npx agent-followup setup`, or `scripts/install/register-search-attributes.sh`; the dev
 * servers of the tests and the demo register them). Their values are stored unencrypted: ids, a status and a link,
 * never the prompt or the key.
 */
import {
  defineSearchAttributeKey,
  SearchAttributeType,
  type SearchAttributePair,
  type SearchAttributeUpdatePair,
} from '@temporalio/common';
import { isTerminal, type AgentJob } from './agent-job';
import type { FollowUpOutcomeKind } from './outcome-kind';

export const AgentProjectId = defineSearchAttributeKey('AgentProjectId', SearchAttributeType.KEYWORD);
export const AgentJobId = defineSearchAttributeKey('AgentJobId', SearchAttributeType.KEYWORD);
/**
 * The job's last status as read by the follow-up: kept current while polling, and removed when the follow-up ends
 * without a terminal read, so `AgentJobStatus="active"` never finds a follow-up that stopped watching.
 */
export const AgentJobStatus = defineSearchAttributeKey('AgentJobStatus', SearchAttributeType.KEYWORD);
/** The pull request's link, once a read shows one. */
export const AgentPrLink = defineSearchAttributeKey('AgentPrLink', SearchAttributeType.KEYWORD);

/**
 * How the follow-up ended, set once when it ends (`completed`, `failed`, `archived` for the job's own ending;
 * `timed-out`, `rejected`, `invalid-input`, `delivery-unknown`, `cancelled`, `error` otherwise: outcome-kind.ts).
 * Unset while it runs. The Web UI's list shows a failed job and a PR alike as a green "Completed"; this tells them apart.
 */
export const AgentFollowUpOutcome = defineSearchAttributeKey('AgentFollowUpOutcome', SearchAttributeType.KEYWORD);

export const FOLLOW_UP_SEARCH_ATTRIBUTES = [
  AgentProjectId,
  AgentJobId,
  AgentJobStatus,
  AgentPrLink,
  AgentFollowUpOutcome,
] as const;

/**
 * Longest value we store in a keyword attribute. SQL visibility stores custom keywords in 255-character columns, and
 * a value the server refuses would fail the workflow task over and over: a longer status is cut, a longer link left out.
 */
export const MAX_KEYWORD_LENGTH = 255;

/** What the follow-up's attributes hold now (from `workflowInfo().typedSearchAttributes`). */
export interface CurrentJobAttributes {
  projectId?: string;
  jobId?: string;
  status?: string;
  prLink?: string;
}

/**
 * The upserts that bring the attributes in line with `job`: only what changed, so a poll that reads the same status
 * adds nothing to history. Project and job are set at start by our client; they are filled in here for follow-ups
 * started another way (another SDK, the Web UI, `temporal workflow start`).
 */
export function jobAttributeUpdates(
  ref: { projectId: string; jobId: string },
  job: AgentJob | null,
  current: CurrentJobAttributes,
): SearchAttributePair[] {
  const updates: SearchAttributePair[] = [];
  if (current.projectId !== ref.projectId) updates.push({ key: AgentProjectId, value: ref.projectId });
  if (current.jobId !== ref.jobId) updates.push({ key: AgentJobId, value: ref.jobId });
  if (job) {
    const status = job.status.slice(0, MAX_KEYWORD_LENGTH);
    if (current.status !== status) updates.push({ key: AgentJobStatus, value: status });
    const link = job.prLink ?? undefined;
    if (link !== undefined && link.length <= MAX_KEYWORD_LENGTH && current.prLink !== link) {
      updates.push({ key: AgentPrLink, value: link });
    }
  }
  return updates;
}

/**
 * The upserts when the follow-up ends: its outcome, and the job's status removed unless the last read was terminal
 * (a follow-up that timed out, failed or was cancelled no longer knows the job's status).
 */
export function endingAttributeUpdates(
  outcome: FollowUpOutcomeKind,
  lastStatus: string | undefined,
): SearchAttributeUpdatePair[] {
  const updates: SearchAttributeUpdatePair[] = [{ key: AgentFollowUpOutcome, value: outcome }];
  if (lastStatus !== undefined && !isTerminal(lastStatus)) updates.push({ key: AgentJobStatus, value: null });
  return updates;
}
