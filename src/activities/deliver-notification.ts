/**
 * The callback's one POST per attempt: the notification's JSON, signed afresh (each attempt has its own timestamp),
 * with the same delivery id on every attempt. Temporal retries a non-2xx answer or a failed connection with backoff
 * for up to 24 h (workflows/notify/notify.ts); a missing secret or a refused URL is final at once.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { NotificationDelivered, NotificationDelivery } from '../kernel/types';
import { isLoopbackHost } from '../loopback';
import {
  DELIVERY_HEADER,
  NotificationSecretError,
  notificationKey,
  SIGNATURE_HEADER,
  signNotification,
  TIMESTAMP_HEADER,
} from '../notify/signature';

export interface NotifySettings {
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
  Refused: 'CallbackRefused',
  Unreachable: 'CallbackUnreachable',
} as const;

const BODY_EXCERPT = 200;

export function createDeliverNotification(settings: NotifySettings) {
  return async function deliverNotification(delivery: NotificationDelivery): Promise<NotificationDelivered> {
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
    const body = JSON.stringify(delivery.notification);
    const timestampS = Math.floor(Date.now() / 1000);
    const deliveryId = info.workflowExecution?.workflowId ?? info.activityId;
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'User-Agent': 'agent-followup',
          [DELIVERY_HEADER]: deliveryId,
          [TIMESTAMP_HEADER]: String(timestampS),
          [SIGNATURE_HEADER]: signNotification(settings.secret, deliveryId, timestampS, body),
        },
        body,
        redirect: 'manual',
        signal: AbortSignal.any([
          AbortSignal.timeout(settings.requestTimeoutMs ?? 10_000),
          Context.current().cancellationSignal,
        ]),
      });
    } catch (error) {
      throw ApplicationFailure.retryable(
        `the callback receiver at ${url.host} could not be reached: ${error instanceof Error ? error.message : String(error)}`,
        NotifyErrorType.Unreachable,
      );
    }
    const text = await response.text().catch(() => '');
    if (!response.ok) {
      // The secret never leaves in a request body, so an echo of the request cannot hold it; the excerpt is bounded.
      throw ApplicationFailure.retryable(
        `the callback receiver at ${url.host} answered HTTP ${response.status}` +
          (text ? `: ${text.slice(0, BODY_EXCERPT)}` : ''),
        NotifyErrorType.Refused,
      );
    }
    return { status: response.status, deliveredAt: new Date().toISOString(), attempt: info.attempt };
  };
}
