/**
 * What a callback attests is checked against what Temporal recorded: the callback's parent (set by the server, so a
 * raw start has none) must be one of our follow-ups, and its recorded ending (result or failure, read with the worker's
 * client and data converter) must be the one the notification reports. Anything else is refused for good and nothing
 * is posted, so no starter can earn our signature on a made-up ending.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import {
  ApplicationFailure as RecordedApplicationFailure,
  CancelledFailure,
  type Client,
  WorkflowFailedError,
} from '@temporalio/client';
import { CALLBACK_NOT_ATTESTED, type FollowUpNotification, type FollowUpResult } from '../kernel/types';
import { FOLLOW_UP_WORKFLOW_TYPE } from '../kernel/workflow-ids';
import { AgentJobId, AgentProjectId } from '../kernel/search-attributes';

/** The follow-up a callback reports on: its parent, as the server recorded it (`workflowInfo().parent`). */
export interface NotifiedParent {
  workflowId: string;
  runId: string;
}

/** The follow-up's ending as recorded: its result, or the failure it closed with. */
export type RecordedEnding = { result: FollowUpResult } | { failure: unknown };

/** Builds the check every attempt to post a callback makes first (deliver-notification.ts). */
export function createCheckNotifiedParent(temporal: Client) {
  return async function checkNotifiedParent(parent: NotifiedParent, notification: FollowUpNotification): Promise<void> {
    const refuse = (why: string) =>
      ApplicationFailure.nonRetryable(
        `refused to sign the callback: ${why}; only a follow-up's own ending is called back`,
        CALLBACK_NOT_ATTESTED,
      );
    const handle = temporal.workflow.getHandle(parent.workflowId, parent.runId, { followRuns: false });
    const described = await handle.describe();
    if (described.type !== FOLLOW_UP_WORKFLOW_TYPE) {
      throw refuse(`its parent ${parent.workflowId} is a ${described.type}, not a ${FOLLOW_UP_WORKFLOW_TYPE}`);
    }
    // The parent starts its callback as its last step, so it closes soon after; the wait is bounded by the timeout.
    let ending: RecordedEnding;
    try {
      const signal = Context.current().cancellationSignal;
      ending = { result: await temporal.connection.withAbortSignal(signal, () => handle.result()) };
    } catch (error) {
      if (!(error instanceof WorkflowFailedError)) throw error;
      ending = { failure: error.cause };
    }
    const recorded = {
      projectId: described.typedSearchAttributes.get(AgentProjectId),
      jobId: described.typedSearchAttributes.get(AgentJobId),
    };
    const mismatch = notificationMismatch(parent.workflowId, recorded, ending, notification);
    if (mismatch !== undefined) throw refuse(mismatch);
  };
}

/** What in the notification differs from the ending its follow-up recorded (undefined: it is that ending). */
export function notificationMismatch(
  workflowId: string,
  recorded: { projectId?: string; jobId?: string },
  ending: RecordedEnding,
  notification: FollowUpNotification,
): string | undefined {
  if (notification.workflowId !== workflowId) return `it names ${notification.workflowId}, its parent is ${workflowId}`;
  // Set by the starter (ours always sets them); when present they must agree.
  for (const field of ['projectId', 'jobId'] as const) {
    const value = recorded[field];
    if (value !== undefined && value !== notification[field]) return `its ${field} is not the follow-up's`;
  }
  if ('result' in ending) {
    const { result } = ending;
    const same =
      notification.failure === null &&
      notification.outcome === result.outcome &&
      notification.prLink === result.prLink &&
      notification.jobId === result.job.id &&
      notification.job?.id === result.job.id &&
      notification.job.status === result.job.status &&
      notification.sentAt === result.sentAt &&
      notification.finishedAt === result.finishedAt;
    return same ? undefined : 'it does not report the result the follow-up returned';
  }
  const { failure } = ending;
  if (failure instanceof CancelledFailure) {
    return notification.outcome === 'cancelled' ? undefined : 'the follow-up was cancelled';
  }
  if (!(failure instanceof RecordedApplicationFailure) || notification.failure === null) {
    return 'it does not report the failure the follow-up ended with';
  }
  const same = notification.failure.type === (failure.type ?? null) && notification.failure.message === failure.message;
  return same ? undefined : 'it does not report the failure the follow-up ended with';
}
