import { peakRunsPerHour } from '../../src/schedules/cadence';
import { DEFAULT_POLLING } from '../../src/kernel/request';
import { ScheduleOverlapPolicy } from '@temporalio/client';
import { followUpWorkflowId } from '../../src/client';
import { followUpStartMetadata } from '../../src/client/start-metadata';
import {
  buildScheduleOptions,
  checkScheduleRequest,
  cronPolicyProblems,
  DEFAULT_CATCHUP_WINDOW_MS,
  followUpScheduleId,
  InvalidScheduleError,
  isKnownTimeZone,
  type CheckedScheduleRequest,
} from '../../src/schedules';
import { noteOf, pauseReason } from '../../src/schedules/views';
import { FOLLOW_UP_WORKFLOW_TYPE } from '../../src/kernel/workflow-ids';

const input = { projectId: 'proj-1', jobId: 'job-7', prompt: 'Bump the dependencies' };

function problemsOf(request: unknown, maxPromptLength?: number): string {
  try {
    checkScheduleRequest(request, maxPromptLength);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidScheduleError);
    return (error as Error).message;
  }
  throw new Error('expected the request to be refused');
}

describe('checkScheduleRequest', () => {
  test('applies the defaults: skip overlap, a 10 minute catch-up window, pause on failure, UTC, not paused', () => {
    const checked = checkScheduleRequest({ input, cron: '0 9 * * MON-FRI' });
    expect(checked).toEqual<CheckedScheduleRequest>({
      scheduleId: followUpScheduleId(input),
      input,
      parsedInput: { ...input, polling: { ...DEFAULT_POLLING }, onAmbiguousSend: 'reconcile', notify: null },
      spec: { cron: '0 9 * * MON-FRI', timezone: 'UTC' },
      paused: false,
      overlap: 'skip',
      catchupWindowMs: DEFAULT_CATCHUP_WINDOW_MS,
      pauseOnFailure: true,
    });
    expect(DEFAULT_CATCHUP_WINDOW_MS).toBe(10 * 60 * 1000);
  });

  test('takes an interval with an offset, in Temporal duration strings or milliseconds', () => {
    expect(checkScheduleRequest({ input, every: '1d', offset: '9h' }).spec).toEqual({
      everyMs: 86_400_000,
      offsetMs: 32_400_000,
    });
    expect(checkScheduleRequest({ input, every: 3_600_000 }).spec).toEqual({ everyMs: 3_600_000, offsetMs: 0 });
  });

  test('keeps the caller input as given for the runs and the parsed one for ids and metadata', () => {
    const given = { ...input, polling: { initialInterval: '10s', timeout: '2h' } };
    const checked = checkScheduleRequest({ input: given, every: '1h' });
    expect(checked.input).toBe(given);
    expect(checked.parsedInput.polling).toEqual({
      ...DEFAULT_POLLING,
      initialIntervalMs: 10_000,
      timeoutMs: 7_200_000,
    });
  });

  test('accepts every option a caller may set', () => {
    const checked = checkScheduleRequest({
      scheduleId: 'nightly-deps',
      input,
      cron: '30 2 * * *',
      timezone: 'Europe/Berlin',
      note: 'nightly dependency bumps',
      paused: true,
      overlap: 'buffer-one',
      catchupWindow: '1h',
      pauseOnFailure: false,
    });
    expect(checked).toMatchObject({
      scheduleId: 'nightly-deps',
      spec: { cron: '30 2 * * *', timezone: 'Europe/Berlin' },
      note: 'nightly dependency bumps',
      paused: true,
      overlap: 'buffer-one',
      catchupWindowMs: 3_600_000,
      pauseOnFailure: false,
    });
  });

  test('refuses a request with neither cron nor every, and one with both', () => {
    expect(problemsOf({ input })).toContain('cron: give either cron (e.g. "0 9 * * MON-FRI") or every (e.g. "1h")');
    expect(problemsOf({ input, cron: '@daily', every: '1h' })).toContain('every: give either cron or every, not both');
  });

  test('lists every problem at once, each with its field, including the follow-up input', () => {
    const message = problemsOf({
      scheduleId: 'bad id',
      input: { projectId: 'p', jobId: 'a/b', prompt: '' },
      every: '10s',
      timezone: 'Mars/Olympus',
      overlap: 'allow-all',
      catchupWindow: '1s',
    });
    expect(message).toMatch(/^Invalid schedule: /);
    expect(message).toContain("scheduleId may contain only letters, digits, '.', '_', ':' and '-'");
    expect(message).toContain('input.jobId may contain only');
    expect(message).toContain('input.prompt must not be empty');
    expect(message).toContain('every must be between 1m and 366d (got "10s")');
    expect(message).toContain('timezone is not a known IANA time zone');
    expect(message).toContain('overlap must be one of skip, buffer-one');
    expect(message).toContain('catchupWindow must be between 10s and 365d (got "1s")');
  });

  test('refuses a timezone with an interval, which would change nothing', () => {
    expect(problemsOf({ input, every: '1d', timezone: 'Europe/Berlin' })).toContain('timezone applies to cron only');
  });

  test('refuses an offset without an interval or not below it', () => {
    expect(problemsOf({ input, cron: '@daily', offset: '1h' })).toContain('offset applies to every only');
    expect(problemsOf({ input, every: '1h', offset: '1h' })).toContain('offset (1h) must be below every (1h)');
  });

  test('refuses durations that are not whole seconds, or not durations at all', () => {
    expect(problemsOf({ input, every: 90_500 })).toContain('every must be a whole number of seconds');
    expect(problemsOf({ input, every: 'hourly' })).toContain('every is not a duration: "hourly"');
  });

  test('refuses unknown fields and a missing input', () => {
    expect(problemsOf({ input, cron: '@daily', jitter: '1m' })).toContain('unknown field(s) "jitter"');
    expect(problemsOf({ cron: '@daily' })).toContain('input');
  });

  test('honours a lower prompt limit', () => {
    expect(problemsOf({ input: { ...input, prompt: 'x'.repeat(11) }, cron: '@daily' }, 10)).toContain(
      'input.prompt must be at most 10 characters',
    );
  });

  test('refuses a note over 1000 characters', () => {
    expect(problemsOf({ input, cron: '@daily', note: 'n'.repeat(1001) })).toContain(
      'note must be at most 1000 characters',
    );
  });
});

