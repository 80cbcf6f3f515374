/**
 * The typed library backend services use to start and follow follow-ups. It validates input before anything starts
 * and gives each follow-up a deterministic workflow id, so a caller that retries its own call attaches to the
 * follow-up already under way instead of sending the message twice.
 */
import {
  ApplicationFailure,
  Client,
  Connection,
  isGrpcCancelledError,
  isGrpcDeadlineError,
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  type WorkflowExecutionDescription,
} from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { randomUUID } from 'node:crypto';
import { loadTemporalSettings } from '../config';
import { dataConverterFromEnvironment } from '../encryption/payload-keys';
import { KeylessPayloadCodec } from '../encryption/keyless-codec';
import { identifierProblem } from '../kernel/request';
import { AgentJobStatus, AgentPrLink } from '../kernel/search-attributes';
import { DEFAULT_SENDS_PER_PROJECT_PER_HOUR } from '../kernel/send-budget-rule';
import type { CallbackStatus, FollowUpProgress, FollowUpResult, SendAnswer } from '../kernel/types';
import { POLL_NOW_COVERED, SEND_ANSWERED, type AskedRead } from '../kernel/types';
import {
  BUDGET_DEFAULTS_WORKFLOW_ID,
  BUDGET_DEFAULTS_WORKFLOW_TYPE,
  CHECK_AGENT_JOB_WORKFLOW_TYPE,
  coordinatorWorkflowId,
  DEFAULT_BUDGET_MEMO_KEY,
  DEFAULT_COORDINATOR_TASK_QUEUE,
  FOLLOW_UP_WORKFLOW_TYPE,
  notifyWorkflowId,
  PROJECT_COORDINATOR_WORKFLOW_TYPE,
} from '../kernel/workflow-ids';
import type { budgetDefaultsWorkflow } from '../coordinator/budget-defaults';
import type { checkAgentJobWorkflow } from '../workflows/check-job/check-job';
import type { followUpWorkflow } from '../workflows/follow-up/follow-up';
import { pollNowUpdate, progressQuery, sendAnswerUpdate } from '../workflows/follow-up/messages';
import { followUpStartMetadata } from './start-metadata';
import {
  describeWorkflowIdInUse,
  workflowIdMismatches,
  type ExistingWorkflow,
} from '../workflows/follow-up/workflow-id-owner';
import type { followUpNotifyWorkflow } from '../workflows/notify/notify';
import { projectQuery, setBudgetSignal } from '../coordinator/messages';
import type { BudgetRequest } from '../kernel/send-budget-rule';
import { type ProjectView } from '../coordinator/project-coordination';
import type { projectCoordinatorWorkflow } from '../coordinator/project-coordinator';
import {
  type AgentJobCheckResult,
  type FollowUpClientOptions,
  type FollowUpStatus,
  type JobPollNowAnswer,
  LIVE_POLLER_WINDOW_MS,
  type PollNowAnswer,
  PROGRESS_QUERY_DEADLINE_MS,
  SEND_ANSWER_TIMEOUT_MS,
  type StartedFollowUp,
  type StartFollowUpOptions,
} from './calls';
import {
  type BudgetOptions,
  checkBudget,
  checkFollowUpInput,
  checkFollowUpWorkflowId,
  maxPromptLengthFromEnv,
} from './checks';
import { describePollActivity } from './describe-poll';
import { describeWatch } from '../watch/describe-watch.client';
import type { SharedWatchStatus } from '../watch/watch-figures';
import {
  explainStartRefusal,
  FollowUpNotSentError,
  invalidField,
  NoWorkerAnsweredError,
  WorkflowIdInUseError,
} from './errors';
import { followUpWorkflowId, workflowIdKeyOf } from './ids';
import { followUpListQuery, openFollowUpsOfJobQuery } from './follow-up-queries';
import {
  checkListFilter,
  listedFollowUp,
  type FollowUpList,
  type FollowUpListFilter,
  type ListedFollowUp,
} from './follow-up-list';
import { type FollowUpInput, type FollowUpRequest } from './input';
import { failedOutcome, settleFollowUp, type FollowUpOutcome } from './outcome';
import { explainOutage, temporalAnswers, TemporalUnreachableError, unreachable } from './temporal-outage';

/** How long `checkJob` waits when no worker is seen polling: one may be starting, but none may come. */
const NO_WORKER_CHECK_TIMEOUT_MS = 5_000;

/** How long `pollNow` waits for a worker to take the ask. */
const POLL_NOW_ANSWER_MS = 10_000;

/**
 * How long a coordinator's view (`projectBudget`, `projectBudgets`) waits for a worker to answer: its queries are
 * answered in milliseconds, and a loaded worker gets twice the progress query's time.
 */
const COORDINATOR_QUERY_DEADLINE_MS = 10_000;
/** How long a progress read waits for the coordinator's newer count of the budget before showing the one told. */
const RECOUNT_DEADLINE_MS = 2_000;

