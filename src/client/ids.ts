/**
 * The default ids of follow-ups and schedules: the same (project, job, prompt) always maps to the same id, so a
 * retried call attaches instead of sending twice. `/` separates the parts because no project or job id may contain
 * one (kernel/request.ts), so two different jobs never share an id (`acme` + `web-X` and `acme-web` + `X` would
 * with `-`); the digest covers the whole tuple too.
 *
 * Ids are in clear in Temporal, and a plain digest of a short prompt is found by trying a dictionary of phrases. So
 * with payload encryption on, the digest is an HMAC under a key derived from the payload keys
 * (AesGcmPayloadCodec.workflowIdKey): without the keys, an id says nothing about its prompt. Without encryption the
 * digest is unkeyed, as before: nothing about the prompt is secret then.
 */
import { createHash, createHmac } from 'node:crypto';
import type { LoadedDataConverter } from '@temporalio/common';
import { AesGcmPayloadCodec } from '../encryption/aes-gcm-codec';
import type { FollowUpRequest } from '../kernel/request';
import { FOLLOW_UP_ID_PREFIX, SCHEDULE_ID_PREFIX } from '../kernel/workflow-ids';

type Tuple = Pick<FollowUpRequest, 'projectId' | 'jobId' | 'prompt'>;

/**
 * 16 hex characters of sha256 over the exact (project, job, prompt) tuple; an HMAC-SHA256 under `idKey` when given
 * (the key of an encrypting deployment, `workflowIdKeyOf`).
 */
export function tupleDigest(input: Tuple, idKey?: Uint8Array): string {
  const hash = idKey ? createHmac('sha256', idKey) : createHash('sha256');
  return hash
    .update(JSON.stringify([input.projectId, input.jobId, input.prompt]), 'utf8')
    .digest('hex')
    .slice(0, 16);
}

/** The default workflow id of a follow-up. */
export function followUpWorkflowId(input: Tuple, idKey?: Uint8Array): string {
  return `${FOLLOW_UP_ID_PREFIX}${input.projectId}/${input.jobId}/${tupleDigest(input, idKey)}`;
}

/** The default schedule id: one schedule per (project, job, prompt), unambiguous like the follow-up's own id. */
export function followUpScheduleId(input: Tuple, idKey?: Uint8Array): string {
  return `${SCHEDULE_ID_PREFIX}${input.projectId}/${input.jobId}/${tupleDigest(input, idKey)}`;
}

/** The id key of a client's data converter: its encrypting codec's, or undefined when it encrypts nothing. */
export function workflowIdKeyOf(converter: Pick<LoadedDataConverter, 'payloadCodecs'>): Uint8Array | undefined {
  const codec = converter.payloadCodecs.find((candidate) => candidate instanceof AesGcmPayloadCodec);
  return codec instanceof AesGcmPayloadCodec ? codec.workflowIdKey() : undefined;
}
