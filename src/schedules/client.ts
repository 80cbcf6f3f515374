/** The `FollowUpSchedules` client: creates and manages recurring follow-ups on Temporal Schedules. */
import {
  ScheduleAlreadyRunning,
  WorkflowNotFoundError,
  type Client,
  type ScheduleDescription,
  type ScheduleExecutionResult,
  type ScheduleSummary,
} from '@temporalio/client';
import type { FollowUpClient, FollowUpClientOptions } from '../client';
import { DEFAULT_MAX_PROMPT_LENGTH, formatMs } from '../client/input';
import { AgentJobId, AgentProjectId } from '../kernel/search-attributes';
import type { FollowUpResult } from '../kernel/types';
import type { followUpWorkflow } from '../workflows/follow-up/follow-up';
import { listQuery, type ListSchedulesFilter } from './list-filter';
import { buildScheduleOptions } from './options';
import { workflowIdKeyOf } from '../client/ids';
import { explainStartRefusal } from '../client/errors';
import {
  checkNote,
  checkScheduleRequest,
  InvalidScheduleError,
  type CheckedScheduleRequest,
  type FollowUpScheduleRequest,
} from './request';
import {
  failureOf,
  followUpInputOf,
  keywordOf,
  noteOf,
  overlapName,
  pauseReason,
  specView,
  type CreatedFollowUpSchedule,
  type FollowUpScheduleListEntry,
  type FollowUpScheduleView,
  type ScheduledFollowUpRun,
} from './views';
import { FOLLOW_UP_WORKFLOW_TYPE } from '../kernel/workflow-ids';

/** Creates and manages recurring follow-ups; every method validates before it calls Temporal. */
export class FollowUpSchedules {
  private readonly maxPromptLength: number;
  /** The default ids' HMAC key when the client encrypts payloads (client/ids.ts says why). */
  private readonly idKey: Uint8Array | undefined;

  constructor(
    readonly client: Client,
    private readonly options: FollowUpClientOptions,
  ) {
    this.maxPromptLength = options.maxPromptLength ?? DEFAULT_MAX_PROMPT_LENGTH;
    this.idKey = workflowIdKeyOf(client.options.loadedDataConverter);
  }

  /**
   * Schedules on the connection, namespace, task queue and prompt limit of a follow-up client, e.g.
   * `FollowUpSchedules.from(await FollowUpClient.fromEnvironment())`. Closing either closes the shared connection.
   */
  static from(followUps: FollowUpClient): FollowUpSchedules {
    return new FollowUpSchedules(followUps.client, followUps.options);
  }

  /** Checks a request without creating anything; throws InvalidScheduleError naming every bad field. */
  check(request: unknown): CheckedScheduleRequest {
    return checkScheduleRequest(request, this.maxPromptLength, this.idKey);
  }

  /** Creates the schedule. Throws ScheduleAlreadyRunning when one with this id exists. */
  async create(request: FollowUpScheduleRequest): Promise<CreatedFollowUpSchedule> {
    const checked = this.check(request);
    const options = buildScheduleOptions(checked, this.options.taskQueue, this.idKey);
    try {
      await this.client.schedule.create(options);
    } catch (error) {
      if (error instanceof ScheduleAlreadyRunning) {
        throw new ScheduleAlreadyRunning(
          `a schedule with id '${checked.scheduleId}' already exists; describe or delete it, or give another scheduleId`,
          checked.scheduleId,
        );
      }
      // The server checks cron syntax itself; the SDK surfaces its refusal as a TypeError. It is still the caller's input.
      if (error instanceof TypeError) throw new InvalidScheduleError(specRefusal(checked, error.message));
      // A namespace without the search attributes (no `setup`), or none at all: said as `start` says it.
      throw explainStartRefusal(error, this.client.options.namespace);
    }
    if ('cron' in checked.spec) await this.refuseIfNeverFires(checked.scheduleId, checked.spec.cron);
    return { scheduleId: checked.scheduleId, workflowIdPrefix: options.action.workflowId as string };
  }