/** When the covering read is due, if the follow-up refused the ask because an earlier one covers it; else null. */
function coveringRead(error: unknown): number | null {
  if (
    !(error instanceof WorkflowUpdateFailedError) ||
    !(error.cause instanceof ApplicationFailure) ||
    error.cause.type !== POLL_NOW_COVERED
  )
    return null;
  const details = error.cause.details?.[0] as Partial<AskedRead> | undefined;
  return typeof details?.readAtMs === 'number' ? details.readAtMs : null;
}

export class FollowUpClient {
  /** The default ids' HMAC key when the client encrypts payloads (client/ids.ts says why). */
  private readonly idKey: Uint8Array | undefined;

  constructor(
    readonly client: Client,
    /** The task queue and prompt limit, so a schedules client can share the connection (`FollowUpSchedules.from`). */
    readonly options: FollowUpClientOptions,
  ) {
    this.idKey = workflowIdKeyOf(client.options.loadedDataConverter);
  }

  /** The id `start` gives this input when no workflowId is passed (keyed when the client encrypts payloads). */
  defaultWorkflowId(input: FollowUpInput): string {
    return followUpWorkflowId(this.validate(input), this.idKey);
  }

  /** Connects with the standard Temporal environment variables (see the README) and returns a ready client. */
  static async fromEnvironment(env: Record<string, string | undefined> = process.env): Promise<FollowUpClient> {
    const settings = loadTemporalSettings(env);
    const maxPromptLength = maxPromptLengthFromEnv(env);
    // Before connecting: a bad key is a configuration problem, whatever the server's state.
    // Without keys, an encrypted payload is said to be one, with the key it needs (not the SDK's "Unknown encoding").
    const dataConverter = dataConverterFromEnvironment(env) ?? { payloadCodecs: [new KeylessPayloadCodec()] };
    let connection: Connection;
    try {
      connection = await Connection.connect(settings.connectionOptions);
    } catch (error) {
      throw new TemporalUnreachableError(
        `Cannot reach Temporal at ${settings.connectionOptions.address} (namespace '${settings.namespace}'): ` +
          `${error instanceof Error ? error.message : String(error)}. Is the server running there? For a local one: ` +
          '`temporal server start-dev` with the search attributes (docs/DEVELOPMENT.md, "Run the pieces by hand"); otherwise set ' +
          'TEMPORAL_ADDRESS, or TEMPORAL_PROFILE and TEMPORAL_API_KEY for Temporal Cloud.',
      );
    }
    return new FollowUpClient(new Client({ connection, namespace: settings.namespace, dataConverter }), {
      taskQueue: settings.taskQueue,
      maxPromptLength,
      coordinatorTaskQueue: settings.coordinatorTaskQueue,
    });
  }

  /** Checks input without starting anything; throws InvalidFollowUpInputError naming every bad field. */
  validate(input: unknown): FollowUpRequest {
    return checkFollowUpInput(input, this.options.maxPromptLength);
  }

