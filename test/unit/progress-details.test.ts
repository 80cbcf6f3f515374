import { readsLine, renderProgressDetails } from '../../src/workflows/follow-up/progress-details';
import type { FollowUpProgress } from '../../src/kernel/types';
import { budgetPastDeadline, queuedLine } from '../../src/kernel/words';

const base: FollowUpProgress = {
  phase: 'waiting',
  projectId: 'proj-1',
  jobId: 'job-7',
  lastStatus: 'active',
  lastStatusUnknown: false,
  waitingFor: 'work',
  queue: null,
  polls: 3,
  lastError: 'AgentApiServerError: 503',
  errorsSince: '2026-11-23T10:01:05.000Z',
  sentAt: '2026-11-23T10:00:00.000Z',
  deadline: '2026-11-24T10:00:00.000Z',
  runs: 1,
  sendAttempts: 1,
  delivery: 'response',
  prLink: null,
  outcome: null,
};

describe('the current details shown in the Web UI', () => {
  test('a waiting follow-up: phase, status, reads, send, deadline, last error', () => {
    expect(renderProgressDetails(base)).toBe(
      [
        '**Waiting for the job to end**: job `job-7` in project `proj-1` is `active`.',
        '',
        '- **Calls to the agent API are failing since 10:01:05 UTC**: AgentApiServerError: 503',
        '- Sent: 2026-11-23T10:00:00.000Z, 1 attempt',
        '- Gives up at: 2026-11-24T10:00:00.000Z',
        '- Reads reported: 3 (polls that change nothing: see Pending Activities)',
      ].join('\n'),
    );
  });

  test('watched by a shared watcher, a healthy wait says it waits and who reads for it; a failing one leads with the errors', () => {
    const watcherId = 'agent-followup-watch/q/1';
    expect(renderProgressDetails({ ...base, lastError: null, errorsSince: null, watcherId })).toBe(
      [
        '**Waiting for the job to end**: job `job-7` in project `proj-1` is `active`.',
        '',
        "- Read by the job watcher `agent-followup-watch/q/1` (no activity of its own); live figures, failed reads and the reads that change nothing: `agent-followup status`, or the watcher's Update `watchFigures` with this id",
        '- Sent: 2026-11-23T10:00:00.000Z, 1 attempt',
        '- Gives up at: 2026-11-24T10:00:00.000Z',
        '- Reads reported: 3 (reads that change nothing: `agent-followup status`)',
      ].join('\n'),
    );
    const failing = renderProgressDetails({ ...base, watcherId }).split('\n');
    expect(failing[0]).toBe('**Reading the job fails since 10:01:05 UTC**: AgentApiServerError: 503');
    expect(failing[2]).toBe('Still waiting for the job `job-7` in project `proj-1` to end; last read as `active`.');
    expect(failing.filter((line) => line.includes('AgentApiServerError'))).toHaveLength(1);
    // The count the watcher last told (it tells again as the count doubles): at least that many.
    expect(renderProgressDetails({ ...base, watcherId, failedReads: 8 }).split('\n')[0]).toBe(
      '**Reading the job fails since 10:01:05 UTC, 8+ reads failed**: AgentApiServerError: 503',
    );
  });

  test('a finished follow-up shows its pull request and the runs it took, and no longer a deadline', () => {
    const text = renderProgressDetails({
      ...base,
      phase: 'finished',
      lastStatus: 'completed',
      lastError: null,
      runs: 3,
      prLink: 'https://github.com/acme/site/pull/9',
    });
    expect(text).toContain('**Finished**: job `job-7` in project `proj-1` is `completed`.');
    expect(text).toContain('- Pull request: https://github.com/acme/site/pull/9');
    expect(text).toContain('over 3 runs (continued as new)');
    expect(text).not.toContain('Gives up at');
  });

  test.each(['timed-out', 'cancelled', 'failed'] as const)(
    'a follow-up that ended %s shows no deadline either',
    (phase) => {
      expect(renderProgressDetails({ ...base, phase })).not.toContain('Gives up at');
    },
  );

  test("a failed follow-up leads with the failure's own type and message, then the job's last read and the outcome", () => {
    const text = renderProgressDetails({
      ...base,
      phase: 'failed',
      lastStatus: null,
      sentAt: null,
      sendAttempts: 0,
      lastError: 'AgentJobNotFound: job job-999 was not found in project acme-web',
      outcome: 'rejected',
    });
    expect(text.split('\n')[0]).toBe('**Failed**: AgentJobNotFound: job job-999 was not found in project acme-web');
    expect(text).toContain('The job `job-7` in project `proj-1` was not sent the message.');
    expect(renderProgressDetails({ ...base, phase: 'failed', outcome: 'error' })).toContain(
      'was last read as `active`.',
    );
    expect(text).toContain('- Outcome: `rejected` (search attribute AgentFollowUpOutcome)');
    expect(text).not.toContain('Calls to the agent API');
  });

  test('a follow-up that timed out while calls failed says they were failing', () => {
    expect(renderProgressDetails({ ...base, phase: 'timed-out' })).toContain(
      '**Calls to the agent API were failing since 10:01:05 UTC**: AgentApiServerError: 503',
    );
    expect(renderProgressDetails({ ...base, lastError: null, errorsSince: null })).not.toContain('failing');
  });

  test('a running follow-up names no outcome', () => {
    expect(renderProgressDetails(base)).not.toContain('Outcome');
  });

  test('a terminal read that is not yet this follow-up’s own says what it waits for', () => {
    expect(renderProgressDetails({ ...base, lastStatus: 'completed', waitingFor: 'settle' })).toContain(
      'waiting out the settle window',
    );
    expect(renderProgressDetails({ ...base, lastStatus: 'completed', waitingFor: 'confirmation' })).toContain(
      'reading it once more',
    );
    // While the job is still active there is no result to confirm, so nothing is said about confirming one.
    expect(renderProgressDetails({ ...base, lastStatus: 'active', waitingFor: 'settle' })).not.toContain(
      'settle window',
    );
  });

  test('how the message arrived is named when it was not by the send’s answer', () => {
    expect(renderProgressDetails({ ...base, delivery: 'reconciled' })).toContain('(confirmed by reading the job)');
    expect(renderProgressDetails({ ...base, delivery: 'earlier-run' })).toContain(
      '(by an earlier run of this follow-up)',
    );
  });

  test("a follow-up queued in its job's lane says how many go first", () => {
    const text = renderProgressDetails({
      ...base,
      phase: 'queued',
      queue: { reason: 'lane', jobId: 'job-7', ahead: 2 },
      sentAt: null,
      sendAttempts: 0,
      lastStatus: null,
    });
    expect(text).toContain('**Waiting behind 2 follow-ups to job job-7** in project `proj-1`');
    expect(text).toContain('Gives up at: 2026-11-24T10:00:00.000Z');
    expect(renderProgressDetails({ ...base, phase: 'queued', queue: null })).toContain(
      'Checking in with the coordinator of project proj-1',
    );
  });

  test("a follow-up waiting for the project's send budget says how full the window is and when its slot comes", () => {
    const queue = {
      reason: 'budget',
      sentInWindow: 80,
      limit: 80,
      windowMs: 3_600_000,
      nextSlotAt: '2026-11-24T14:05:00.000Z',
      ahead: 2,
    } as const;
    const nowMs = Date.parse('2026-11-24T14:01:48.000Z');
    expect(queuedLine({ projectId: 'proj-1', jobId: 'job-7', queue }, nowMs)).toBe(
      "Waiting for the project's send budget: 80 of 80 sent in the last hour, next slot 14:05:00 UTC (in 3m12s); 2 follow-ups ahead",
    );
    const text = renderProgressDetails({ ...base, phase: 'queued', queue, sentAt: null, sendAttempts: 1 });
    expect(text).toContain('at most 80 sends per project in any hour');
    expect(text).toContain('Send attempts so far: 1');
  });

  test("an ended follow-up that left a watched wait unanswered says its count lacks the watcher's reads", () => {
    const left = renderProgressDetails({ ...base, phase: 'cancelled', watcherId: null, leftWatchedWait: true });
    expect(left).toContain("its watcher's reads of the wait it left unanswered are not counted");
    expect(renderProgressDetails({ ...base, phase: 'cancelled', watcherId: null })).not.toContain('not counted');
  });

  test('a budget count told a while ago says when it was counted; a fresh one does not, but the Web UI always does', () => {
    const queue = {
      reason: 'budget',
      sentInWindow: 33,
      limit: 80,
      windowMs: 3_600_000,
      nextSlotAt: '2026-11-24T15:00:00.000Z',
      ahead: 47,
      countedAt: '2026-11-24T14:01:10.000Z',
    } as const;
    const waiting = { projectId: 'proj-1', jobId: 'job-7', queue };
    expect(queuedLine(waiting, Date.parse('2026-11-24T14:01:12.000Z'))).toBe(
      "Waiting for the project's send budget: 33 of 80 sent in the last hour, next slot 15:00:00 UTC (in 58m48s); 47 follow-ups ahead",
    );
    expect(queuedLine(waiting, Date.parse('2026-11-24T14:01:45.000Z'))).toBe(
      "Waiting for the project's send budget: 33 of 80 sent in the last hour, next slot 15:00:00 UTC (in 58m15s); 47 follow-ups ahead (counted 14:01:10 UTC)",
    );
    expect(queuedLine(waiting, Date.parse('2026-11-24T14:01:12.000Z'), { stays: true })).toContain(
      '(counted 14:01:10 UTC)',
    );
    const text = renderProgressDetails({ ...base, phase: 'queued', queue, sentAt: null, sendAttempts: 0 });
    expect(text).toContain('47 follow-ups ahead (counted 14:01:10 UTC)');
  });

  test('a follow-up waiting while the API refuses the project says since when and when the next probe goes, and blames no budget', () => {
    const queue = {
      reason: 'budget',
      sentInWindow: 61,
      limit: 80,
      windowMs: 3_600_000,
      nextSlotAt: '2026-11-24T14:03:11.000Z',
      ahead: 3,
      refusedSince: '2026-11-24T14:02:11.000Z',
    } as const;
    const nowMs = Date.parse('2026-11-24T14:02:26.000Z');
    expect(queuedLine({ projectId: 'proj-1', jobId: 'job-7', queue }, nowMs)).toBe(
      'The agent API refused sends for project proj-1 since 14:02:11 UTC; next probe 14:03:11 UTC (in 45s); 3 follow-ups ahead',
    );
    const late = { ...base, phase: 'queued', queue, sentAt: null, deadline: '2026-11-24T14:03:00.000Z' } as const;
    expect(budgetPastDeadline(late)).toBeNull();
    expect(renderProgressDetails(late)).toContain('until one probe is accepted');
  });

  test('a budget wait whose next slot comes after the deadline says it will time out first, and what would let it send', () => {
    const queue = {
      reason: 'budget',
      sentInWindow: 80,
      limit: 80,
      windowMs: 3_600_000,
      nextSlotAt: '2026-11-24T10:05:00.000Z',
      ahead: 0,
    } as const;
    const late = renderProgressDetails({
      ...base,
      phase: 'queued',
      queue,
      sentAt: null,
      deadline: '2026-11-24T10:00:00.000Z',
    });
    expect(late).toContain(
      "**Will time out first.** The project's next send slot comes after this follow-up's deadline " +
        "(2026-11-24T10:00:00.000Z): it will time out without sending. To send it, raise the project's budget " +
        "(`agent-followup budget set --project proj-1 --sends-per-hour N`, at most the vendor's 100 per hour) or start " +
        'it again with a longer `--timeout`.',
    );
    // In time, no slot counted, a wait for the job's lane or no deadline: nothing said.
    for (const progress of [
      { queue, deadline: '2026-11-24T10:05:00.000Z' },
      { queue: { ...queue, nextSlotAt: null }, deadline: '2026-11-24T10:00:00.000Z' },
      { queue: { reason: 'lane', jobId: 'job-7', ahead: 1 } as const, deadline: '2026-11-24T10:00:00.000Z' },
      { queue, deadline: null },
    ]) {
      expect(budgetPastDeadline({ projectId: 'proj-1', ...progress })).toBeNull();
      expect(renderProgressDetails({ ...base, phase: 'queued', sentAt: null, ...progress })).not.toContain('time out');
    }
  });

  test("a follow-up cancelled inside the settle window does not show the job's ending as its result", () => {
    const cancelled = {
      ...base,
      phase: 'cancelled',
      lastStatus: 'completed',
      waitingFor: null,
      lastError: null,
      prLink: 'https://github.com/acme/web/pull/9',
      outcome: 'cancelled',
    } as const;
    const lines = renderProgressDetails(cancelled).split('\n');
    expect(lines[0]).toBe(
      "**Cancelled**: job `job-7` in project `proj-1` was last read as `completed`, not confirmed as this follow-up's result.",
    );
    expect(lines).toContain(
      "- Pull request on the job (not confirmed as this follow-up's): https://github.com/acme/web/pull/9",
    );
    // Finished, the same read is its result.
    expect(renderProgressDetails({ ...cancelled, phase: 'finished', outcome: 'completed' }).split('\n')).toContain(
      '- Pull request: https://github.com/acme/web/pull/9',
    );
  });

  test('before the message nothing of the job is shown (its status is that of earlier work); a busy job, an undocumented status', () => {
    expect(
      renderProgressDetails({ ...base, phase: 'starting', lastStatus: null, sentAt: null, sendAttempts: 0 }),
    ).toContain("**Starting**: job `job-7` in project `proj-1`, before this follow-up's message.");
    expect(renderProgressDetails({ ...base, lastStatus: null })).toContain(
      '**Waiting for the job to end**: job `job-7` in project `proj-1`, not read since the message.',
    );
    expect(renderProgressDetails({ ...base, phase: 'waiting-for-idle', sentAt: null, sendAttempts: 0 })).toContain(
      'Waiting for the job to finish its earlier work before sending',
    );
    expect(renderProgressDetails({ ...base, lastStatus: 'queued', lastStatusUnknown: true })).toContain(
      '`queued` (undocumented)',
    );
  });
});

