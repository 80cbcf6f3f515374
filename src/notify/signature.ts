/**
 * Signed callbacks in the Standard Webhooks form (https://www.standardwebhooks.com): `webhook-id`,
 * `webhook-timestamp` and `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>">`, so the delivery
 * id and the time are signed with the body and any Standard Webhooks (or Svix) verifier checks our callbacks.
 *
 * The key is AGENT_NOTIFY_SECRET: a `whsec_<base64>` secret is the base64-decoded bytes (as the spec says); any other
 * value is taken as its UTF-8 bytes (off-the-shelf verifiers: pass it raw, e.g. `new Webhook(secret, { format: 'raw' })`).
 * Either way it must be at least 24 bytes (the spec's lower bound), or nothing is signed or verified.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FollowUpNotification } from '../kernel/types';

/** The delivery id: the same on every attempt of one follow-up's callback, so a receiver acts once. */
export const DELIVERY_HEADER = 'webhook-id';
/** Unix seconds when this attempt was signed (each attempt is signed anew). */
export const TIMESTAMP_HEADER = 'webhook-timestamp';
/** `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`; a receiver may see several, space-separated. */
export const SIGNATURE_HEADER = 'webhook-signature';

/** The spec's shortest key: 24 bytes (192 bits). */
export const MIN_SECRET_BYTES = 24;
const SECRET_PREFIX = 'whsec_';
const HOW_TO_MAKE_ONE =
  'make one with `echo "whsec_$(openssl rand -base64 32)"` and give the same value to the workers (AGENT_NOTIFY_SECRET) and the receiver';

/** A callback secret that cannot sign: empty, short, or a `whsec_` value that is not base64. */
export class NotificationSecretError extends Error {
  override readonly name = 'NotificationSecretError';
}

/** The HMAC key of a callback secret; throws NotificationSecretError, saying how to make a good one. */
export function notificationKey(secret: string): Buffer {
  if (typeof secret !== 'string' || secret.length === 0) {
    throw new NotificationSecretError(`the callback secret is empty: ${HOW_TO_MAKE_ONE}`);
  }
  let key: Buffer;
  if (secret.startsWith(SECRET_PREFIX)) {
    const encoded = secret.slice(SECRET_PREFIX.length);
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) {
      throw new NotificationSecretError(
        `the callback secret starts with whsec_ but the rest is not base64: ${HOW_TO_MAKE_ONE}`,
      );
    }
    key = Buffer.from(encoded, 'base64');
  } else {
    key = Buffer.from(secret, 'utf8');
  }
  if (key.length < MIN_SECRET_BYTES) {
    throw new NotificationSecretError(
      `the callback secret is ${key.length} bytes, under the ${MIN_SECRET_BYTES} the Standard Webhooks spec asks for: ${HOW_TO_MAKE_ONE}`,
    );
  }
  return key;
}

/** The `webhook-signature` value for a body with this delivery id, signed at `timestampS`. */
export function signNotification(secret: string, deliveryId: string, timestampS: number, body: string): string {
  const mac = createHmac('sha256', notificationKey(secret)).update(`${deliveryId}.${timestampS}.${body}`);
  return `v1,${mac.digest('base64')}`;
}

/** A callback that is not ours, altered, re-labelled or too old to trust: nothing in it should be acted on. */
export class NotificationSignatureError extends Error {
  override readonly name = 'NotificationSignatureError';
}

export interface VerifyNotificationOptions {
  /** AGENT_NOTIFY_SECRET, as the workers have it (at least 24 bytes; `whsec_<base64>` or raw). */
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
 * Checks a callback's signature (over its delivery id, timestamp and body) and age, and returns its notification and
 * delivery id; throws NotificationSignatureError otherwise, NotificationSecretError for an empty or short secret.
 * Keep the delivery id: retries of one callback carry the same one.
 */
export function verifyNotification(options: VerifyNotificationOptions): {
  deliveryId: string;
  notification: FollowUpNotification;
} {
  const key = notificationKey(options.secret);
  const header = (name: string): string | undefined => {
    if (options.headers instanceof Headers) return options.headers.get(name) ?? undefined;
    const entry = Object.entries(options.headers).find(([each]) => each.toLowerCase() === name)?.[1];
    return Array.isArray(entry) ? entry[0] : entry;
  };
  const body = typeof options.body === 'string' ? options.body : Buffer.from(options.body).toString('utf8');
  const timestamp = header(TIMESTAMP_HEADER);
  const signatures = header(SIGNATURE_HEADER);
  const deliveryId = header(DELIVERY_HEADER);
  if (!timestamp || !/^\d+$/.test(timestamp) || !signatures || !deliveryId) {
    throw new NotificationSignatureError(
      `the callback lacks ${DELIVERY_HEADER}, ${TIMESTAMP_HEADER} or ${SIGNATURE_HEADER}`,
    );
  }
  const ageS = Math.abs((options.nowMs ?? Date.now()) / 1000 - Number(timestamp));
  if (ageS > (options.toleranceS ?? 300)) {
    throw new NotificationSignatureError(
      `the callback was signed ${Math.round(ageS)} s away from now: too old to trust`,
    );
  }
  const expected = createHmac('sha256', key).update(`${deliveryId}.${timestamp}.${body}`).digest();
  const matches = signatures.split(' ').some((each) => {
    const [version, value] = each.split(',', 2);
    if (version !== 'v1' || value === undefined) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) {
    throw new NotificationSignatureError(
      'the callback signature does not match: another secret, an altered body or a re-labelled delivery id',
    );
  }
  return { deliveryId, notification: JSON.parse(body) as FollowUpNotification };
}
