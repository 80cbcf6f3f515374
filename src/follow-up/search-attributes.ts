/**
 * The custom search attributes a follow-up carries, so `AgentJobId="..."` finds every follow-up of a job in the Web
 * UI and `temporal workflow list`. Keywords: exact match, which is what ids, statuses and links need.
 *
 * They must be registered on the namespace before a worker runs (`scripts/register-search-attributes.sh`; the dev
 * servers of the tests and the demo register them). Their values are stored unencrypted: ids, a status and a link,
 * never the prompt or the key.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const AgentProjectId = defineSearchAttributeKey('AgentProjectId', SearchAttributeType.KEYWORD);
export const AgentJobId = defineSearchAttributeKey('AgentJobId', SearchAttributeType.KEYWORD);
/** The job's last status as read by the follow-up: kept current while polling. */
export const AgentJobStatus = defineSearchAttributeKey('AgentJobStatus', SearchAttributeType.KEYWORD);
/** The pull request's link, once a read shows one. */
export const AgentPrLink = defineSearchAttributeKey('AgentPrLink', SearchAttributeType.KEYWORD);

export const FOLLOW_UP_SEARCH_ATTRIBUTES = [AgentProjectId, AgentJobId, AgentJobStatus, AgentPrLink] as const;

/** Longest value we store in a keyword attribute; Temporal's default limit per value is 2 KiB. */
export const MAX_KEYWORD_BYTES = 2_048;
