import { sendAnswerOf } from '../../src/workflows/follow-up/send-answer';
import type { FollowUpProgress } from '../../src/kernel/types';

const base: Pick<FollowUpProgress, 'phase' | 'queue' | 'sentAt'> = { phase: 'starting', queue: null, sentAt: null };
const job = { id: 'j', status: 'active' } as never;

describe('the answer to "has it been sent?"', () => {
  it('waits (null) while checking in, reading or sending', () => {
    for (const phase of ['starting', 'sending'] as const)
      expect(sendAnswerOf({ ...base, phase }, null, null)).toBeNull();
    expect(sendAnswerOf({ ...base, phase: 'queued' }, null, null)).toBeNull();
  });

  it('is sent, with the job, once the send is known to have arrived, whatever the phase since', () => {
    const sentAt = '2026-11-28T12:00:00.000Z';
    expect(sendAnswerOf({ ...base, phase: 'waiting', sentAt }, job, null)).toEqual({ state: 'sent', sentAt, job });
    expect(sendAnswerOf({ ...base, phase: 'finished', sentAt }, job, 5)).toEqual({ state: 'sent', sentAt, job });
  });

  it('is queued with a place in line counting the one ahead, and when the budget frees a slot', () => {
    expect(
      sendAnswerOf({ ...base, phase: 'queued', queue: { reason: 'lane', jobId: 'j', ahead: 1 } }, null, null),
    ).toEqual({ state: 'queued', reason: 'lane', position: 2, nextSlotAt: null });
    const budget = {
      reason: 'budget' as const,
      sentInWindow: 80,
      limit: 80,
      windowMs: 3_600_000,
      nextSlotAt: '2026-11-28T14:05:00.000Z',
      ahead: 0,
    };
    expect(sendAnswerOf({ ...base, phase: 'queued', queue: budget }, null, null)).toEqual({
      state: 'queued',
      reason: 'budget',
      position: 1,
      nextSlotAt: '2026-11-28T14:05:00.000Z',
    });
  });

  it('says job-busy, retry (with when) and reconciling for the other waits before a send', () => {
    expect(sendAnswerOf({ ...base, phase: 'waiting-for-idle' }, job, null)).toMatchObject({ reason: 'job-busy' });
    expect(sendAnswerOf(base, null, Date.parse('2026-11-28T12:00:02.000Z'))).toEqual({
      state: 'queued',
      reason: 'retry',
      position: null,
      nextSlotAt: '2026-11-28T12:00:02.000Z',
    });
    expect(sendAnswerOf({ ...base, phase: 'reconciling' }, job, null)).toEqual({ state: 'reconciling' });
  });
});