  /**
   * Starts a follow-up, or attaches to the one with the same id when it has the same project, job and prompt. Throws
   * WorkflowIdInUseError when the id belongs to anything else, ReservedWorkflowIdError for a coordinator's id.
   */
  async start(
    input: FollowUpInput,
    options: StartFollowUpOptions & { waitFor: 'sent' },
  ): Promise<StartedFollowUp & { send: SendAnswer }>;
  async start(input: FollowUpInput, options?: StartFollowUpOptions): Promise<StartedFollowUp>;
  async start(input: FollowUpInput, options: StartFollowUpOptions = {}): Promise<StartedFollowUp> {
    const parsed = this.validate(input);
    const workflowId = options.workflowId ?? followUpWorkflowId(parsed, this.idKey);
    checkFollowUpWorkflowId(workflowId);
    const startOptions = {
      taskQueue: this.options.taskQueue,
      workflowId,
      // The caller's input as given (durations as written), so the Web UI shows what was asked for.
      args: [input] as [FollowUpInput],
      // What the Web UI shows in the list and overview, and the attributes a visibility query finds it by.
      ...followUpStartMetadata(parsed),
      workflowIdConflictPolicy: 'FAIL' as const,
      // A finished follow-up is not repeated under the same id; one that failed, timed out or was cancelled may be.
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY' as const,
    };
    const answerTimeoutMs = options.answerTimeoutMs ?? SEND_ANSWER_TIMEOUT_MS;
    try {
      if (options.waitFor === 'sent') {
        const operation = new WithStartWorkflowOperation<typeof followUpWorkflow>(
          FOLLOW_UP_WORKFLOW_TYPE,
          startOptions,
        );
        const send = await this.sendAnswer(workflowId, answerTimeoutMs, () =>
          this.client.workflow.executeUpdateWithStart(sendAnswerUpdate, { startWorkflowOperation: operation }),
        );
        return { workflowId, attached: false, send };
      }
      await this.client.workflow.start<typeof followUpWorkflow>(FOLLOW_UP_WORKFLOW_TYPE, startOptions);
      return { workflowId, attached: false };
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError))
        throw explainStartRefusal(error, this.client.options.namespace);
      // Checked even for the deterministic id: anyone may have started anything under it with an explicit id.
      const existing = await this.startedAs(workflowId);
      const mismatches = workflowIdMismatches(parsed, existing, FOLLOW_UP_WORKFLOW_TYPE);
      if (mismatches.length > 0) {
        throw new WorkflowIdInUseError(
          workflowId,
          mismatches,
          describeWorkflowIdInUse(workflowId, parsed, existing, mismatches),
        );
      }
      const attached = { workflowId, attached: true, ...(await this.attachedTo(workflowId)) };
      if (options.waitFor !== 'sent') return attached;
      const send = await this.sendAnswer(workflowId, answerTimeoutMs, () =>
        this.client.workflow.getHandle(workflowId).executeUpdate(sendAnswerUpdate),
      );
      return { ...attached, send };
    }
  }

  /**
   * Asks how the send stands, within `timeoutMs` (`unanswered` past it). A follow-up that ended before sending throws
   * FollowUpNotSentError with its failure; one that already ended after sending answers `sent` from its result.
   */
  private async sendAnswer(workflowId: string, timeoutMs: number, ask: () => Promise<SendAnswer>): Promise<SendAnswer> {
    try {
      return await this.client.connection.withDeadline(Date.now() + timeoutMs, ask);
    } catch (error) {
      if (
        error instanceof WorkflowUpdateRPCTimeoutOrCancelledError ||
        isGrpcDeadlineError(error) ||
        isGrpcCancelledError(error)
      ) {
        return { state: 'unanswered', timeoutMs };
      }
      if (error instanceof WorkflowUpdateFailedError) {
        const cause = error.cause;
        // Answered at once by the validator's refusal (written nowhere): the answer is its details.
        if (cause instanceof ApplicationFailure && cause.type === SEND_ANSWERED && cause.details?.[0]) {
          return cause.details[0] as SendAnswer;
        }
        const type = cause instanceof ApplicationFailure ? (cause.type ?? undefined) : undefined;
        throw new FollowUpNotSentError(
          workflowId,
          type,
          `The follow-up ${workflowId} ended without sending: ${cause?.message ?? error.message}`,
          { cause },
        );
      }
      // Ended already (an attach to a finished follow-up): its result or failure says how the send went.
      if (error instanceof WorkflowNotFoundError) {
        const outcome = await this.outcome(workflowId);
        if ('result' in outcome) return { state: 'sent', sentAt: outcome.result.sentAt, job: outcome.result.job };
        throw new FollowUpNotSentError(
          workflowId,
          outcome.type,
          `The follow-up ${workflowId} ended: ${outcome.message}`,
        );
      }
      throw error;
    }
  }

  /** Starts (or attaches) and waits for the final job. */
  async startAndWait(
    input: FollowUpInput,
    options: StartFollowUpOptions = {},
  ): Promise<StartedFollowUp & { result: FollowUpResult }> {
    const started = await this.start(input, options);
    return { ...started, result: await this.result(started.workflowId) };
  }

  /** Waits for the follow-up's result, across continue-as-new. Throws WorkflowFailedError when it failed. */
  async result(workflowId: string): Promise<FollowUpResult> {
    return this.reaching(`waiting for follow-up ${workflowId}`, () =>
      this.client.workflow.getHandle<typeof followUpWorkflow>(workflowId).result(),
    );
  }

  /**
   * Waits for the follow-up to end and says how: `{ kind: 'completed' | 'failed' | 'archived', result }` when the job
   * ended, else `{ kind, type, message }` (timed-out, rejected, invalid-input, delivery-unknown, cancelled, error).
   * Throws only for what is not the follow-up's own ending (no such workflow, Temporal unreachable).
   */
  async outcome(workflowId: string): Promise<FollowUpOutcome> {
    return settleFollowUp(this.result(workflowId));
  }

  /**
   * Where a running follow-up stands: the workflow's own account, plus its poll activity as Temporal describes it.
   * A worker answers the query: with `timeoutMs`, a worker that does not answer in time (it died, and the server
   * still lists it) makes this fail with `NoWorkerAnsweredError` instead of waiting a minute.
   */
  async progress(workflowId: string, options: { timeoutMs?: number } = {}): Promise<FollowUpProgress> {
    return this.reaching(`asking follow-up ${workflowId} how it stands`, () => this.readProgress(workflowId, options));
  }

  private async readProgress(workflowId: string, options: { timeoutMs?: number }): Promise<FollowUpProgress> {
    const read = async () => {
      const handle = this.client.workflow.getHandle(workflowId);
      const [progress, description] = await Promise.all([handle.query(progressQuery), handle.describe()]);
      const poll = await describePollActivity(description, this.client.options.loadedDataConverter);
      return this.recounted(workflowId, poll ? { ...progress, poll } : progress);
    };
    if (options.timeoutMs === undefined) return read();
    const deadline = Date.now() + options.timeoutMs;
    try {
      return await this.client.connection.withDeadline(deadline, read);
    } catch (error) {
      // Past the deadline gRPC says DEADLINE_EXCEEDED, or CANCELLED when it ran out between the SDK's retries.
      if (isGrpcDeadlineError(error) || (isGrpcCancelledError(error) && Date.now() >= deadline))
        throw new NoWorkerAnsweredError(workflowId, options.timeoutMs);
      throw error;
    }
  }

  /**
   * A follow-up waiting for the budget holds the count its coordinator told it when it queued: the coordinator tells
   * it again only when its slot moves, not at every send, so the count ages as the window fills. The coordinator's own
   * count is newer (one more query, only while a follow-up is queued for the budget). Kept as told when the coordinator
   * does not answer within RECOUNT_DEADLINE_MS, or while the API refuses the project (the follow-up is told of that).
   */
  private async recounted(workflowId: string, progress: FollowUpProgress): Promise<FollowUpProgress> {
    const queue = progress.queue;
    if (progress.phase !== 'queued' || queue?.reason !== 'budget' || queue.refusedSince !== undefined) return progress;
    try {
      const view = await this.client.connection.withDeadline(Date.now() + RECOUNT_DEADLINE_MS, () =>
        this.client.workflow.getHandle(coordinatorWorkflowId(progress.projectId)).query(projectQuery),
      );
      if (view.refusal !== null) return progress;
      const ahead = view.waitingForBudget.indexOf(workflowId);
      const recount = { sentInWindow: view.sentInWindow, limit: view.limit, countedAt: new Date().toISOString() };
      return { ...progress, queue: { ...queue, ...recount, ...(ahead >= 0 ? { ahead } : {}) } };
    } catch {
      return progress;
    }
  }

  /**
   * The live figures a follow-up's shared job watcher keeps of its wait (its reads, the last read and its status, the
   * next read), read by query; a watcher's long reader reports them only while someone asks, so a first ask (and one
   * every 15 s while asking) is an Update (watch/describe-watch.client.ts). `watcherId` is the follow-up's progress's; never throws
   * for a watcher that cannot say (the figures are then unavailable, with the reason).
   */
  async watchFigures(workflowId: string, watcherId: string): Promise<SharedWatchStatus> {
    return this.reaching(`asking job watcher ${watcherId} about follow-up ${workflowId}`, () =>
      describeWatch(this.client, workflowId, watcherId, PROGRESS_QUERY_DEADLINE_MS),
    );
  }

  /**
   * Temporal's view plus the follow-up's progress (while running) or result (once completed). `progress: false` skips
   * the progress query (no worker needed): for a caller that only wants how it stands in Temporal.
   */
  async status(workflowId: string, options: { progress?: boolean } = {}): Promise<FollowUpStatus> {
    return this.reaching(`reading follow-up ${workflowId}`, () => this.readStatus(workflowId, options));
  }

  /** The callback of an ended follow-up, from its callback workflow (workflows/notify/notify.ts); undefined without one. */
  private async callbackOf(
    workflowId: string,
    description: WorkflowExecutionDescription,
  ): Promise<CallbackStatus | undefined> {
    const firstRunId = description.raw.workflowExecutionInfo?.firstRunId;
    if (!firstRunId) return undefined;
    const callbackWorkflowId = notifyWorkflowId(workflowId, firstRunId);
    const handle = this.client.workflow.getHandle<typeof followUpNotifyWorkflow>(callbackWorkflowId);
    let callback: WorkflowExecutionDescription;
    try {
      callback = await handle.describe();
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return undefined;
      throw error;
    }
    if (callback.status.name === 'COMPLETED') {
      const delivered = await handle.result();
      return { state: 'delivered', callbackWorkflowId, ...delivered, attempts: delivered.attempt };
    }
    if (callback.status.name === 'RUNNING') {
      const pending = callback.raw.pendingActivities?.[0];
      const next = pending?.nextAttemptScheduleTime?.seconds;
      return {
        state: 'delivering',
        callbackWorkflowId,
        attempts: Math.max((pending?.attempt ?? 1) - (next ? 0 : 1), 0),
        lastError: pending?.lastFailure?.message ?? null,
        nextAttemptAt: next ? new Date(Number(next) * 1000).toISOString() : null,
      };
    }
    const reason = await handle.result().then(
      () => callback.status.name,
      (error: unknown) => {
        // The innermost cause says why: WorkflowFailedError, then ActivityFailure, then the attempt's own failure.
        let cause: unknown = error;
        while (cause instanceof Error && cause.cause instanceof Error) cause = cause.cause;
        return cause instanceof Error ? cause.message : String(error);
      },
    );
    return { state: 'failed', callbackWorkflowId, reason: `${callback.status.name}: ${reason}` };
  }

  private async readStatus(workflowId: string, options: { progress?: boolean }): Promise<FollowUpStatus> {
    const handle = this.client.workflow.getHandle<typeof followUpWorkflow>(workflowId);
    const description: WorkflowExecutionDescription = await handle.describe();
    const executionStatus = description.status.name;
    const status: FollowUpStatus = { workflowId, executionStatus };
    if (executionStatus !== 'RUNNING') {
      status.outcome = await this.outcome(workflowId);
      if (
        status.outcome.kind === 'completed' ||
        status.outcome.kind === 'failed' ||
        status.outcome.kind === 'archived'
      ) {
        status.result = status.outcome.result;
      }
      const callback = await this.callbackOf(workflowId, description);
      if (callback) status.callback = callback;
    }
    if (options.progress === false) return status;
    // The progress query is answered by a worker; without one it would wait for the RPC deadline and fail.
    if (!(await this.workers()).some((worker) => worker.live)) {
      status.progressUnavailable = `no worker polls task queue '${this.options.taskQueue}' in namespace '${this.client.options.namespace}'`;
      if (executionStatus === 'RUNNING') status.lastKnown = await this.lastKnownOf(description);
      return status;
    }
    try {
      // A worker that just died is still listed as polling for a while: the query would wait for the RPC's own
      // deadline (about a minute) and fail. A short deadline, then what the server keeps, answers at once.
      status.progress =
        executionStatus === 'RUNNING'
          ? await this.progress(workflowId, { timeoutMs: PROGRESS_QUERY_DEADLINE_MS })
          : await this.client.connection.withDeadline(Date.now() + PROGRESS_QUERY_DEADLINE_MS, () =>
              handle.query(progressQuery),
            );
      const watcherId = status.progress.watcherId;
      if (executionStatus === 'RUNNING' && watcherId)
        status.watch = await describeWatch(this.client, workflowId, watcherId, PROGRESS_QUERY_DEADLINE_MS);
    } catch (error) {
      if (error instanceof TemporalUnreachableError) throw error;
      if (error instanceof NoWorkerAnsweredError || isGrpcDeadlineError(error)) {
        status.progressUnavailable = `no worker answered within ${PROGRESS_QUERY_DEADLINE_MS / 1000}s (the workers listed on task queue '${this.options.taskQueue}' may have stopped)`;
        status.lastKnown = await this.lastKnownOf(description);
        return status;
      }
      if (executionStatus === 'RUNNING') throw error;
      status.progressUnavailable = `its last progress could not be read: ${error instanceof Error ? error.message : String(error)}`;
    }
    return status;
  }

  /**
   * Asks the follow-up to stop; polling stops promptly and the workflow ends as cancelled. Returns false, and asks
   * nothing, when it has already ended (with its execution status).
   */
  async cancel(workflowId: string): Promise<{ requested: boolean; executionStatus: string }> {
    return this.reaching(`cancelling follow-up ${workflowId}`, async () => {
      const handle = this.client.workflow.getHandle(workflowId);
      const executionStatus = (await handle.describe()).status.name;
      if (executionStatus !== 'RUNNING') return { requested: false, executionStatus };
      await handle.cancel();
      return { requested: true, executionStatus };
    });
  }

  /**
   * Reads a job once through a worker (the API key lives only in the workers' environment), to check it exists before
   * something is set up for it (`agent-followup schedule create` warns on a job that does not). Nothing is sent. Says
   * `found: null` with the reason when it cannot tell: no live worker, no answer within `timeoutMs`, the key refused.
   */
  async checkJob(
    ref: { projectId: string; jobId: string },
    options: { timeoutMs?: number } = {},
  ): Promise<AgentJobCheckResult> {
    for (const [field, value] of [
      ['projectId', ref.projectId],
      ['jobId', ref.jobId],
    ] as const) {
      const problem = identifierProblem(field, value);
      if (problem) throw invalidField(field, problem);
    }
    // Without a live worker the check is still made (one may be starting), but not waited for long.
    const workerLive = (await this.workers()).some((worker) => worker.live);
    const timeoutMs = workerLive
      ? (options.timeoutMs ?? 30_000)
      : Math.min(options.timeoutMs ?? 30_000, NO_WORKER_CHECK_TIMEOUT_MS);
    const handle = await this.client.workflow.start<typeof checkAgentJobWorkflow>(CHECK_AGENT_JOB_WORKFLOW_TYPE, {
      taskQueue: this.options.taskQueue,
      workflowId: `agent-followup-check/${ref.projectId}/${ref.jobId}/${randomUUID()}`,
      args: [{ projectId: ref.projectId, jobId: ref.jobId }],
      workflowExecutionTimeout: timeoutMs,
      staticSummary: `Check that job ${ref.projectId}/${ref.jobId} exists (read once, nothing sent)`,
    });
    try {
      return { found: true, ...(await handle.result()) };
    } catch (error) {
      const outcome = failedOutcome(error);
      if (outcome.type === 'AgentJobNotFound') return { found: false, type: outcome.type, message: outcome.message };
      if (outcome.type === 'WorkflowTimeout') {
        return {
          found: null,
          reason: workerLive
            ? `no answer within ${timeoutMs / 1000}s`
            : `no worker polls task queue '${this.options.taskQueue}' to read it`,
        };
      }
      return { found: null, reason: `${outcome.type}: ${outcome.message}` };
    }
  }

  /**
   * The follow-ups of a project, a job and a state (`running`, `ended`, or one way of ending) in Temporal's order
   * (running ones first, then the latest ended), from what its visibility keeps: no worker is asked. Visibility may list a follow-up started or ended in the last
   * second or two only a moment later. Throws InvalidFollowUpInputError for a bad filter, before any request.
   */
  async list(filter: FollowUpListFilter = {}): Promise<FollowUpList> {
    const checked = checkListFilter(filter);
    return this.reaching('listing follow-ups', async () => {
      const followUps: ListedFollowUp[] = [];
      // One more than asked: whether the limit cut the list.
      for await (const execution of this.client.workflow.list({ query: followUpListQuery(checked) })) {
        if (followUps.length === checked.limit) return { followUps, more: true };
        followUps.push(listedFollowUp(execution));
      }
      return { followUps, more: false };
    });
  }

  /**
   * Every running follow-up of a job (found by its search attributes) asked to read it now: for a caller whose own
   * webhook names the job, not a follow-up. None running is an empty list. Visibility may list a follow-up started in
   * the last second or two only a moment later.
   */
  async pollNow(job: { projectId: string; jobId: string }, options?: { timeoutMs?: number }): Promise<JobPollNowAnswer>;
  /**
   * Asks a running follow-up to read its job now rather than at the next point of its poll schedule: for a caller
   * who knows the job changed (its own webhook, a person in a UI). The read is an ordinary poll; when it shows the
   * job ended, the follow-up ends as it would have at its next poll. Every ask is followed by a read that begins after
   * it: at once, or, while asks keep coming, a few seconds on (`readAt`); an ask made while a read is already due is
   * covered by that read (`covered`) and writes nothing. A follow-up that has ended is left alone (`requested: false`).
   * A worker takes the ask: with none answering within `timeoutMs` (default 10 s) this fails with
   * NoWorkerAnsweredError.
   */
  async pollNow(workflowId: string, options?: { timeoutMs?: number }): Promise<PollNowAnswer>;
  async pollNow(
    target: string | { projectId: string; jobId: string },
    options: { timeoutMs?: number } = {},
  ): Promise<PollNowAnswer | JobPollNowAnswer> {
    if (typeof target !== 'string') return this.pollNowJob(target, options);
    return this.reaching(`asking follow-up ${target} to read its job now`, () => this.askPollNow(target, options));
  }

  private async pollNowJob(
    job: { projectId: string; jobId: string },
    options: { timeoutMs?: number },
  ): Promise<JobPollNowAnswer> {
    for (const field of ['projectId', 'jobId'] as const) {
      const problem = identifierProblem(field, job?.[field]);
      if (problem) throw invalidField(field, problem);
    }
    return this.reaching(`asking the follow-ups of job ${job.jobId} to read it now`, async () => {
      const query = openFollowUpsOfJobQuery(job);
      const running: Array<{ workflowId: string; startMs: number }> = [];
      for await (const execution of this.client.workflow.list({ query })) {
        running.push({ workflowId: execution.workflowId, startMs: execution.startTime.getTime() });
      }
      running.sort((a, b) => a.startMs - b.startMs);
      const followUps = await Promise.all(
        running.map(async ({ workflowId }) => ({ workflowId, ...(await this.askPollNow(workflowId, options)) })),
      );
      return { followUps };
    });
  }

  private async askPollNow(workflowId: string, options: { timeoutMs?: number }): Promise<PollNowAnswer> {
    const handle = this.client.workflow.getHandle(workflowId);
    const executionStatus = (await handle.describe()).status.name;
    if (executionStatus !== 'RUNNING') return { requested: false, executionStatus, readAt: null, covered: false };
    const timeoutMs = options.timeoutMs ?? POLL_NOW_ANSWER_MS;
    const deadline = Date.now() + timeoutMs;
    try {
      const { readAtMs } = await this.client.connection.withDeadline(deadline, () =>
        handle.executeUpdate(pollNowUpdate),
      );
      return { requested: true, executionStatus, readAt: new Date(readAtMs).toISOString(), covered: false };
    } catch (error) {
      const covered = coveringRead(error);
      if (covered !== null)
        return { requested: true, executionStatus, readAt: new Date(covered).toISOString(), covered: true };
      if (isGrpcDeadlineError(error) || (isGrpcCancelledError(error) && Date.now() >= deadline))
        throw new NoWorkerAnsweredError(workflowId, timeoutMs);
      // It ended between the look and the ask: nothing to read for.
      const now = (await handle.describe()).status.name;
      if (now !== 'RUNNING') return { requested: false, executionStatus: now, readAt: null, covered: false };
      throw error;
    }
  }

  /**
   * Runs a call to Temporal. A call that failed because Temporal was out of reach throws TemporalUnreachableError
   * instead (address, namespace, what to check), also when it surfaced as "no worker answered": with the server gone
   * nothing answers, and the worker is not what to look at.
   */
  private async reaching<T>(doing: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      // Its text blames the workers; with the server gone that is not what happened, so it is not passed on.
      if (error instanceof NoWorkerAnsweredError)
        throw (await temporalAnswers(this.client)) ? error : unreachable(this.client, doing, undefined);
      throw await explainOutage(this.client, doing, error);
    }
  }

  /** What the server keeps of the follow-up without a worker: its search attributes and its pending poll activity. */
  private async lastKnownOf(
    description: WorkflowExecutionDescription,
  ): Promise<NonNullable<FollowUpStatus['lastKnown']>> {
    return {
      jobStatus: description.typedSearchAttributes.get(AgentJobStatus) ?? null,
      prLink: description.typedSearchAttributes.get(AgentPrLink) ?? null,
      poll: (await describePollActivity(description, this.client.options.loadedDataConverter)) ?? null,
    };
  }

  /**
   * The workers polling this client's task queue for workflow tasks, as the server lists them (it keeps a worker for
   * minutes after it stopped). `live`: seen polling within the last 75 s. None live means a follow-up started now
   * waits until a worker starts; a worker that died in the last minute still looks live (a query with a timeout
   * tells: `progress(id, { timeoutMs })`).
   */
  async workers(): Promise<Array<{ identity: string; lastSeen: Date | null; live: boolean }>> {
    const response = await this.client.workflowService.describeTaskQueue({
      namespace: this.client.options.namespace,
      taskQueue: { name: this.options.taskQueue },
      taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    });
    const now = Date.now();
    return (response.pollers ?? []).map((poller) => {
      const lastSeen =
        poller.lastAccessTime?.seconds != null ? new Date(Number(poller.lastAccessTime.seconds) * 1000) : null;
      return {
        identity: poller.identity ?? '',
        lastSeen,
        live: lastSeen !== null && now - lastSeen.getTime() <= LIVE_POLLER_WINDOW_MS,
      };
    });
  }

  /** The input a follow-up was started with (the current run's, which continue-as-new carries unchanged). */
  async inputOf(workflowId: string): Promise<unknown> {
    return (await this.startedAs(workflowId)).input;
  }

  /** When the follow-up under `workflowId` was first started, and its status now: what an attached caller is told. */
  private async attachedTo(workflowId: string): Promise<Pick<StartedFollowUp, 'startedAt' | 'executionStatus'>> {
    const description = await this.client.workflow.getHandle(workflowId).describe();
    const original = description.raw.workflowExtendedInfo?.originalStartTime;
    const startedAt =
      original?.seconds != null
        ? new Date(Number(original.seconds) * 1000 + Math.floor((original.nanos ?? 0) / 1e6))
        : description.startTime;
    return { startedAt: startedAt.toISOString(), executionStatus: description.status.name };
  }

  /** The type and first argument of the workflow under `workflowId` (its current run), from its first history event. */
  private async startedAs(workflowId: string): Promise<ExistingWorkflow> {
    const response = await this.client.workflowService.getWorkflowExecutionHistory({
      namespace: this.client.options.namespace,
      execution: { workflowId },
      maximumPageSize: 1,
    });
    const started = response.history?.events?.[0]?.workflowExecutionStartedEventAttributes;
    const payload = started?.input?.payloads?.[0];
    return {
      workflowType: started?.workflowType?.name ?? '',
      input: payload ? this.client.options.loadedDataConverter.payloadConverter.fromPayload(payload) : undefined,
    };
  }

  /**
   * A project's send budget and its use of the window, from its coordinator (README, "The send budget"). Null when
   * the project has no coordinator: nothing was sent in the last hour, and it has the workers' default budget.
   */
  async projectBudget(projectId: string): Promise<ProjectView | null> {
    const handle = this.client.workflow.getHandle(coordinatorWorkflowId(projectId));
    try {
      if ((await handle.describe()).status.name !== 'RUNNING') return null;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return null;
      throw error;
    }
    return this.queryProject(handle.workflowId);
  }

  /**
   * A coordinator's view, asked of a worker within COORDINATOR_QUERY_DEADLINE_MS: with none answering (no worker of the
   * coordinator task queue, or one that died) NoWorkerAnsweredError says so at once, not the SDK's "Failed to query
   * Workflow" after its own half-minute deadline.
   */
  private async queryProject(workflowId: string): Promise<ProjectView> {
    const deadline = Date.now() + COORDINATOR_QUERY_DEADLINE_MS;
    try {
      return await this.client.connection.withDeadline(deadline, () =>
        this.client.workflow.getHandle(workflowId).query(projectQuery),
      );
    } catch (error) {
      if (isGrpcDeadlineError(error) || (isGrpcCancelledError(error) && Date.now() >= deadline))
        throw new NoWorkerAnsweredError(
          workflowId,
          COORDINATOR_QUERY_DEADLINE_MS,
          `No worker of coordinator task queue '${this.options.coordinatorTaskQueue ?? DEFAULT_COORDINATOR_TASK_QUEUE}' answered ` +
            `${workflowId} within ${COORDINATOR_QUERY_DEADLINE_MS / 1000}s, so the budget cannot be shown: start a worker ` +
            '(budgets and what they hold are kept in Temporal meanwhile)',
        );
      throw error;
    }
  }

  /** The budgets of every project with a running coordinator (sends in the last hour, a budget of its own, or waits). */
  async projectBudgets(limit = 200): Promise<ProjectView[]> {
    const ids: string[] = [];
    const query = `WorkflowType = '${PROJECT_COORDINATOR_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running'`;
    for await (const execution of this.client.workflow.list({ query })) {
      ids.push(execution.workflowId);
      if (ids.length >= limit) break;
    }
    // A coordinator that ended since it was listed is left out, and so is one no worker answers within the deadline:
    // the namespace may hold coordinators of other deployments, on task queues this client's workers do not serve.
    const views = await Promise.all(ids.map((id) => this.queryProject(id).catch(() => null)));
    return views
      .filter((view): view is ProjectView => view !== null)
      .sort((a, b) => a.projectId.localeCompare(b.projectId));
  }

  /** The namespace's default budget per project, if one was set (`setDefaultBudget`); null: the workers' setting. */
  async defaultBudget(): Promise<number | null> {
    try {
      const description = await this.client.workflow.getHandle(BUDGET_DEFAULTS_WORKFLOW_ID).describe();
      const value = description.memo?.[DEFAULT_BUDGET_MEMO_KEY];
      return description.status.name === 'RUNNING' && typeof value === 'number' ? value : null;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return null;
      throw error;
    }
  }

  /**
   * Sets every project's budget (sends per rolling hour) unless a project has its own, kept durably by the budget
   * defaults workflow; null returns to the workers' AGENT_SENDS_PER_PROJECT_PER_HOUR. Workers pick it up within 30 s,
   * and a project's coordinator with its next follow-up. Above the vendor's documented 100 only with
   * `aboveVendorLimit` (your plan allows more).
   */
  async setDefaultBudget(sendsPerHour: number | null, options: BudgetOptions = {}): Promise<void> {
    checkBudget(sendsPerHour, options);
    // The workflow checks it again by the same rule, so the allow flag travels with the figure.
    const budget = budgetRequest(sendsPerHour, options);
    await this.client.workflow.signalWithStart<typeof budgetDefaultsWorkflow, [BudgetRequest]>(
      BUDGET_DEFAULTS_WORKFLOW_TYPE,
      {
        workflowId: BUDGET_DEFAULTS_WORKFLOW_ID,
        taskQueue: this.options.coordinatorTaskQueue ?? DEFAULT_COORDINATOR_TASK_QUEUE,
        args: [budget],
        signal: setBudgetSignal,
        signalArgs: [budget],
        staticSummary: 'The default send budget of every project',
      },
    );
  }

  /**
   * Gives a project a budget of its own (sends per rolling hour), kept by its coordinator, which then keeps running;
   * null returns it to the workers' default (AGENT_SENDS_PER_PROJECT_PER_HOUR). Above the vendor's documented 100
   * only with `aboveVendorLimit` (your plan allows more).
   */
  async setProjectBudget(projectId: string, sendsPerHour: number | null, options: BudgetOptions = {}): Promise<void> {
    const problem = identifierProblem('projectId', projectId);
    if (problem) throw invalidField('projectId', problem);
    checkBudget(sendsPerHour, options);
    await this.client.workflow.signalWithStart<typeof projectCoordinatorWorkflow, [BudgetRequest]>(
      PROJECT_COORDINATOR_WORKFLOW_TYPE,
      {
        workflowId: coordinatorWorkflowId(projectId),
        taskQueue: this.options.coordinatorTaskQueue ?? DEFAULT_COORDINATOR_TASK_QUEUE,
        args: [{ projectId, sendsPerHour: DEFAULT_SENDS_PER_PROJECT_PER_HOUR }],
        signal: setBudgetSignal,
        signalArgs: [budgetRequest(sendsPerHour, options)],
        staticSummary: `Project ${projectId}: send budget and one follow-up at a time per job`,
      },
    );
  }

  /** Closes the connection this client was built on. */
  async close(): Promise<void> {
    await this.client.connection.close();
  }
}

/** A budget as the workflows take it: the allow flag only when set (the workflow refuses above 100 without it). */
function budgetRequest(sendsPerHour: number | null, { aboveVendorLimit }: BudgetOptions): BudgetRequest {
  return { sendsPerHour, ...(aboveVendorLimit ? { aboveVendorLimit: true as const } : {}) };
}
