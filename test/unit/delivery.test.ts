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
  const before = job('completed', 'pr/1');
  const base = { sentAtMs: 1_000, readAtMs: 2_000, settleWindowMs: 30_000, sawActive: false, snapshot: before, previous: null };

  test('a read that is not terminal is never a result', () => {
    expect(isFreshTerminal({ ...base, job: job('active'), sawActive: true })).toBe(false);
  });

  test('a terminal read that differs from the job before the send is fresh at once', () => {
    expect(isFreshTerminal({ ...base, job: job('completed', 'pr/2') })).toBe(true);
  });

  test('a single read equal to the job before the send is never enough, even after an active read', () => {
    expect(isFreshTerminal({ ...base, job: job('completed', 'pr/1'), sawActive: true, previous: job('active') })).toBe(false);
  });

  test('the same result read twice in a row counts once the job was seen active', () => {
    expect(isFreshTerminal({ ...base, job: job('completed', 'pr/1'), sawActive: true, previous: job('completed', 'pr/1') })).toBe(true);
  });

  test('without an active read, the same result read twice counts only once the settle window had passed when it was asked for', () => {
    const twice = { ...base, job: job('completed', 'pr/1'), previous: job('completed', 'pr/1') };
    expect(isFreshTerminal(twice)).toBe(false);
    expect(isFreshTerminal({ ...twice, readAtMs: 31_000 })).toBe(true);
  });

  test('follow-ups without a snapshot (started by v0.1) accept the first terminal read, as v0.1 did', () => {
    expect(isFreshTerminal({ ...base, job: job('failed'), snapshot: undefined })).toBe(true);
  });
});

describe('decideDelivery and time', () => {
  test('an unchanged job read long after the attempt proves nothing: the agent may have finished the same way', () => {
    expect(decideDelivery(job('failed'), job('failed'), 5_000)).toBe('not-delivered');
    expect(decideDelivery(job('failed'), job('failed'), 31_000)).toBe('unknown');
  });
});
