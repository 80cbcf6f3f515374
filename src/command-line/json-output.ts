/**
 * What the CLI prints under `--json`, as zod schemas, one shape per command: `send` (with or without `--wait`) and
 * `status` print one follow-up report, the schedule and budget commands their views, and every command prints one
 * error object when it fails. The schemas are the contract: tests
 * parse the CLI's output with them, and docs/json/*.schema.json are generated from them (`npm run json-schemas`), so
 * the documented shape cannot drift from the printed one.
 */
import { z } from 'zod';
import {
  FOLLOW_UP_OUTCOME_KINDS,
  type FollowUpStatus,
  type StartedFollowUp,
  type FollowUpProgress,
  type FollowUpResult,
  type SendAnswer,
} from '../index';
const JobSchema = z.looseObject({
  id: z.string(),
  status: z.string().describe('completed, archived or failed once ended; anything the API says while it works'),
  prLink: z.string().nullable(),
});

const ResultSchema = z
  .looseObject({
    job: JobSchema.describe("the final job: the vendor's documented fields as the API returned them"),
    outcome: z.enum(['completed', 'failed', 'archived']),
    prLink: z.string().nullable(),
    polls: z.number().int(),
    runs: z.number().int(),
    sentAt: z.string(),
    finishedAt: z.string(),
    sendAttempts: z.number().int(),
    delivery: z.enum(['response', 'reconciled', 'earlier-run']),
  })
  .describe("The job as it ended after this follow-up's message (FollowUpResult in the library)");

const ProgressSchema = z
  .looseObject({
    phase: z.string(),
    projectId: z.string(),
    jobId: z.string(),
    lastStatus: z
      .string()
      .nullable()
      .describe("the job's status in the last read after this follow-up's message; null before one"),
    lastError: z.string().nullable(),
    errorsSince: z.string().nullable(),
    polls: z.number().int().describe('reads the workflow heard of; see the top-level `polls` for all of them'),
    sentAt: z.string().nullable(),
    deadline: z.string().nullable(),
  })
  .describe("The follow-up's own account (FollowUpProgress in the library), while a worker answers");

