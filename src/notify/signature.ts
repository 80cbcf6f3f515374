/**
 * Signed callbacks: how the worker signs a callback's body and how a receiver checks it. HMAC-SHA256 over
 * "<timestamp>.<raw body>" with the secret both share (AGENT_NOTIFY_SECRET on the workers), so a receiver can tell our
 * callback from a forgery and a replay from a fresh one.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FollowUpNotification } from '../kernel/types';

/** `v1=<hex HMAC-SHA256 of "<timestamp>.<body>">`. */
export const SIGNATURE_HEADER = 'x-agent-followup-signature';
/** Unix seconds when this attempt was signed (each attempt is signed anew). */
export const TIMESTAMP_HEADER = 'x-agent-followup-timestamp';
/** The same on every attempt of one follow-up's callback: a receiver keeps it to act once. */
export const DELIVERY_HEADER = 'x-agent-followup-delivery';

/** The signature header's value for a body signed at `timestampS`. */
export function signNotification(secret: string, timestampS: number, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestampS}.${body}`).digest('hex')}`;
}

/** A callback that is not ours, altered, or too old to trust: nothing in it should be acted on. */
export class NotificationSignatureError extends Error {
  override readonly name = 'NotificationSignatureError';
}

export interface VerifyNotificationOptions {
  /** AGENT_NOTIFY_SECRET, as the workers have it. */
  secret: string;
  /** The request body exactly as received (before any JSON parsing). */
  body: string | Uint8Array;
  /** The request's headers (any case; Node's `req.headers` or a Fetch `Headers`). */
  headers: Record<string, string | string[] | undefined> | Headers;
  /** How old a signature may be, in seconds (default 300), so a recorded callback cannot be replayed later. */
  toleranceS?: number;
  nowMs?: number;
}

/**
 * Checks a callback's signature and age and returns its notification and delivery id; throws
 * NotificationSignatureError otherwise. Keep the delivery id: retries of one callback carry the same one.
 */
export function verifyNotification(options: VerifyNotificationOptions): {
  deliveryId: string;
  notification: FollowUpNotification;
} {
  const header = (name: string): string | undefined => {
    if (options.headers instanceof Headers) return options.headers.get(name) ?? undefined;
    const entry = Object.entries(options.headers).find(([key]) => key.toLowerCase() === name)?.[1];
    return Array.isArray(entry) ? entry[0] : entry;
  };
  const body = typeof options.body === 'string' ? options.body : Buffer.from(options.body).toString('utf8');
  const timestamp = header(TIMESTAMP_HEADER);
  const signature = header(SIGNATURE_HEADER);
  const deliveryId = header(DELIVERY_HEADER);
  if (!timestamp || !/^\d+$/.test(timestamp) || !signature || !deliveryId) {
    throw new NotificationSignatureError(
      `the callback lacks ${TIMESTAMP_HEADER}, ${SIGNATURE_HEADER} or ${DELIVERY_HEADER}`,
    );
  }
  const ageS = Math.abs((options.nowMs ?? Date.now()) / 1000 - Number(timestamp));
  if (ageS > (options.toleranceS ?? 300)) {
    throw new NotificationSignatureError(
      `the callback was signed ${Math.round(ageS)} s away from now: too old to trust`,
    );
  }
  const expected = Buffer.from(signNotification(options.secret, Number(timestamp), body));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
    throw new NotificationSignatureError('the callback signature does not match: another secret, or an altered body');
  }
  return { deliveryId, notification: JSON.parse(body) as FollowUpNotification };
}
