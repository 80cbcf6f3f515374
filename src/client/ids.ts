/**
 * The default ids of follow-ups and schedules: the same (project, job, prompt) always maps to the same id, so a
 * retried call attaches instead of sending twice. `/` separates the parts because no project or job id may contain
 * one (kernel/request.ts), so two different jobs never share an id (`acme` + `web-X` and `acme-web` + `X` would
 * with `-`); the digest covers the whole tuple too.
 */
import { createHash } from 'node:crypto';
import type { FollowUpRequest } from '../kernel/request';
import { FOLLOW_UP_ID_PREFIX, SCHEDULE_ID_PREFIX } from '../kernel/workflow-ids';

type Tuple = Pick<FollowUpRequest, 'projectId' | 'jobId' | 'prompt'>;

/** 16 hex characters of sha256 over the exact (project, job, prompt) tuple. */
export function tupleDigest(input: Tuple): string {
  return createHash('sha256')
    .update(JSON.stringify([input.projectId, input.jobId, input.prompt]), 'utf8')
    .digest('hex')
    .slice(0, 16);
}

/** The default workflow id of a follow-up. */
export function followUpWorkflowId(input: Tuple): string {
  return `${FOLLOW_UP_ID_PREFIX}${input.projectId}/${input.jobId}/${tupleDigest(input)}`;
}

/** The default schedule id: one schedule per (project, job, prompt), unambiguous like the follow-up's own id. */
export function followUpScheduleId(input: Tuple): string {
  return `${SCHEDULE_ID_PREFIX}${input.projectId}/${input.jobId}/${tupleDigest(input)}`;
}