/** `send --json`, `send --wait --json` and `status --json`: one shape, so a script reads all three alike. */
export const FollowUpReportSchema = z
  .strictObject({
    workflowId: z.string(),
    attached: z
      .boolean()
      .nullable()
      .describe(
        'send: true when a follow-up with the same project, job and prompt existed and no message was sent; status: null',
      ),
    startedAt: z.string().nullable().describe('when attached: when the existing follow-up was first started'),
    executionStatus: z.string().describe("Temporal's: RUNNING, COMPLETED, FAILED, CANCELLED, TERMINATED, TIMED_OUT"),
    outcome: z
      .strictObject({
        kind: z
          .enum(FOLLOW_UP_OUTCOME_KINDS)
          .describe('the same word as the AgentFollowUpOutcome search attribute and the exit code'),
        type: z
          .string()
          .nullable()
          .describe('the failure type when it did not end with a job (FollowUpTimedOut, AgentJobNotFound, ...)'),
        message: z.string().nullable(),
      })
      .nullable()
      .describe('null while it runs'),
    result: ResultSchema.nullable().describe('set when it ended with a job'),
    progress: ProgressSchema.nullable(),
    progressUnavailable: z
      .string()
      .nullable()
      .describe('why `progress` is null while it runs (no worker polls, or none answered)'),
    lastKnown: z
      .strictObject({
        jobStatus: z.string().nullable(),
        prLink: z.string().nullable(),
        poll: z
          .strictObject({
            polls: z.number().int(),
            nextPollAt: z.string().nullable(),
            lastStatus: z.string().nullable(),
            lastError: z.string().nullable(),
            failingSince: z.string().nullable(),
            failedReads: z.number().int(),
          })
          .nullable()
          .describe('the running wait, as the server describes its pending activity'),
      })
      .nullable()
      .describe('what the server keeps of the job when no worker answered'),
    watch: z
      .discriminatedUnion('available', [
        z.strictObject({
          watcherId: z.string(),
          available: z.literal(true),
          watchedSince: z.string().describe('when this run of the follow-up first registered with the watcher'),
          lastRead: z
            .strictObject({ at: z.string(), status: z.string().nullable().describe('null: that read failed') })
            .nullable()
            .describe("the watcher's last read of the job; null: none reported since the watcher's worker took it in"),
          reads: z.number().int().nullable().describe('reads of the current wait, as far as reported'),
          failing: z
            .strictObject({ since: z.string(), failedReads: z.number().int(), lastError: z.string() })
            .nullable()
            .describe('null: the last read succeeded'),
          nextReadAt: z
            .string()
            .nullable()
            .describe("the reader's plan, else the schedule's next point; null: none before the deadline"),
        }),
        z.strictObject({ watcherId: z.string(), available: z.literal(false), reason: z.string() }),
      ])
      .nullable()
      .describe(
        "shared watching (the default): the watcher's live figures for this follow-up while it waits, or why they are unavailable; null otherwise",
      ),
    polls: z
      .number()
      .int()
      .nullable()
      .describe(
        "every read of the job so far: the result's count, or the workflow's plus the running wait's; the text output says the same number",
      ),
    send: z
      .discriminatedUnion('state', [
        z.strictObject({
          state: z.literal('sent'),
          sentAt: z.string(),
          job: z.record(z.string(), z.unknown()).nullable(),
        }),
        z.strictObject({
          state: z.literal('queued'),
          reason: z.enum(['lane', 'budget', 'job-busy', 'retry']),
          position: z.number().int().nullable(),
          nextSlotAt: z.string().nullable(),
        }),
        z.strictObject({ state: z.literal('reconciling') }),
        z.strictObject({ state: z.literal('unanswered'), timeoutMs: z.number() }),
      ])
      .optional()
      .describe('send --wait-sent: how the send stood when the command returned'),
    callback: z
      .discriminatedUnion('state', [
        z.strictObject({
          state: z.literal('delivering'),
          callbackWorkflowId: z.string(),
          attempts: z.number().int(),
          lastError: z.string().nullable(),
          nextAttemptAt: z.string().nullable(),
        }),
        z.strictObject({
          state: z.literal('delivered'),
          callbackWorkflowId: z.string(),
          deliveredAt: z.string(),
          status: z.number().int(),
          attempts: z.number().int(),
        }),
        z.strictObject({ state: z.literal('failed'), callbackWorkflowId: z.string(), reason: z.string() }),
      ])
      .nullable()
      .describe("the follow-up's callback (notify) once it ended; null: none asked for, or still running"),
  })
  .describe('agent-followup send --json, send --wait --json and status --json');

/** The report as the CLI builds it: the library's own types where the schema checks only the documented core. */
export type FollowUpReport = Omit<z.infer<typeof FollowUpReportSchema>, 'result' | 'progress' | 'send'> & {
  result: FollowUpResult | null;
  progress: FollowUpProgress | null;
  send?: SendAnswer;
};

/** Any command under `--json` that could not do what it was asked: on stdout, besides the text on stderr. */
export const CliErrorSchema = z
  .strictObject({
    error: z.strictObject({
      type: z
        .string()
        .describe(
          "BadInput, FollowUpNotFound, ScheduleNotFound, ScheduleExists, AlreadyEnded, NoRunningFollowUp, NoWorkerAnswered, NamespaceNotReady, or the error's own name",
        ),
      message: z.string(),
      exitCode: z.number().int(),
    }),
  })
  .describe('agent-followup <any command> --json, when the command failed');

export type CliError = z.infer<typeof CliErrorSchema>;

const RunSchema = z.strictObject({
  workflowId: z.string(),
  scheduledAt: z.string(),
  startedAt: z.string(),
  status: z.string().describe("Temporal's status of the run's follow-up"),
  outcome: z
    .enum(['completed', 'failed', 'archived'])
    .optional()
    .describe('how the job ended, when the run returned it'),
  prLink: z.string().nullable().optional(),
  finishedAt: z.string().optional(),
  failure: z
    .strictObject({ type: z.string(), message: z.string() })
    .optional()
    .describe('why the run did not end with a job'),
});

const SpecSchema = z.strictObject({
  cron: z.string().optional(),
  every: z.string().optional(),
  offset: z.string().optional(),
  timezone: z.string(),
});

