import { renderProgressDetails } from '../../src/follow-up/progress-details';
import type { FollowUpProgress } from '../../src/follow-up/types';

const base: FollowUpProgress = {
  phase: 'polling',
  projectId: 'proj-1',
  jobId: 'job-7',
  lastStatus: 'active',
  lastStatusUnknown: false,
  polls: 3,
  pollErrors: 1,
  nextPollAt: '2026-11-23T10:00:05.000Z',
  lastError: 'HttpError: 503',
  sentAt: '2026-11-23T10:00:00.000Z',
  deadline: '2026-11-24T10:00:00.000Z',
  runs: 1,
  sendAttempts: 1,
  delivery: 'response',
  rateLimitedUntil: null,
  prLink: null,
};

describe('the current details shown in the Web UI', () => {
  test('a polling follow-up: phase, status, polls, send, next poll, deadline, last error', () => {
    expect(renderProgressDetails(base)).toBe(
      [
        '**Following the job**: job `job-7` in project `proj-1` is `active`.',
        '',
        '- Polls: 3 (1 failed)',
        '- Sent: 2026-11-23T10:00:00.000Z, 1 attempt',
        '- Next poll: 2026-11-23T10:00:05.000Z',
        '- Gives up at: 2026-11-24T10:00:00.000Z',
        '- Last error: HttpError: 503',
      ].join('\n'),
    );
  });

  test('a finished follow-up shows its pull request and the runs it took', () => {
    const text = renderProgressDetails({
      ...base,
      phase: 'finished',
      lastStatus: 'completed',
      nextPollAt: null,
      lastError: null,
      runs: 3,
      prLink: 'https://github.com/acme/site/pull/9',
    });
    expect(text).toContain('**Finished**: job `job-7` in project `proj-1` is `completed`.');
    expect(text).toContain('- Pull request: https://github.com/acme/site/pull/9');
    expect(text).toContain('over 3 runs (continued as new)');
    expect(text).not.toContain('Next poll');
  });

  test('before the first read, and with an undocumented status', () => {
    expect(renderProgressDetails({ ...base, phase: 'reading', lastStatus: null, sentAt: null, sendAttempts: 0 })).toContain(
      'is not read yet.',
    );
    expect(renderProgressDetails({ ...base, lastStatus: 'queued', lastStatusUnknown: true })).toContain('`queued` (undocumented)');
  });
});