  /**
   * A cron the server takes may still match no time at all (`* * 31 2 *`: the 31st of February). Only the server knows
   * when its calendars fire, so its next times decide: none, and the schedule just made is deleted and refused.
   */
  private async refuseIfNeverFires(scheduleId: string, cron: string): Promise<void> {
    const handle = this.client.schedule.getHandle(scheduleId);
    const { info } = await handle.describe();
    if (info.nextActionTimes.length > 0) return;
    await handle.delete();
    throw new InvalidScheduleError(
      `Invalid schedule: the cron expression '${cron}' matches no time Temporal will ever reach ` +
        '(a day the month never has, or a year in the past), so the schedule would never run; nothing was created. ' +
        'Check its day-of-month, month and year fields',
    );
  }

  /** The schedule with its spec, state, policies, next times and how its recent runs ended. */
  async describe(scheduleId: string): Promise<FollowUpScheduleView> {
    const description = await this.client.schedule.getHandle(scheduleId).describe();
    const recent = [...description.info.recentActions].reverse();
    return {
      scheduleId,
      input: followUpInputOf(description.action.args),
      taskQueue: description.action.taskQueue,
      workflowIdPrefix: description.action.workflowId,
      spec: specView(description.spec, description.memo),
      paused: description.state.paused,
      note: noteOf(description.memo),
      pausedBecause: await pauseReason(description.state, (workflowId) => this.failureOfRun(workflowId)),
      policies: {
        overlap: overlapName(description.policies.overlap),
        catchupWindow: formatMs(description.policies.catchupWindow),
        pauseOnFailure: description.policies.pauseOnFailure,
      },
      nextRunTimes: description.info.nextActionTimes.map((time) => time.toISOString()),
      recentRuns: await Promise.all(recent.map((action) => this.runOf(action))),
      runningWorkflowIds: description.info.runningActions.map((action) => action.workflow.workflowId),
      counts: {
        runsStarted: description.info.numActionsTaken,
        skippedOverlap: description.info.numActionsSkippedOverlap,
        missedCatchupWindow: description.info.numActionsMissedCatchupWindow,
      },
      createdAt: description.info.createdAt.toISOString(),
      updatedAt: description.info.lastUpdatedAt?.toISOString() ?? null,
    };
  }

  /**
   * The follow-up schedules in the namespace (other schedules are left out), newest run of each with its outcome.
   * Temporal's schedule list is eventually consistent: a schedule just created may take a moment to appear.
   */
  async list(filter: ListSchedulesFilter = {}): Promise<FollowUpScheduleListEntry[]> {
    const query = listQuery(filter);
    const limit = filter.limit ?? 100;
    if (!Number.isInteger(limit) || limit < 1)
      throw new InvalidScheduleError(`Invalid filter: limit must be a whole number of at least 1 (got ${limit})`);
    const summaries: ScheduleSummary[] = [];
    for await (const summary of this.client.schedule.list(query ? { query } : {})) {
      if (summary.action?.workflowType !== FOLLOW_UP_WORKFLOW_TYPE) continue;
      summaries.push(summary);
      if (summaries.length >= limit) break;
    }
    return Promise.all(
      summaries.map(async (summary): Promise<FollowUpScheduleListEntry> => {
        const last = summary.info.recentActions[summary.info.recentActions.length - 1];
        return {
          scheduleId: summary.scheduleId,
          projectId: keywordOf(summary, AgentProjectId.name),
          jobId: keywordOf(summary, AgentJobId.name),
          spec: specView(summary.spec ?? {}, summary.memo),
          paused: summary.state.paused,
          note: noteOf(summary.memo),
          pausedBecause: await pauseReason(summary.state, (workflowId) => this.failureOfRun(workflowId)),
          nextRunTimes: summary.info.nextActionTimes.map((time) => time.toISOString()),
          lastRun: last ? await this.runOf(last) : null,
        };
      }),
    );
  }