/** `schedule create --json`. */
export const ScheduleCreatedSchema = z
  .strictObject({
    scheduleId: z.string(),
    workflowIdPrefix: z.string(),
    paused: z.boolean(),
    nextRunTimes: z.array(z.string()),
  })
  .describe('agent-followup schedule create --json');

/** `schedule describe --json` (FollowUpScheduleView in the library). */
export const ScheduleViewSchema = z
  .strictObject({
    scheduleId: z.string(),
    input: z
      .looseObject({ projectId: z.string(), jobId: z.string(), prompt: z.string() })
      .nullable()
      .describe('what each run sends; null when not a follow-up input'),
    taskQueue: z.string(),
    workflowIdPrefix: z.string(),
    spec: SpecSchema,
    paused: z.boolean(),
    note: z.string().nullable(),
    pausedBecause: z.string().nullable(),
    policies: z.strictObject({ overlap: z.string(), catchupWindow: z.string(), pauseOnFailure: z.boolean() }),
    nextRunTimes: z.array(z.string()),
    recentRuns: z.array(RunSchema).describe('newest first; Temporal keeps ten'),
    runningWorkflowIds: z.array(z.string()),
    counts: z.strictObject({
      runsStarted: z.number().int(),
      skippedOverlap: z.number().int(),
      missedCatchupWindow: z.number().int(),
    }),
    createdAt: z.string(),
    updatedAt: z.string().nullable(),
  })
  .describe('agent-followup schedule describe --json');

/** `schedule list --json` (FollowUpScheduleListEntry[] in the library). */
export const ScheduleListSchema = z
  .array(
    z.strictObject({
      scheduleId: z.string(),
      projectId: z.string().nullable(),
      jobId: z.string().nullable(),
      spec: SpecSchema,
      paused: z.boolean(),
      note: z.string().nullable(),
      pausedBecause: z.string().nullable(),
      nextRunTimes: z.array(z.string()),
      lastRun: RunSchema.nullable(),
    }),
  )
  .describe('agent-followup schedule list --json');

const ProjectViewSchema = z.strictObject({
  projectId: z.string(),
  limit: z.number().int().describe('sends allowed in any window'),
  limitSetForProject: z.boolean().describe("set for this project, else the namespace's or the workers' default"),
  windowMs: z.number().int(),
  sentInWindow: z.number().int(),
  nextSlotAt: z.string().nullable().describe('while the window is full: when the next slot frees'),
  waitingForBudget: z.array(z.string()).describe('workflow ids of follow-ups waiting for a slot'),
  refusal: z
    .strictObject({
      since: z.string().describe('the first 429 of this pause'),
      nextProbeAt: z.string().nullable().describe('when the next probe send may go; null: a probe awaits its answer'),
    })
    .nullable()
    .describe("while the agent API refuses the project's sends (429): no send goes until a probe is accepted"),
  lanes: z.array(z.strictObject({ jobId: z.string(), holder: z.string().nullable(), waiting: z.array(z.string()) })),
  totals: z.strictObject({
    served: z.number().int(),
    granted: z.number().int(),
    returned: z.number().int(),
    waitedForBudget: z.number().int(),
    refused: z.number().int().describe('sends the agent API refused with 429'),
  }),
});

/** `budget show --json` and `budget set --json`, with or without `--project`: one shape. */
export const BudgetReportSchema = z
  .strictObject({
    defaultSendsPerHour: z
      .number()
      .int()
      .nullable()
      .describe("every project's budget unless set for the project; null: the workers' setting"),
    projects: z
      .array(ProjectViewSchema)
      .describe('the projects with a coordinator (with --project: that one, if it has one)'),
  })
  .describe('agent-followup budget show --json and budget set --json');

/** `list --json` (FollowUpList in the library). */
export const FollowUpListSchema = z
  .strictObject({
    followUps: z.array(
      z.strictObject({
        workflowId: z.string(),
        projectId: z.string().nullable(),
        jobId: z.string().nullable(),
        executionStatus: z
          .string()
          .describe("Temporal's status: RUNNING, COMPLETED, FAILED, CANCELLED, TERMINATED, TIMED_OUT"),
        outcome: z
          .enum(FOLLOW_UP_OUTCOME_KINDS)
          .nullable()
          .describe('how it ended; null while running, or terminated from outside'),
        jobStatus: z.string().nullable().describe("the job's status in the follow-up's last read"),
        prLink: z.string().nullable(),
        startedAt: z.string().describe('when its current run started'),
        endedAt: z.string().nullable(),
      }),
    ),
    more: z.boolean().describe('more follow-ups match than --limit let through'),
  })
  .describe('agent-followup list --json');