describe('cronPolicyProblems', () => {
  test.each(['0 9 * * MON-FRI', '*/15 * * * *', '0 0 1 1 * 2030', '30 0 9 * * * *', '@daily', '0 9 * * * # morning'])(
    'lets %s through to Temporal',
    (cron) => {
      expect(cronPolicyProblems(cron)).toEqual([]);
    },
  );

  test.each([
    ['', 'is empty'],
    ['  # only a comment', 'is empty'],
    ['* * * * * * *', 'follow-ups more often than once a minute are refused'],
    ['*/10 * * * * * *', 'follow-ups more often than once a minute are refused'],
    ['@every 1h', '@every is not accepted here'],
    ['CRON_TZ=Europe/Berlin 0 9 * * *', 'give timezone instead'],
    ['TZ=UTC 0 9 * * *', 'give timezone instead'],
  ])('refuses %j: %s', (cron, problem) => {
    expect(cronPolicyProblems(cron).join('; ')).toContain(problem);
  });

  test("leaves the syntax to Temporal's own check (a field out of range is the server's to refuse)", () => {
    expect(cronPolicyProblems('0 25 * * *')).toEqual([]);
  });
});

describe('isKnownTimeZone', () => {
  test.each(['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata'])('knows %s', (zone) =>
    expect(isKnownTimeZone(zone)).toBe(true),
  );
  test.each(['Mars/Olympus', 'Europe/Berlinn', ''])('does not know %j', (zone) =>
    expect(isKnownTimeZone(zone)).toBe(false),
  );
});

describe('followUpScheduleId', () => {
  test('is the same for the same project, job and prompt, and differs for another prompt', () => {
    expect(followUpScheduleId(input)).toBe(followUpScheduleId({ ...input }));
    expect(followUpScheduleId(input)).toMatch(/^agent-followup-schedule\/proj-1\/job-7\/[0-9a-f]{16}$/);
    expect(followUpScheduleId({ ...input, prompt: 'Something else' })).not.toBe(followUpScheduleId(input));
  });

  test('two jobs whose ids joined with "-" read the same get different schedule and workflow ids', () => {
    const one = { projectId: 'acme', jobId: 'web-X', prompt: 'Same prompt' };
    const other = { projectId: 'acme-web', jobId: 'X', prompt: 'Same prompt' };
    expect(followUpScheduleId(one)).not.toBe(followUpScheduleId(other));
    expect(followUpWorkflowId(one)).not.toBe(followUpWorkflowId(other));
    expect(followUpWorkflowId(one)).toMatch(/^agent-followup\/acme\/web-X\/[0-9a-f]{16}$/);
    expect(followUpWorkflowId(one)).toBe(followUpWorkflowId({ ...one }));
  });
});

