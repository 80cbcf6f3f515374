import { notifyProblem, inspectFollowUpInput } from '../../src/kernel/request';
import { ApplicationFailure } from '@temporalio/common';
import { loadWorkerConfig } from '../../src/config';
import { Webhook } from 'standardwebhooks';
import { notificationMismatch, type RecordedEnding } from '../../src/activities/notified-parent';
import type { FollowUpNotification, FollowUpResult } from '../../src/kernel/types';
import {
  DELIVERY_HEADER,
  NotificationSecretError,
  NotificationSignatureError,
  SIGNATURE_HEADER,
  signNotification,
  TIMESTAMP_HEADER,
  verifyNotification,
} from '../../src/notify/signature';

const SECRET = 'receiver-secret-0123456789';
const body = JSON.stringify({ workflowId: 'followup/p/j/1', outcome: 'completed' });
const nowMs = Date.parse('2026-11-28T12:00:00Z');
const signedAt = nowMs / 1000 - 10;
const headers = {
  [TIMESTAMP_HEADER]: String(signedAt),
  [SIGNATURE_HEADER]: signNotification(SECRET, 'followup/p/j/1/notify/run-1', signedAt, body),
  [DELIVERY_HEADER]: 'followup/p/j/1/notify/run-1',
};
// The Standard Webhooks form of a secret: whsec_ and the base64 of 32 random bytes.
const WHSEC = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

describe('callback signatures', () => {
  it('verify with the shared secret, whatever the header case, and give the delivery id', () => {
    const upper = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toUpperCase(), value]));
    expect(verifyNotification({ secret: SECRET, body, headers: upper, nowMs })).toEqual({
      deliveryId: 'followup/p/j/1/notify/run-1',
      notification: { workflowId: 'followup/p/j/1', outcome: 'completed' },
    });
    expect(
      verifyNotification({ secret: SECRET, body: Buffer.from(body), headers: new Headers(headers), nowMs }).deliveryId,
    ).toBe('followup/p/j/1/notify/run-1');
  });

  it('refuse another secret, an altered body, an old signature and missing headers', () => {
    const check = (options: Partial<Parameters<typeof verifyNotification>[0]>) => () =>
      verifyNotification({ secret: SECRET, body, headers, nowMs, ...options });
    expect(check({ secret: 'not-the-secret-0000000000000' })).toThrow(NotificationSignatureError);
    expect(check({ body: body.replace('completed', 'failed') })).toThrow(/does not match/);
    expect(check({ nowMs: nowMs + 600_000 })).toThrow(/too old to trust/);
    expect(check({ headers: { ...headers, [SIGNATURE_HEADER]: undefined } })).toThrow(/lacks/);
  });

  it('refuse a delivery re-labelled with another webhook-id: the id is signed with the body', () => {
    const relabelled = { ...headers, [DELIVERY_HEADER]: 'followup/p/j/2/notify/run-9' };
    expect(() => verifyNotification({ secret: SECRET, body, headers: relabelled, nowMs })).toThrow(
      /re-labelled delivery id/,
    );
  });

  it('refuse to verify or sign with an empty or short secret, saying how to make one', () => {
    for (const secret of ['', 'short-secret', 'whsec_c2hvcnQ=', 'whsec_not base64!']) {
      expect(() => verifyNotification({ secret, body, headers, nowMs })).toThrow(NotificationSecretError);
      expect(() => signNotification(secret, 'id', signedAt, body)).toThrow(/openssl rand -base64 32/);
    }
    expect(() => verifyNotification({ secret: '', body, headers, nowMs })).toThrow(/the callback secret is empty/);
  });

  it('are Standard Webhooks signatures: an off-the-shelf verifier takes ours, ours takes its', () => {
    const signed = {
      [DELIVERY_HEADER]: 'followup/p/j/1/notify/run-1',
      [TIMESTAMP_HEADER]: String(Math.floor(Date.now() / 1000)),
    };
    const ours = {
      ...signed,
      [SIGNATURE_HEADER]: signNotification(WHSEC, signed[DELIVERY_HEADER], Number(signed[TIMESTAMP_HEADER]), body),
    };
    expect(new Webhook(WHSEC).verify(body, ours)).toEqual(JSON.parse(body));
    // A raw (non-whsec_) secret is its UTF-8 bytes, as the library's raw format takes it.
    const raw = {
      ...signed,
      [SIGNATURE_HEADER]: signNotification(SECRET, signed[DELIVERY_HEADER], Number(signed[TIMESTAMP_HEADER]), body),
    };
    expect(new Webhook(SECRET, { format: 'raw' }).verify(body, raw)).toEqual(JSON.parse(body));
    const theirs = new Webhook(WHSEC).sign(
      signed[DELIVERY_HEADER],
      new Date(Number(signed[TIMESTAMP_HEADER]) * 1000),
      body,
    );
    expect(
      verifyNotification({ secret: WHSEC, body, headers: { ...signed, [SIGNATURE_HEADER]: theirs } }).deliveryId,
    ).toBe(signed[DELIVERY_HEADER]);
  });
});