/** `cancel --json`: the cancellation was asked for (a follow-up that already ended is the AlreadyEnded error). */
export const CancelReportSchema = z
  .strictObject({ workflowId: z.string(), cancelRequested: z.literal(true), executionStatus: z.string() })
  .describe('agent-followup cancel --json');

/** `poll-now --json`, for one follow-up or every running one of a job: one shape. */
export const PollNowReportSchema = z
  .strictObject({
    followUps: z.array(
      z.strictObject({
        workflowId: z.string(),
        executionStatus: z.string(),
        readAt: z.string().nullable().describe('when the read asked for is due'),
        covered: z.boolean().describe('a read asked for earlier is due after this ask and covers it'),
      }),
    ),
  })
  .describe('agent-followup poll-now --json');

/** `setup --json`. */
export const SetupReportSchema = z
  .strictObject({ namespace: z.string(), added: z.array(z.string()), present: z.array(z.string()) })
  .describe('agent-followup setup --json');

/** `schedule pause|unpause|trigger|delete --json`. */
export const ScheduleActionSchema = z
  .strictObject({
    scheduleId: z.string(),
    action: z.enum(['paused', 'unpaused', 'triggered', 'deleted']),
    overlap: z.string().optional().describe('trigger: the overlap policy the run is under'),
    runningWorkflowIds: z
      .array(z.string())
      .optional()
      .describe('delete: its follow-ups still running (they go on; cancel them one by one)'),
  })
  .describe('agent-followup schedule pause|unpause|trigger|delete --json');

/** The one count of reads: what the text says too. */
export function readsSoFar(status: Pick<FollowUpStatus, 'result' | 'progress' | 'watch'>): number | null {
  if (status.result) return status.result.polls;
  const watched = status.watch?.available ? (status.watch.reads ?? 0) : 0;
  if (status.progress) return status.progress.polls + (status.progress.poll?.polls ?? 0) + watched;
  return null;
}

/** The report of a follow-up, from `status()` and, for `send`, how it was started. */
export function followUpReport(status: FollowUpStatus, started: StartedFollowUp | null): FollowUpReport {
  const outcome = status.outcome;
  return {
    workflowId: status.workflowId,
    attached: started ? started.attached : null,
    startedAt: started?.startedAt ?? null,
    executionStatus: status.executionStatus,
    outcome: outcome
      ? {
          kind: outcome.kind,
          type: 'type' in outcome ? outcome.type : null,
          message: 'message' in outcome ? outcome.message : null,
        }
      : null,
    result: status.result ?? null,
    progress: status.progress ?? null,
    progressUnavailable: status.progressUnavailable ?? null,
    lastKnown: status.lastKnown ?? null,
    watch: status.watch ?? null,
    polls: readsSoFar(status),
    ...(started?.send ? { send: started.send } : {}),
    callback: status.callback ?? null,
  };
}

/** The JSON schemas of the outputs, as docs/json/ holds them. */
export function jsonSchemas(): Record<string, unknown> {
  return {
    'follow-up-report.schema.json': z.toJSONSchema(FollowUpReportSchema),
    'cli-error.schema.json': z.toJSONSchema(CliErrorSchema),
    'schedule-created.schema.json': z.toJSONSchema(ScheduleCreatedSchema),
    'schedule-view.schema.json': z.toJSONSchema(ScheduleViewSchema),
    'schedule-list.schema.json': z.toJSONSchema(ScheduleListSchema),
    'budget-report.schema.json': z.toJSONSchema(BudgetReportSchema),
    'follow-up-list.schema.json': z.toJSONSchema(FollowUpListSchema),
    'cancel-report.schema.json': z.toJSONSchema(CancelReportSchema),
    'poll-now-report.schema.json': z.toJSONSchema(PollNowReportSchema),
    'setup-report.schema.json': z.toJSONSchema(SetupReportSchema),
    'schedule-action.schema.json': z.toJSONSchema(ScheduleActionSchema),
  };
}