  /** Stops the schedule from starting runs until it is unpaused; a running follow-up goes on. */
  async pause(scheduleId: string, note = 'Paused with agent-followup'): Promise<void> {
    checkNote(note);
    await this.client.schedule.getHandle(scheduleId).pause(note);
  }

  /** Lets the schedule start runs again (at its next time; missed times within the catch-up window run). */
  async unpause(scheduleId: string, note = 'Unpaused with agent-followup'): Promise<void> {
    checkNote(note);
    await this.client.schedule.getHandle(scheduleId).unpause(note);
  }

  /**
   * Starts a run now, even when the schedule is paused, under the schedule's own overlap policy: the SDK's default
   * for a trigger is ALLOW_ALL, which would start a second follow-up to the job while one is still running.
   */
  async trigger(scheduleId: string): Promise<{ overlap: string }> {
    const handle = this.client.schedule.getHandle(scheduleId);
    const { policies } = await handle.describe();
    await handle.trigger(policies.overlap);
    return { overlap: overlapName(policies.overlap) };
  }

  /** Deletes the schedule. Follow-ups it started keep running; their ids are returned so they can be cancelled. */
  async delete(scheduleId: string): Promise<{ runningWorkflowIds: string[] }> {
    const handle = this.client.schedule.getHandle(scheduleId);
    const description: ScheduleDescription = await handle.describe();
    await handle.delete();
    return { runningWorkflowIds: description.info.runningActions.map((action) => action.workflow.workflowId) };
  }

  /** Closes the connection this client was built on. */
  async close(): Promise<void> {
    await this.client.connection.close();
  }

  /** The failure of a run that failed, or undefined when it did not fail or is gone. */
  private async failureOfRun(workflowId: string): Promise<{ type: string; message: string } | undefined> {
    try {
      await this.client.workflow.getHandle(workflowId).result();
      return undefined;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return undefined;
      return failureOf(error);
    }
  }

  /** How a run ended: for a completed one the job's outcome, for a failed one the failure's type and message. */
  private async runOf(action: ScheduleExecutionResult): Promise<ScheduledFollowUpRun> {
    const { workflowId } = action.action.workflow;
    const run: ScheduledFollowUpRun = {
      workflowId,
      scheduledAt: action.scheduledAt.toISOString(),
      startedAt: action.takenAt.toISOString(),
      status: 'UNKNOWN',
    };
    // Without a run id the handle follows continue-as-new to the run that is current now.
    const handle = this.client.workflow.getHandle<typeof followUpWorkflow>(workflowId);
    try {
      run.status = (await handle.describe()).status.name;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return { ...run, status: 'NOT_FOUND' };
      throw error;
    }
    if (run.status === 'COMPLETED') {
      const result: FollowUpResult = await handle.result();
      return { ...run, outcome: result.outcome, prLink: result.prLink, finishedAt: result.finishedAt };
    }
    if (run.status === 'FAILED') {
      const failure = await handle.result().then(
        () => undefined,
        (error: unknown) => failureOf(error),
      );
      return failure ? { ...run, failure } : run;
    }
    return run;
  }
}

/** The server's reason for refusing a spec, with the cron text it refused and the forms it accepts. */
function specRefusal(checked: CheckedScheduleRequest, reason: string): string {
  if (!('cron' in checked.spec)) return `Invalid schedule: Temporal refused the spec: ${reason}`;
  return (
    `Invalid schedule: Temporal refused the cron expression '${checked.spec.cron}': ${reason}. ` +
    'Use 5 fields (minute hour day-of-month month day-of-week, e.g. "0 9 * * MON-FRI"), 6 (… year) or 7 (second … year), ' +
    'or @hourly, @daily, @weekly, @monthly, @yearly'
  );
}
