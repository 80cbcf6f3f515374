/**
 * The follow-up's input at the client's edge: the caller's shape and a zod schema over the rules of request.ts, so
 * the client, the CLI and schedules validate with zod (and compose the schema into their own) while the workflow
 * checks the very same rules without zod. Not imported by workflow code.
 */
import { z } from 'zod';
import { formatMs } from '../kernel/duration';
import {
  inspectFollowUpInput,
  AMBIGUOUS_SEND_POLICIES,
  DEFAULT_MAX_PROMPT_LENGTH,
  DEFAULT_POLLING,
  INPUT_FIELDS,
  LIMITS,
  POLLING_FIELDS,
  type FollowUpInput,
  type FollowUpRequest,
} from '../kernel/request';

export { DEFAULT_MAX_PROMPT_LENGTH, DEFAULT_POLLING, AMBIGUOUS_SEND_POLICIES } from '../kernel/request';
export type {
  AmbiguousSendPolicy,
  DurationInput,
  FollowUpInput,
  FollowUpRequest,
  PollingOptions,
  ResolvedPolling,
} from '../kernel/request';
export { formatMs } from '../kernel/duration';

/** Builds the input schema; `maxPromptLength` lets a deployment lower the prompt limit. */
export function createFollowUpInputSchema(maxPromptLength: number = DEFAULT_MAX_PROMPT_LENGTH) {
  return z.custom<FollowUpInput>().transform((raw, ctx): FollowUpRequest => {
    const checked = inspectFollowUpInput(raw, maxPromptLength);
    if (checked.ok) return checked.request;
    for (const problem of checked.problems) {
      ctx.addIssue({
        code: 'custom',
        message: problem.message,
        path: problem.field === 'input' ? [] : problem.field.split('.'),
      });
    }
    return z.NEVER;
  });
}

export const FollowUpInputSchema = createFollowUpInputSchema();

/** One broken rule of the input: the field (a dotted path, `input` for the whole), what is wrong, and what to send. */
export interface InputProblem {
  field: string;
  /** The rule the value broke, with the value ("must be between 100ms and 1d (got \"5\")"). */
  problem: string;
  /** What the field takes, for a caller to pass on as it is ("a duration between 100ms and 1d, such as \"5s\" ..."). */
  fix: string;
}

/** Every problem as data, for a caller that maps them (an HTTP 400 with one entry per field). */
export function inputProblems(error: z.ZodError, maxPromptLength: number = DEFAULT_MAX_PROMPT_LENGTH): InputProblem[] {
  return error.issues.map((issue) => {
    const field = issue.path.length > 0 ? issue.path.map(String).join('.') : 'input';
    const problem = issue.message.startsWith(`${field} `) ? issue.message.slice(field.length + 1) : issue.message;
    return { field, problem, fix: fixFor(field, maxPromptLength) };
  });
}

const range = ([min, max]: readonly [number, number]) => `between ${formatMs(min)} and ${formatMs(max)}`;
const DURATION = '(a bare number is milliseconds)';

/** What a field takes, said as an instruction: the same rules request.ts checks, with the default to fall back on. */
export function fixFor(field: string, maxPromptLength: number = DEFAULT_MAX_PROMPT_LENGTH): string {
  switch (field) {
    case 'projectId':
    case 'jobId':
      return (
        `give the ${field} as the agent service shows it: 1 to ${LIMITS.idLength} letters, digits, '.', '_', ':' or ` +
        "'-', starting with a letter or digit"
      );
    case 'prompt':
      return `give the instruction for the agent: 1 to ${maxPromptLength} characters, not only white space`;
    case 'polling.initialInterval':
    case 'polling.maxInterval':
      return (
        `a duration ${range(LIMITS.intervalMs)} such as "5s" or "2m" ${DURATION}, maxInterval not below ` +
        `initialInterval; or leave it out (${formatMs(field === 'polling.maxInterval' ? DEFAULT_POLLING.maxIntervalMs : DEFAULT_POLLING.initialIntervalMs)})`
      );
    case 'polling.timeout':
      return `a duration ${range(LIMITS.timeoutMs)} such as "24h" ${DURATION}; or leave it out (${formatMs(DEFAULT_POLLING.timeoutMs)})`;
    case 'polling.settleWindow':
      return `a duration ${range(LIMITS.settleWindowMs)} such as "30s" ${DURATION}; or leave it out (${formatMs(DEFAULT_POLLING.settleWindowMs)})`;
    case 'polling.backoffCoefficient':
      return `a number from ${LIMITS.backoffCoefficient[0]} (a fixed interval) to ${LIMITS.backoffCoefficient[1]}; or leave it out (${DEFAULT_POLLING.backoffCoefficient})`;
    case 'polling':
      return `an object with any of ${POLLING_FIELDS.join(', ')}, and nothing else; or leave it out`;
    case 'notify':
    case 'notify.url':
      return (
        'an object { url: "https://..." } naming your public receiver (no internal address literal or cloud metadata ' +
        'name; plain http:// only to this machine, and that only where the workers allow it); or leave it out'
      );
    case 'onAmbiguousSend':
      return `one of ${AMBIGUOUS_SEND_POLICIES.join(', ')}; or leave it out (reconcile)`;
    case 'input':
      return `a JSON object with projectId, jobId and prompt, and optionally ${INPUT_FIELDS.slice(3).join(' and ')}; nothing else`;
    case 'maxPromptLength':
    case 'AGENT_FOLLOWUP_MAX_PROMPT_LENGTH':
      return `a whole number of at least 1 (it can only lower the built-in ${DEFAULT_MAX_PROMPT_LENGTH})`;
    case 'sendsPerHour':
      return "a whole number from 1 to the vendor's 100; above 100 only with { aboveVendorLimit: true }";
    default:
      return 'see docs/LIBRARY.md, "The input"';
  }
}

/** Every problem in one message, each naming its field: "projectId: ...; polling.timeout: ...". */
export function formatInputProblems(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const field = issue.path.length > 0 ? issue.path.map(String).join('.') : 'input';
      return issue.message.startsWith(field) ? issue.message : `${field}: ${issue.message}`;
    })
    .join('; ');
}