describe('notify in the input', () => {
  it('takes an http(s) URL and nothing else', () => {
    expect(notifyProblem({ url: 'https://hooks.example.com/agent?team=web' })).toBeUndefined();
    expect(notifyProblem({ url: 'http://127.0.0.1:8080/hook' })).toBeUndefined();
    expect(notifyProblem('https://x')).toMatch(/must be an object/);
    expect(notifyProblem({ url: 'ftp://example.com' })).toMatch(/http:\/\/ or https:\/\//);
    expect(notifyProblem({ url: 'https://user:pw@example.com/' })).toMatch(/credentials/);
    expect(notifyProblem({ url: 'https://example.com/a b' })).toMatch(/without spaces/);
    expect(notifyProblem({ url: 'https://example.com', secret: 'x' })).toMatch(/unknown field/);
  });

  it('is carried into the request, null when not given', () => {
    const input = { projectId: 'p', jobId: 'j', prompt: 'x' };
    const plain = inspectFollowUpInput(input);
    const notified = inspectFollowUpInput({ ...input, notify: { url: 'https://hooks.example.com/a' } });
    expect(plain.ok && plain.request.notify).toBeNull();
    expect(notified.ok && notified.request.notify).toEqual({ url: 'https://hooks.example.com/a' });
  });
});

describe("a callback's notification against its follow-up's recorded ending", () => {
  const result = {
    job: { id: 'j', status: 'completed', prLink: 'https://github.com/o/r/pull/1' },
    outcome: 'completed',
    prLink: 'https://github.com/o/r/pull/1',
    sentAt: '2026-11-28T12:00:00.000Z',
    finishedAt: '2026-11-28T12:01:00.000Z',
  } as unknown as FollowUpResult;
  const notification: FollowUpNotification = {
    workflowId: 'followup/p/j/1',
    projectId: 'p',
    jobId: 'j',
    outcome: 'completed',
    prLink: result.prLink,
    job: result.job,
    sentAt: result.sentAt,
    finishedAt: result.finishedAt,
    failure: null,
  };
  const recorded = { projectId: 'p', jobId: 'j' };

  it('accepts the ending the follow-up recorded, result or failure', () => {
    expect(notificationMismatch('followup/p/j/1', recorded, { result }, notification)).toBeUndefined();
    const failure = ApplicationFailure.create({ type: 'AgentJobNotFound', message: 'no such job', nonRetryable: true });
    const failed = {
      ...notification,
      outcome: 'rejected' as const,
      failure: { type: 'AgentJobNotFound', message: 'no such job' },
    };
    expect(notificationMismatch('followup/p/j/1', recorded, { failure }, failed)).toBeUndefined();
  });

  it('refuses another PR, another follow-up, another project, a made-up result for a failure', () => {
    const check = (changed: Partial<FollowUpNotification>, ending: RecordedEnding = { result }) =>
      notificationMismatch('followup/p/j/1', recorded, ending, { ...notification, ...changed });
    expect(check({ prLink: 'https://evil.example/pull/666' })).toMatch(/result the follow-up returned/);
    expect(check({ workflowId: 'followup/p/j/2' })).toMatch(/its parent is followup\/p\/j\/1/);
    expect(check({ projectId: 'other' })).toMatch(/projectId/);
    const failure = ApplicationFailure.create({ type: 'AgentJobNotFound', message: 'no such job' });
    expect(check({}, { failure })).toMatch(/failure the follow-up ended with/);
  });
});

describe('AGENT_NOTIFY_SECRET on the workers', () => {
  const env = { AGENT_API_KEY: 'mint_test_not_a_real_key_0001' };
  it('takes a whsec_ secret or a raw one of 24 bytes or more, and refuses a short one at start-up', () => {
    expect(loadWorkerConfig({ ...env, AGENT_NOTIFY_SECRET: WHSEC }).notify.secret).toBe(WHSEC);
    expect(loadWorkerConfig({ ...env, AGENT_NOTIFY_SECRET: SECRET }).notify.secret).toBe(SECRET);
    expect(() => loadWorkerConfig({ ...env, AGENT_NOTIFY_SECRET: 'sixteen-chars-ok' })).toThrow(
      /AGENT_NOTIFY_SECRET[\s\S]*16 bytes, under the 24[\s\S]*openssl rand -base64 32/,
    );
  });
});
