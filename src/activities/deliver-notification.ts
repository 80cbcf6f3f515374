/**
 * The callback's one POST per attempt, after checking (every attempt) that the callback's parent is our follow-up and
 * recorded the ending it reports (notified-parent.ts): the notification's JSON, signed afresh (each attempt has its own
 * timestamp), with the same delivery id on every attempt. Temporal retries a non-2xx answer or a failed connection with backoff
 * for up to 24 h (workflows/notify/notify.ts); a missing secret, a refused URL or target, or a redirect is final at
 * once (callback-post.ts).
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { NotificationDelivered, NotificationDelivery } from '../kernel/types';
import type { NotifiedParent } from './notified-parent';
import { isLoopbackHost } from '../loopback';
import {
  DELIVERY_HEADER,
  NotificationSecretError,
  notificationKey,
  SIGNATURE_HEADER,
  signNotification,
  TIMESTAMP_HEADER,
} from '../notify/signature';
import { CallbackPostErrorType, createCallbackPost, type CallbackTargetSettings } from './callback-post';

export interface NotifySettings extends CallbackTargetSettings {
  /**
   * AGENT_NOTIFY_URL: where follow-ups without a `notify` of their own post their callback (schedules' runs, services
   * that never pass one). A follow-up learns it when it checks in with its project's coordinator.
   */
  defaultUrl?: string;
  /**
   * AGENT_NOTIFY_SECRET: the key callbacks are signed with (Standard Webhooks: `whsec_<base64>`, or raw; at least 24
   * bytes: notify/signature.ts); without a good one no callback is posted.
   */
  secret?: string;
  /** AGENT_NOTIFY_ALLOW_INSECURE_HTTP: plain http:// to another host than this machine. */
  allowInsecureHttp?: boolean;
  /** Each POST's timeout (default 10 s). */
  requestTimeoutMs?: number;
}

/** Failure types of a callback attempt. */
export const NotifyErrorType = {
  NotConfigured: 'CallbackNotConfigured',
  InsecureUrl: 'CallbackInsecureUrl',
  ...CallbackPostErrorType,
} as const;

export function createDeliverNotification(
  settings: NotifySettings,
  checkParent: (parent: NotifiedParent, notification: NotificationDelivery['notification']) => Promise<void>,
) {
  const postCallback = createCallbackPost(settings);
  return async function deliverNotification(
    delivery: NotificationDelivery,
    parent: NotifiedParent,
  ): Promise<NotificationDelivered> {
    const { info } = Context.current();
    if (!settings.secret) {
      throw ApplicationFailure.nonRetryable(
        'no callback secret: set AGENT_NOTIFY_SECRET on the workers (the receiver checks the signature with it)',
        NotifyErrorType.NotConfigured,
      );
    }
    try {
      notificationKey(settings.secret);
    } catch (error) {
      if (!(error instanceof NotificationSecretError)) throw error;
      throw ApplicationFailure.nonRetryable(
        `AGENT_NOTIFY_SECRET cannot sign: ${error.message}`,
        NotifyErrorType.NotConfigured,
      );
    }
    const url = new URL(delivery.url);
    if (url.protocol === 'http:' && !isLoopbackHost(url.hostname) && !settings.allowInsecureHttp) {
      throw ApplicationFailure.nonRetryable(
        `refused to post the callback over plain http:// to ${url.host}: use https://, or set ` +
          'AGENT_NOTIFY_ALLOW_INSECURE_HTTP=true on the workers if you really mean it',
        NotifyErrorType.InsecureUrl,
      );
    }
    // Nothing is signed for an ending its parent did not record (CallbackNotAttested, final).
    await checkParent(parent, delivery.notification);
    const body = JSON.stringify(delivery.notification);
    const timestampS = Math.floor(Date.now() / 1000);
    const deliveryId = info.workflowExecution?.workflowId ?? info.activityId;
    const { status } = await postCallback(
      url,
      {
        'Content-Type': 'application/json',
        'User-Agent': 'agent-followup',
        [DELIVERY_HEADER]: deliveryId,
        [TIMESTAMP_HEADER]: String(timestampS),
        [SIGNATURE_HEADER]: signNotification(settings.secret, deliveryId, timestampS, body),
      },
      body,
      AbortSignal.any([AbortSignal.timeout(settings.requestTimeoutMs ?? 10_000), Context.current().cancellationSignal]),
    );
    return { status, deliveredAt: new Date().toISOString(), attempt: info.attempt };
  };
}
