/**
 * What a follow-up shows of itself, and where: the `progress` query and the Web UI's current details (no history
 * events), the search attributes a visibility query finds it by, its delivery record (memo, read by a later run of the
 * same workflow id). The run decides what changed; this module only writes it out.
 */
import { setCurrentDetails, setHandler, upsertMemo, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { AgentJob } from '../../kernel/agent-job';
import type { PollSchedule } from '../../kernel/poll-schedule';
import type { FollowUpOutcomeKind } from '../../kernel/outcome-kind';
import { renderProgressDetails } from './progress-details';
import {
  AgentJobId,
  AgentJobStatus,
  AgentPrLink,
  AgentProjectId,
  endingAttributeUpdates,
  jobAttributeUpdates,
} from '../../kernel/search-attributes';
import { DELIVERY_MEMO_KEY, type DeliveryRecord, type FollowUpProgress } from '../../kernel/types';
import { progressQuery } from './messages';

export class RunView {
  /** The schedule of the wait under way: the details say its next reads. */
  private schedule: PollSchedule | null = null;

  constructor(
    private readonly ref: { projectId: string; jobId: string },
    private readonly progress: FollowUpProgress,
  ) {
    setHandler(progressQuery, () => this.progress);
  }

  /** The Web UI's "Current details": no history events, so it can change as often as the progress does. */
  publish(): void {
    const plan = this.schedule ? { schedule: this.schedule, nowMs: Date.now() } : null;
    setCurrentDetails(renderProgressDetails(this.progress, plan));
  }

  planReads(schedule: PollSchedule | null): void {
    this.schedule = schedule;
  }

  /** Keeps AgentJobStatus and AgentPrLink current, so a visibility query by status finds the follow-up. */
  showJob(shown: AgentJob | null): void {
    const updates = this.jobUpdates(shown);
    if (updates.length > 0) upsertSearchAttributes(updates);
  }

  /**
   * Marks how the follow-up ended where the Web UI's list and visibility queries see it, with the job as it ended
   * (`shown`, not shown yet) in the same upsert: one history event, not two.
   */
  showEnd(outcome: FollowUpOutcomeKind, shown: AgentJob | null): void {
    this.publish();
    const jobUpdates = this.jobUpdates(shown);
    const status =
      jobUpdates.find((update) => update.key === AgentJobStatus)?.value ??
      workflowInfo().typedSearchAttributes.get(AgentJobStatus);
    const ending = endingAttributeUpdates(outcome, typeof status === 'string' ? status : undefined);
    // The ending's word on the job's status wins over the job's own.
    const endingKeys = new Set(ending.map((update) => update.key.name));
    upsertSearchAttributes([...jobUpdates.filter((update) => !endingKeys.has(update.key.name)), ...ending]);
  }

  private jobUpdates(shown: AgentJob | null) {
    const attributes = workflowInfo().typedSearchAttributes;
    return jobAttributeUpdates(this.ref, shown, {
      projectId: attributes.get(AgentProjectId),
      jobId: attributes.get(AgentJobId),
      status: attributes.get(AgentJobStatus),
      prLink: attributes.get(AgentPrLink),
    });
  }

  /** The delivery record a later run of this workflow id reads to know whether its message went out. */
  record(record: DeliveryRecord): void {
    upsertMemo({ [DELIVERY_MEMO_KEY]: record });
  }
}
