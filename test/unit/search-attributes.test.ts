import type { AgentJob } from '../../src/kernel/agent-job';
import { failureKind } from '../../src/kernel/outcome-kind';
import { endingAttributeUpdates, jobAttributeUpdates, MAX_KEYWORD_LENGTH } from '../../src/kernel/search-attributes';

const ref = { projectId: 'proj-1', jobId: 'job-7' };
const job = (status: string, prLink: string | null = null): AgentJob => ({
  id: 'job-7',
  status,
  source: { repository: 'https://github.com/acme/site', ref: 'main' },
  model: 'agent-1',
  prLink,
  createdAt: '2026-11-23T10:00:00.000Z',
});

function names(
  updates: ReturnType<typeof jobAttributeUpdates> | ReturnType<typeof endingAttributeUpdates>,
): Record<string, unknown> {
  return Object.fromEntries(updates.map((pair) => [pair.key.name, pair.value]));
}

describe('jobAttributeUpdates', () => {
  test('fills in project and job when the start did not set them', () => {
    expect(names(jobAttributeUpdates(ref, null, {}))).toEqual({ AgentProjectId: 'proj-1', AgentJobId: 'job-7' });
  });

  test('upserts nothing when nothing changed, so a poll adds no history event', () => {
    const current = { projectId: 'proj-1', jobId: 'job-7', status: 'active' };
    expect(jobAttributeUpdates(ref, job('active'), current)).toEqual([]);
  });

  test('a new status is upserted, and the PR link once the job shows one', () => {
    const current = { projectId: 'proj-1', jobId: 'job-7', status: 'active' };
    expect(names(jobAttributeUpdates(ref, job('completed', 'https://github.com/a/b/pull/1'), current))).toEqual({
      AgentJobStatus: 'completed',
      AgentPrLink: 'https://github.com/a/b/pull/1',
    });
  });

  test('a PR link the attribute cannot hold is left out rather than failing the workflow task', () => {
    const longLink = `https://github.com/${'a'.repeat(MAX_KEYWORD_LENGTH)}/pull/1`;
    const updates = names(
      jobAttributeUpdates(ref, job('completed', longLink), { projectId: 'proj-1', jobId: 'job-7' }),
    );
    expect(updates).toEqual({ AgentJobStatus: 'completed' });
  });

  test('an undocumented status is stored as read, cut to the keyword limit', () => {
    const odd = 'x'.repeat(MAX_KEYWORD_LENGTH + 50);
    const updates = names(jobAttributeUpdates(ref, job(odd), { projectId: 'proj-1', jobId: 'job-7' }));
    expect(updates.AgentJobStatus).toBe('x'.repeat(MAX_KEYWORD_LENGTH));
  });
});

describe('endingAttributeUpdates', () => {
  test('a follow-up that ended on a terminal read sets its outcome and keeps the job status', () => {
    expect(names(endingAttributeUpdates('completed', 'completed'))).toEqual({ AgentFollowUpOutcome: 'completed' });
  });

  test.each(['timed-out', 'rejected', 'cancelled', 'error'] as const)(
    'a follow-up that ended %s while the job was active removes AgentJobStatus, so "active" finds only live follow-ups',
    (outcome) => {
      expect(names(endingAttributeUpdates(outcome, 'active'))).toEqual({
        AgentFollowUpOutcome: outcome,
        AgentJobStatus: null,
      });
    },
  );

  test('a follow-up that never read the job has no status to remove', () => {
    expect(names(endingAttributeUpdates('invalid-input', undefined))).toEqual({
      AgentFollowUpOutcome: 'invalid-input',
    });
  });
});

describe('failureKind', () => {
  test.each([
    ['FollowUpTimedOut', true, 'timed-out'],
    ['InvalidFollowUpInput', true, 'invalid-input'],
    ['FollowUpDeliveryUnknown', true, 'delivery-unknown'],
    ['AgentJobNotFound', true, 'rejected'],
    ['AgentApiServerError', false, 'error'],
    [undefined, false, 'error'],
  ] as const)('%s (non-retryable: %s) is %s', (type, nonRetryable, kind) => {
    expect(failureKind(type, nonRetryable)).toBe(kind);
  });
});
