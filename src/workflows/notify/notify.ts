/**
 * followUpNotifyWorkflow: a follow-up's callback, delivered durably apart from it. The follow-up starts it as it ends
 * (abandoned, so the follow-up's result never waits for a receiver) under `<follow-up id>/notify/<first run id>`, the
 * delivery id every attempt carries. Non-2xx answers and failed connections are retried with backoff for up to 24 h;
 * it ends failed when they run out or the workers cannot post at all (no secret, a refused URL). Its state is what
 * `status` shows of the callback.
 */
import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { NotificationDelivered, NotificationDelivery } from '../../kernel/types';
import { notifyProblem } from '../../kernel/request';
import { type FollowUpActivities } from '../activity-contract';

/** How long a callback is retried. */
export const NOTIFY_RETRY_HOURS = 24;

const { deliverNotification } = proxyActivities<FollowUpActivities>({
  scheduleToCloseTimeout: `${NOTIFY_RETRY_HOURS}h`,
  startToCloseTimeout: '20s',
  retry: { initialInterval: '5s', backoffCoefficient: 2, maximumInterval: '10m' },
  summary: 'post the signed callback',
});

export async function followUpNotifyWorkflow(delivery: NotificationDelivery): Promise<NotificationDelivered> {
  const problem =
    typeof delivery !== 'object' || delivery === null || typeof delivery.notification !== 'object'
      ? 'the input must be { url, notification }'
      : notifyProblem({ url: delivery.url });
  if (problem !== undefined) {
    throw ApplicationFailure.nonRetryable(`Invalid callback: ${problem}`, 'InvalidCallbackInput');
  }
  return deliverNotification(delivery);
}