describe('the last read and the next ones, under the headline', () => {
  // A wait started at 10:00:00 on 5 s ×2 ≤ 60 s, giving up at 11:00:00: reads at :05, :15, :35, 10:01:15, then every minute.
  const startedAtMs = Date.parse('2026-11-23T10:00:00.000Z');
  const schedule = {
    startedAtMs,
    initialIntervalMs: 5_000,
    backoffCoefficient: 2,
    maxIntervalMs: 60_000,
    deadlineMs: startedAtMs + 3_600_000,
  };

  test('a watched wait shows the last read told and the next three, then the cadence to the deadline, first', () => {
    const lines = renderProgressDetails(
      { ...base, lastError: null, errorsSince: null, watcherId: 'w', lastReadAt: '2026-11-23T10:00:05.120Z' },
      { schedule, nowMs: startedAtMs + 5_200 },
    ).split('\n');
    expect(lines[2]).toBe(
      '- Last read told 10:00:05 UTC (`active`); next planned as of 10:00:05: 10:00:15, 10:00:35, 10:01:15 UTC, then at most 1m apart until 11:00:00 UTC',
    );
  });

  test('before the cap and after it no gap is longer than the cap; near the deadline the last read is on it; none left says so', () => {
    expect(readsLine({ lastReadAt: null, lastStatus: null }, { schedule, nowMs: startedAtMs })).toBe(
      '- No read told yet; next planned as of 10:00:00: 10:00:05, 10:00:15, 10:00:35 UTC, then at most 1m apart until 11:00:00 UTC',
    );
    expect(readsLine({ lastReadAt: null, lastStatus: null }, { schedule, nowMs: schedule.deadlineMs - 150_000 })).toBe(
      '- No read told yet; next planned as of 10:57:30: 10:58:00, 10:59:00, 11:00:00 UTC',
    );
    expect(readsLine({ lastReadAt: null, lastStatus: null }, { schedule, nowMs: schedule.deadlineMs - 200_000 })).toBe(
      '- No read told yet; next planned as of 10:56:40: 10:57:00, 10:58:00, 10:59:00 UTC, then 11:00:00 UTC (the deadline)',
    );
    expect(readsLine({ lastReadAt: null, lastStatus: null }, { schedule, nowMs: schedule.deadlineMs })).toBe(
      '- No read told yet; no read planned before the deadline',
    );
  });

  test('only while waiting: a finished follow-up has no next read', () => {
    const finished = renderProgressDetails(
      { ...base, phase: 'finished', lastReadAt: '2026-11-23T10:00:05.120Z' },
      { schedule, nowMs: startedAtMs + 5_200 },
    );
    expect(finished).not.toContain('next planned');
  });
});
