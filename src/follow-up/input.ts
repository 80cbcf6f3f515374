/**
 * The follow-up's input at the client's edge: the caller's shape and a zod schema over the rules of request.ts, so
 * the client, the CLI and schedules validate with zod (and compose the schema into their own) while the workflow
 * checks the very same rules without zod. Not imported by workflow code.
 */
import { z } from 'zod';
import {
  inspectFollowUpInput,
  DEFAULT_MAX_PROMPT_LENGTH,
  type AmbiguousSendPolicy,
  type FollowUpRequest,
} from './request';

export { DEFAULT_MAX_PROMPT_LENGTH, DEFAULT_POLLING, AMBIGUOUS_SEND_POLICIES } from './request';
export type { AmbiguousSendPolicy, FollowUpRequest, ResolvedPolling } from './request';
export { formatMs } from './duration';

/** A duration as Temporal spells it ("5s", "10m", "1.5h") or a number of milliseconds. */
export type DurationInput = string | number;

/** How often and how long to poll the job (all optional; docs/LIBRARY.md, "The input"). */
export interface PollingOptions {
  initialInterval?: DurationInput;
  backoffCoefficient?: number;
  maxInterval?: DurationInput;
  timeout?: DurationInput;
  settleWindow?: DurationInput;
}

/** What a caller passes to start a follow-up. */
export interface FollowUpInput {
  projectId: string;
  jobId: string;
  prompt: string;
  polling?: PollingOptions;
  onAmbiguousSend?: AmbiguousSendPolicy;
}

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

/** One broken rule of the input: the field (a dotted path, `input` for the whole) and what is wrong, as the rule. */
export interface InputProblem {
  field: string;
  /** Says the rule the value broke, which is what to do instead ("must be between 100ms and 1d (got \"5\")"). */
  problem: string;
}

/** Every problem as data, for a caller that maps them (an HTTP 400 with one entry per field). */
export function inputProblems(error: z.ZodError): InputProblem[] {
  return error.issues.map((issue) => {
    const field = issue.path.length > 0 ? issue.path.map(String).join('.') : 'input';
    const problem = issue.message.startsWith(`${field} `) ? issue.message.slice(field.length + 1) : issue.message;
    return { field, problem };
  });
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
