/**
 * The custom search attributes a follow-up carries, so `AgentJobId="..."` finds every follow-up of a job in the Web
 * UI and `temporal workflow list`. Keywords: exact match, which is what ids, statuses and links need.
 *
 * They must be registered on the namespace before a worker runs (`scripts/register-search-attributes.sh`; the dev
 * servers of the tests and the demo register them). Their values are stored unencrypted: ids, a status and a link,
 * never the prompt or the key.
 */
import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair } from '@temporalio/common';
import type { AgentJob } from '../agent-api/job';

export const AgentProjectId = defineSearchAttributeKey('AgentProjectId', SearchAttributeType.KEYWORD);
export const AgentJobId = defineSearchAttributeKey('AgentJobId', SearchAttributeType.KEYWORD);
/** The job's last status as read by the follow-up: kept current while polling. */
export const AgentJobStatus = defineSearchAttributeKey('AgentJobStatus', SearchAttributeType.KEYWORD);
/** The pull request's link, once a read shows one. */
export const AgentPrLink = defineSearchAttributeKey('AgentPrLink', SearchAttributeType.KEYWORD);

export const FOLLOW_UP_SEARCH_ATTRIBUTES = [AgentProjectId, AgentJobId, AgentJobStatus, AgentPrLink] as const;

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
