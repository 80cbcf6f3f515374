/**
 * The follow-up workflow's contract for a starter in any language (docs/STARTING-FROM-OTHER-LANGUAGES.md): its input,
 * its result, the `progress` query, the `pollNow` and `sendAnswer` updates and the failure types, as zod schemas.
 * The input's are written from the constants the workflow checks with (kernel/request.ts), and a unit test runs them
 * beside its check over one table; the others are tied to the TypeScript types at compile time (below), so neither
 * side changes without the other. docs/json/workflow/*.schema.json are generated from them (`npm run json-schemas`).
 */
import { z } from 'zod';
import {
  AMBIGUOUS_SEND_POLICIES,
  DEFAULT_MAX_PROMPT_LENGTH,
  DEFAULT_POLLING,
  ID_PATTERN,
  ID_RULE,
  LIMITS,
  MAX_NOTIFY_URL_LENGTH,
} from '../kernel/request';
import { formatMs } from '../kernel/duration';
import { FOLLOW_UP_OUTCOME_KINDS } from '../kernel/outcome-kind';
import { AgentApiErrorType, NON_RETRYABLE_API_ERRORS } from '../agent-api/errors';
import {
  FollowUpErrorType,
  POLL_NOW_COVERED,
  SEND_ANSWERED,
  type AskedRead,
  type FollowUpProgress,
  type FollowUpResult,
  type SendAnswer,
} from '../kernel/types';
import type { AgentJob } from '../kernel/agent-job';

const id = (name: string) =>
  z
    .string()
    .min(1)
    .max(LIMITS.idLength)
    .regex(ID_PATTERN)
    .describe(`The agent service's ${name}: 1 to ${LIMITS.idLength} characters; it ${ID_RULE}.`);

/** A duration: a string such as "5s", "2m" or "1h", or a number of milliseconds; `range` is checked by the workflow. */
const duration = (range: readonly [number, number], fallbackMs: number, what: string) =>
  z
    .union([z.string().min(1), z.number().min(range[0]).max(range[1])])
    .describe(
      `${what}: a duration between ${formatMs(range[0])} and ${formatMs(range[1])}, such as "5s", "2m" or "1h", ` +
        `or a number of milliseconds. Default ${formatMs(fallbackMs)}.`,
    );

export const FollowUpInputContract = z
  .strictObject({
    projectId: id('project id'),
    jobId: id('job id'),
    prompt: z
      .string()
      .min(1)
      .max(DEFAULT_MAX_PROMPT_LENGTH)
      .regex(/\S/)
      .describe('The instruction for the agent: not only white space. A worker may lower the maximum.'),
    polling: z
      .strictObject({
        initialInterval: duration(
          LIMITS.intervalMs,
          DEFAULT_POLLING.initialIntervalMs,
          'The first gap between reads',
        ).optional(),
        backoffCoefficient: z
          .number()
          .min(LIMITS.backoffCoefficient[0])
          .max(LIMITS.backoffCoefficient[1])
          .describe(`How much each gap grows; 1 keeps them fixed. Default ${DEFAULT_POLLING.backoffCoefficient}.`)
          .optional(),
        maxInterval: duration(
          LIMITS.intervalMs,
          DEFAULT_POLLING.maxIntervalMs,
          'The largest gap, not below initialInterval',
        ).optional(),
        timeout: duration(LIMITS.timeoutMs, DEFAULT_POLLING.timeoutMs, 'How long to follow the job').optional(),
        settleWindow: duration(
          LIMITS.settleWindowMs,
          DEFAULT_POLLING.settleWindowMs,
          'How long after the send an unchanged terminal read is not yet the result',
        ).optional(),
      })
      .optional(),
    onAmbiguousSend: z
      .enum(AMBIGUOUS_SEND_POLICIES)
      .describe(
        'When a send may or may not have reached the API: read the job to decide (default), send again, or fail.',
      )
      .optional(),
    notify: z
      .strictObject({
        url: z
          .string()
          .min(1)
          .max(MAX_NOTIFY_URL_LENGTH)
          .describe('Your public https receiver; the signed callback is posted there when the follow-up ends.'),
      })
      .optional(),
  })
  .describe('The input of the followUpWorkflow workflow type (one argument).');

const AgentJobContract = z
  .object({
    id: z.string(),
    status: z.string().describe('completed, archived or failed at the end; the API may add statuses.'),
    source: z.object({ repository: z.string().optional(), ref: z.string().nullable().optional() }).optional(),
    model: z.string().optional(),
    prLink: z.string().nullable().describe('The pull request; null when the agent changed no files.'),
    createdAt: z.string().optional(),
    archivedAt: z.string().nullable().optional(),
  })
  .describe('The job as the agent API returned it, in the fields it documents.');

const iso = z.string().describe('ISO 8601');

export const FollowUpResultContract = z
  .object({
    job: AgentJobContract,
    outcome: z.enum(['completed', 'failed', 'archived']),
    prLink: z.string().nullable(),
    polls: z.number().int().min(0),
    runs: z.number().int().min(1),
    sentAt: iso,
    finishedAt: iso,
    sendAttempts: z.number().int().min(0),
    delivery: z.enum(['response', 'reconciled', 'earlier-run']),
  })
  .describe('What followUpWorkflow returns when the job ended (a job that failed is a result, not a failure).');

