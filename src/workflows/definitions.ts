/** Message definitions shared by the workflow and its callers. */
import { defineQuery } from '@temporalio/workflow';
import type { FollowUpProgress } from '../follow-up/types';

export const FOLLOW_UP_WORKFLOW_TYPE = 'followUpWorkflow';

/** Where the follow-up stands: last status, polls so far, next poll, last error. */
export const progressQuery = defineQuery<FollowUpProgress>('progress');
