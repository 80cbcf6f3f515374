/**
 * followUpNotifyWorkflow: a follow-up's callback, delivered durably apart from it. The follow-up starts it as its child
 * as it ends (abandoned, so the follow-up's result never waits for a receiver) under `<follow-up id>/notify/<first run
 * id>`, the delivery id every attempt carries. It posts only what its parent recorded: it must have a parent (the
 * server sets it; a raw start has none), and an activity checks that the parent is our follow-up and ended as the
 * notification says (CallbackNotAttested otherwise, nothing posted). Non-2xx answers and failed connections are
 * retried with backoff for up to 24 h, each attempt checking the parent again; it ends failed when they run out or the workers cannot post at all (no secret,
 * a refused URL). Its state is what `status` shows of the callback.
 */
import { ApplicationFailure, proxyActivities, workflowInfo } from '@temporalio/workflow';
import { CALLBACK_NOT_ATTESTED, type NotificationDelivered, type NotificationDelivery } from '../../kernel/types';
import { notifyProblem } from '../../kernel/request';
import { type FollowUpActivities } from '../activity-contract';

/** How long a callback is retried. */
export const NOTIFY_RETRY_HOURS = 24;

// The parent is closing as the first attempt runs: its check waits for the recorded ending (the parent's last step
// started this, so it comes at once), then the POST has its own request timeout (10 s by default). A worker lost
// mid-attempt is noticed at the start-to-close timeout: another attempt follows 5 s later.
const { deliverNotification } = proxyActivities<FollowUpActivities>({
  scheduleToCloseTimeout: `${NOTIFY_RETRY_HOURS}h`,
  startToCloseTimeout: '30s',
  retry: { initialInterval: '5s', backoffCoefficient: 2, maximumInterval: '10m' },
  summary: "check the follow-up's recorded ending, then post the signed callback",
});

export async function followUpNotifyWorkflow(delivery: NotificationDelivery): Promise<NotificationDelivered> {
  const problem =
    typeof delivery !== 'object' || delivery === null || typeof delivery.notification !== 'object'
      ? 'the input must be { url, notification }'
      : notifyProblem({ url: delivery.url });
  if (problem !== undefined) {
    throw ApplicationFailure.nonRetryable(`Invalid callback: ${problem}`, 'InvalidCallbackInput');
  }
  const { parent } = workflowInfo();
  if (parent === undefined) {
    throw ApplicationFailure.nonRetryable(
      'Refused to sign the callback: it was started on its own, not by the follow-up whose ending it reports',
      CALLBACK_NOT_ATTESTED,
    );
  }
  return deliverNotification(delivery, { workflowId: parent.workflowId, runId: parent.runId });
}
