/**
 * What the Web UI shows about a follow-up before anyone opens its input: a one-line summary in the workflow list, a
 * Markdown details block in the overview, and the search attributes that let a list query find it, set by
 * whoever starts the follow-up (the client, and schedules for their runs).
 */
import type { SearchAttributePair } from '@temporalio/common';
import { formatMs } from '../kernel/duration';
import type { FollowUpRequest } from '../kernel/request';
import { AgentJobId, AgentProjectId } from '../kernel/search-attributes';

/** Temporal's limit for a static summary. */
export const MAX_SUMMARY_BYTES = 200;
/** The details show more of the prompt, still far below the 20 KB limit; the whole prompt stays in the input. */
const DETAILS_PROMPT_BYTES = 1_000;

export interface FollowUpStartMetadata {
  staticSummary: string;
  staticDetails: string;
  typedSearchAttributes: SearchAttributePair[];
}

export function followUpStartMetadata(input: FollowUpRequest): FollowUpStartMetadata {
  return {
    staticSummary: followUpSummary(input),
    staticDetails: followUpDetails(input),
    typedSearchAttributes: [
      { key: AgentProjectId, value: input.projectId },
      { key: AgentJobId, value: input.jobId },
    ],
  };
}

/** `Follow-up proj-1/job-7: "Also add tests for…"`, at most 200 bytes of UTF-8. */
export function followUpSummary(input: Pick<FollowUpRequest, 'projectId' | 'jobId' | 'prompt'>): string {
  const head = `Follow-up ${input.projectId}/${input.jobId}: "`;
  const room = MAX_SUMMARY_BYTES - utf8Length(head) - utf8Length('"');
  return `${head}${excerpt(input.prompt, Math.max(room, 0))}"`;
}

export function followUpDetails(input: FollowUpRequest): string {
  const { initialIntervalMs, backoffCoefficient, maxIntervalMs, timeoutMs, settleWindowMs } = input.polling;
  return [
    `**Agent follow-up** to project \`${input.projectId}\`, job \`${input.jobId}\``,
    '',
    `> ${excerpt(input.prompt, DETAILS_PROMPT_BYTES)}`,
    '',
    `Polling: from ${formatMs(initialIntervalMs)}, ×${backoffCoefficient}, up to ${formatMs(maxIntervalMs)}; gives up after ${formatMs(timeoutMs)}; ` +
      `settle window ${formatMs(settleWindowMs)}; ambiguous sends: ${input.onAmbiguousSend}.`,
  ].join('\n');
}

/** The prompt on one line, cut at a character boundary to fit `maxBytes` of UTF-8, with "…" when cut. */
export function excerpt(prompt: string, maxBytes: number): string {
  const line = prompt
    .replace(/[\u0000-\u001f\u007f]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return truncateUtf8(line, maxBytes);
}

/** Cuts `text` to at most `maxBytes` bytes of UTF-8 without splitting a character; marks a cut with "…". */
export function truncateUtf8(text: string, maxBytes: number): string {
  if (utf8Length(text) <= maxBytes) return text;
  const ellipsis = '…';
  const budget = maxBytes - utf8Length(ellipsis);
  if (budget < 0) return '';
  let used = 0;
  let out = '';
  for (const char of text) {
    const size = utf8Length(char);
    if (used + size > budget) break;
    used += size;
    out += char;
  }
  return out + ellipsis;
}

/** Bytes of `text` in UTF-8, counted by code point (no TextEncoder: workflow code uses this too). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  return bytes;
}