describe('buildScheduleOptions', () => {
  test('starts the follow-up workflow with the input as given and the same metadata as a start by hand', () => {
    const given = { ...input, polling: { initialInterval: '10s' } };
    const checked = checkScheduleRequest({
      input: given,
      cron: '0 9 * * MON-FRI',
      timezone: 'Europe/Berlin',
      note: 'weekday mornings',
    });
    const options = buildScheduleOptions(checked, 'agent-followup');
    expect(options.scheduleId).toBe(followUpScheduleId(input));
    expect(options.spec).toEqual({ cronExpressions: ['0 9 * * MON-FRI'], timezone: 'Europe/Berlin' });
    expect(options.action).toEqual({
      type: 'startWorkflow',
      workflowType: FOLLOW_UP_WORKFLOW_TYPE,
      taskQueue: 'agent-followup',
      workflowId: followUpWorkflowId(input),
      args: [given],
      ...followUpStartMetadata(checked.parsedInput),
    });
    expect(options.state).toEqual({ paused: false, note: 'weekday mornings' });
    expect(options.memo).toEqual({
      agentFollowUpSpec: { cron: '0 9 * * MON-FRI', timezone: 'Europe/Berlin' },
      agentFollowUpNote: 'weekday mornings',
    });
    expect(options.typedSearchAttributes).toEqual([
      { key: expect.objectContaining({ name: 'AgentProjectId' }), value: 'proj-1' },
      { key: expect.objectContaining({ name: 'AgentJobId' }), value: 'job-7' },
    ]);
  });

  test('sets every policy explicitly: overlap SKIP, the catch-up window and pause on failure', () => {
    const options = buildScheduleOptions(checkScheduleRequest({ input, every: '1h' }), 'q');
    expect(options.policies).toEqual({
      overlap: ScheduleOverlapPolicy.SKIP,
      catchupWindow: DEFAULT_CATCHUP_WINDOW_MS,
      pauseOnFailure: true,
    });
    expect(options.spec).toEqual({ intervals: [{ every: 3_600_000, offset: 0 }] });
  });

  test('maps buffer-one and a turned-off pause on failure', () => {
    const options = buildScheduleOptions(
      checkScheduleRequest({ input, every: '1h', overlap: 'buffer-one', pauseOnFailure: false }),
      'q',
    );
    expect(options.policies).toMatchObject({ overlap: ScheduleOverlapPolicy.BUFFER_ONE, pauseOnFailure: false });
  });
});

describe('pauseReason', () => {
  const failure = { type: 'AgentJobNotFound', message: 'job j-1 was not found in project p-1' };
  const lookUp = (found: typeof failure | undefined) => async () => found;

  test('a schedule that is not paused has no reason', async () => {
    expect(await pauseReason({ paused: false, note: 'anything' }, lookUp(failure))).toBeNull();
  });

  test('a pause by hand gives its note, or says there was none', async () => {
    expect(await pauseReason({ paused: true, note: 'release freeze' }, lookUp(failure))).toBe('release freeze');
    expect(await pauseReason({ paused: true, note: '' }, lookUp(failure))).toBe('paused (no note given)');
  });

  test('pause-on-failure names the run and its own failure, not the message Temporal copied', async () => {
    const note = 'paused due to workflow failure: followup/p-1/j-1/abc-2026-01-01T00:00:00Z: Activity task failed';
    expect(await pauseReason({ paused: true, note }, lookUp(failure))).toBe(
      'run followup/p-1/j-1/abc-2026-01-01T00:00:00Z failed and pause-on-failure paused the schedule: AgentJobNotFound: job j-1 was not found in project p-1',
    );
  });

  test("a run that can no longer be read keeps Temporal's note", async () => {
    const note = 'paused due to workflow failure: followup/p-1/j-1/abc: Activity task failed';
    expect(await pauseReason({ paused: true, note }, lookUp(undefined))).toContain(`: ${note}`);
  });
});

describe('noteOf', () => {
  test("reads the creator's note from the memo", () => {
    expect(noteOf({ agentFollowUpNote: 'weekday mornings' })).toBe('weekday mornings');
    expect(noteOf({})).toBeNull();
    expect(noteOf(undefined)).toBeNull();
  });
});

describe("a schedule's busiest hour, from the server's next run times", () => {
  const at = (...minutes: number[]) =>
    minutes.map((minute) => new Date(Date.UTC(2027, 0, 4, 8, 0) + minute * 60_000).toISOString());

  test('ten times within the hour are a rate: every minute is 60, every 6 minutes 10', () => {
    expect(peakRunsPerHour(at(...Array.from({ length: 10 }, (_, i) => i)))).toBe(60);
    expect(peakRunsPerHour(at(...Array.from({ length: 10 }, (_, i) => i * 6)))).toBe(10);
  });

  test('times spread over days are counted in their busiest hour', () => {
    // Every 5 minutes from 9:00 to 9:55 (12), then the same the next day.
    const day = Array.from({ length: 12 }, (_, i) => 60 + i * 5);
    expect(peakRunsPerHour(at(...day.slice(0, 10)))).toBe(12);
    expect(peakRunsPerHour(at(0, 24 * 60, 48 * 60))).toBe(1);
    expect(peakRunsPerHour(at(0, 30, 90, 100, 110))).toBe(3);
  });

  test('fewer than two times say nothing', () => {
    expect(peakRunsPerHour([])).toBeNull();
    expect(peakRunsPerHour(at(0))).toBeNull();
  });
});
