import type { AgentJob } from '../../src/agent-api/schemas';
import { decideDelivery, isFreshTerminal } from '../../src/workflows/delivery';

function job(status: string, prLink: string | null = null, archivedAt: string | null = null): AgentJob {
  return { id: 'j', status, source: { repository: 'acme/r', ref: 'main' }, model: 'm', prLink, createdAt: '2026-01-01T00:00:00Z', archivedAt };
}

describe('decideDelivery after an ambiguous send', () => {
  test.each([
    ['a finished job that turned active took the message', job('completed', 'pr/1'), job('active'), 'delivered'],
    ['a failed job that turned active took the message', job('failed'), job('active'), 'delivered'],
    ['a job that ended again with a new pull request took it', job('completed', 'pr/1'), job('completed', 'pr/2'), 'delivered'],
    ['a job that went from failed to completed took it', job('failed'), job('completed'), 'delivered'],
    ['a finished job exactly as before did not take it', job('completed', 'pr/1'), job('completed', 'pr/1'), 'not-delivered'],
    ['a failed job exactly as before did not take it', job('failed'), job('failed'), 'not-delivered'],
    ['a job busy before cannot tell', job('active'), job('active'), 'unknown'],
    ['a busy job that finished cannot tell either', job('active'), job('completed', 'pr/3'), 'unknown'],
    ['an archived job stays archived either way', job('archived', null, 't'), job('archived', null, 't'), 'unknown'],
    ['an undocumented status before cannot tell', job('queued'), job('active'), 'unknown'],
    ['an undocumented status after cannot tell', job('completed'), job('queued'), 'unknown'],
  ] as const)('%s', (_name, before, after, decision) => {
    expect(decideDelivery(before, after)).toBe(decision);
  });
});

describe('isFreshTerminal', () => {
  const base = { sentAtMs: 1_000, nowMs: 2_000, settleWindowMs: 30_000, sawActive: false };

  test('a read that is not terminal is never a result', () => {
    expect(isFreshTerminal({ ...base, job: job('active'), snapshot: job('completed'), sawActive: true })).toBe(false);
  });

  test('a terminal read equal to the job before the send is stale until the settle window passes', () => {
    const snapshot = job('completed', 'pr/1');
    expect(isFreshTerminal({ ...base, job: job('completed', 'pr/1'), snapshot })).toBe(false);
    expect(isFreshTerminal({ ...base, job: job('completed', 'pr/1'), snapshot, nowMs: 31_000 })).toBe(true);
  });

  test('a terminal read after an active read is fresh', () => {
    expect(isFreshTerminal({ ...base, job: job('completed', 'pr/1'), snapshot: job('completed', 'pr/1'), sawActive: true })).toBe(true);
  });

  test('a terminal read that differs from the job before the send is fresh at once', () => {
    expect(isFreshTerminal({ ...base, job: job('completed', 'pr/2'), snapshot: job('completed', 'pr/1') })).toBe(true);
  });

  test('follow-ups without a snapshot (started by v0.1) accept the first terminal read, as v0.1 did', () => {
    expect(isFreshTerminal({ ...base, job: job('failed'), snapshot: undefined })).toBe(true);
  });
});