const QueuePlaceContract = z.union([
  z.object({ reason: z.literal('lane'), jobId: z.string(), ahead: z.number().int() }),
  z.object({
    reason: z.literal('budget'),
    sentInWindow: z.number().int(),
    limit: z.number().int(),
    windowMs: z.number().int(),
    nextSlotAt: iso.nullable(),
    ahead: z.number().int(),
    refusedSince: iso.optional(),
    countedAt: iso.optional(),
  }),
]);

export const FollowUpProgressContract = z
  .object({
    phase: z.enum([
      'queued',
      'starting',
      'waiting-for-idle',
      'sending',
      'reconciling',
      'waiting',
      'finished',
      'timed-out',
      'cancelled',
      'failed',
    ]),
    projectId: z.string(),
    jobId: z.string(),
    lastStatus: z.string().nullable(),
    lastStatusUnknown: z.boolean(),
    waitingFor: z.enum(['work', 'settle', 'confirmation']).nullable(),
    queue: QueuePlaceContract.nullable(),
    polls: z.number().int().min(0),
    lastReadAt: iso.nullable().optional(),
    leftWatchedWait: z.boolean().optional(),
    lastError: z.string().nullable(),
    errorsSince: iso.nullable(),
    sentAt: iso.nullable(),
    deadline: iso.nullable(),
    runs: z.number().int().min(1),
    sendAttempts: z.number().int().min(0),
    delivery: z.enum(['response', 'reconciled', 'earlier-run']).nullable(),
    prLink: z.string().nullable(),
    outcome: z.enum(FOLLOW_UP_OUTCOME_KINDS).nullable(),
    watcherId: z.string().nullable().optional(),
    failedReads: z.number().int().nullable().optional(),
  })
  .describe('The answer of the `progress` query (no arguments): where the follow-up stands.');

export const AskedReadContract = z
  .object({ readAtMs: z.number().int().describe('When the read asked for is due, in Unix milliseconds.') })
  .describe(
    `The answer of the \`pollNow\` update (no arguments), and the details[0] of its ${POLL_NOW_COVERED} refusal ` +
      '(a read asked for before is still due and covers this ask; nothing is written).',
  );

/** The workflow's own answers: `unanswered` is the TypeScript client's, when no worker answered in time. */
type WorkflowSendAnswer = Exclude<SendAnswer, { state: 'unanswered' }>;

export const SendAnswerContract = z
  .union([
    z.object({ state: z.literal('sent'), sentAt: iso, job: AgentJobContract.nullable() }),
    z.object({
      state: z.literal('queued'),
      reason: z.enum(['lane', 'budget', 'job-busy', 'retry']),
      position: z.number().int().min(1).nullable(),
      nextSlotAt: iso.nullable(),
    }),
    z.object({ state: z.literal('reconciling') }),
  ])
  .describe(
    `The answer of the \`sendAnswer\` update (no arguments): how the send stands once it can say; when it can at ` +
      `once, the update is refused with type ${SEND_ANSWERED} and this answer in details[0] (nothing is written).`,
  );

/** The `type` of the ApplicationFailure a follow-up fails with, innermost in the failure's causes. */
export const FAILURE_TYPES = {
  [FollowUpErrorType.InvalidInput]: 'invalid-input: the input broke a rule; the message names each field and its fix',
  [FollowUpErrorType.TimedOut]: 'timed-out: polling.timeout passed before the job ended (details: its last read)',
  [FollowUpErrorType.DeliveryUnknown]: 'delivery-unknown: a send may have reached the API and reads could not tell',
  [FollowUpErrorType.ContractViolation]: 'rejected: the API kept answering with job bodies that break its contract',
  [FollowUpErrorType.CoordinatorIdTaken]: "rejected: another workflow holds the project coordinator's id",
  ...Object.fromEntries(
    NON_RETRYABLE_API_ERRORS.map((type) => [type, `rejected: the agent API refused for good (${type})`]),
  ),
  [AgentApiErrorType.TargetRefused]: "rejected: the workers refuse the agent API's address (AGENT_API_BASE_URL)",
} as Record<string, string>;

export const FailureTypesContract = z
  .enum(Object.keys(FAILURE_TYPES) as [string, ...string[]])
  .describe(
    'The type of the innermost ApplicationFailure when followUpWorkflow fails (the outcome kind in the docs); a ' +
      'cancelled follow-up fails with a CancelledFailure instead. Types not listed are errors (outcome `error`).',
  );

/** The JSON Schemas of docs/json/workflow, by file name. */
export function workflowContractSchemas(): Record<string, unknown> {
  return {
    'input.schema.json': z.toJSONSchema(FollowUpInputContract, { io: 'input' }),
    'result.schema.json': z.toJSONSchema(FollowUpResultContract),
    'progress-query.schema.json': z.toJSONSchema(FollowUpProgressContract),
    'poll-now-update.schema.json': z.toJSONSchema(AskedReadContract),
    'send-answer-update.schema.json': z.toJSONSchema(SendAnswerContract),
    'failure-types.schema.json': z.toJSONSchema(FailureTypesContract),
  };
}

// Each schema is the TypeScript type it describes: these fail to compile when one changes without the other.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const tied: [
  Same<z.infer<typeof AgentJobContract>, AgentJob>,
  Same<z.infer<typeof FollowUpResultContract>, FollowUpResult>,
  Same<z.infer<typeof FollowUpProgressContract>, Omit<FollowUpProgress, 'poll'>>,
  Same<z.infer<typeof AskedReadContract>, AskedRead>,
  Same<z.infer<typeof SendAnswerContract>, WorkflowSendAnswer>,
] = [true, true, true, true, true];
void tied;
