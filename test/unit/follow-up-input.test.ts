import { z } from 'zod';
import {
  createFollowUpInputSchema,
  formatInputProblems,
  resolvePolling,
  validateFollowUpInput,
  type ParsedFollowUpInput,
} from '../../src/follow-up/input';

const valid = { projectId: 'proj-1', jobId: 'job-1', prompt: 'Please also update the changelog.' };

/** The parsed value of an input that must be valid. */
function parsed(input: unknown, schema = createFollowUpInputSchema()): ParsedFollowUpInput {
  const result = validateFollowUpInput(input, schema);
  if (!result.ok) throw new Error(`expected a valid input, got: ${result.problems}`);
  return result.value;
}

/** The problem text of an input that must be refused. */
function problemsOf(input: unknown, schema = createFollowUpInputSchema()): string {
  const result = validateFollowUpInput(input, schema);
  if (result.ok) throw new Error(`expected the input to be refused: ${JSON.stringify(input)}`);
  return result.problems;
}

describe('validateFollowUpInput with valid input', () => {
  test('a minimal input with ids and a prompt is accepted unchanged and has no polling options', () => {
    expect(parsed(valid)).toEqual(valid);
  });

  test('ids may use letters, digits, dots, underscores, colons and dashes', () => {
    const input = { ...valid, projectId: 'Acme_Docs.v2', jobId: 'job:2025-01-01_a.b' };
    expect(parsed(input)).toEqual(input);
  });

  test('the prompt keeps its surrounding white space and inner new lines', () => {
    const prompt = '  Fix the typo\n in the intro.  ';
    expect(parsed({ ...valid, prompt }).prompt).toBe(prompt);
  });

  test('durations written as "5s", "10m" and "1.5h" become milliseconds', () => {
    const value = parsed({
      ...valid,
      polling: { initialInterval: '5s', maxInterval: '10m', timeout: '1.5h', backoffCoefficient: 1.5, maxPollsPerRun: 10, settleWindow: '0s' },
    });
    expect(value.polling).toEqual({
      initialInterval: 5_000,
      maxInterval: 600_000,
      timeout: 5_400_000,
      backoffCoefficient: 1.5,
      maxPollsPerRun: 10,
      settleWindow: 0,
    });
  });

  test('durations given as numbers are taken as milliseconds', () => {
    const value = parsed({ ...valid, polling: { initialInterval: 250, maxInterval: 1_000, timeout: 90_000 } });
    expect(value.polling).toEqual({ initialInterval: 250, maxInterval: 1_000, timeout: 90_000 });
  });

  test('an interval of 1.5h is accepted when the max interval is at least as long', () => {
    const value = parsed({ ...valid, polling: { initialInterval: '1.5h', maxInterval: '2h' } });
    expect(value.polling).toEqual({ initialInterval: 5_400_000, maxInterval: 7_200_000 });
  });

  test('a backoff coefficient of exactly 1 (fixed interval) and of exactly 10 are both accepted', () => {
    expect(parsed({ ...valid, polling: { backoffCoefficient: 1 } }).polling?.backoffCoefficient).toBe(1);
    expect(parsed({ ...valid, polling: { backoffCoefficient: 10 } }).polling?.backoffCoefficient).toBe(10);
  });

  test('a prompt exactly at a lowered maximum length is accepted', () => {
    expect(parsed({ ...valid, prompt: 'x'.repeat(10) }, createFollowUpInputSchema(10)).prompt).toHaveLength(10);
  });
});

describe('resolvePolling', () => {
  test('without polling options every default is applied', () => {
    expect(resolvePolling(undefined)).toEqual({
      initialIntervalMs: 5_000,
      backoffCoefficient: 2,
      maxIntervalMs: 60_000,
      timeoutMs: 24 * 60 * 60 * 1000,
      maxPollsPerRun: 500,
      settleWindowMs: 30_000,
    });
  });

  test('options the caller gave win and the rest fall back to the defaults', () => {
    const polling = parsed({ ...valid, polling: { initialInterval: '2s', timeout: '10m' } }).polling;
    expect(resolvePolling(polling)).toEqual({
      initialIntervalMs: 2_000,
      backoffCoefficient: 2,
      maxIntervalMs: 60_000,
      timeoutMs: 600_000,
      maxPollsPerRun: 500,
      settleWindowMs: 30_000,
    });
  });

  test('a fully specified polling object is used as given', () => {
    const polling = parsed({
      ...valid,
      polling: { initialInterval: 100, backoffCoefficient: 1, maxInterval: 100, timeout: '1s', maxPollsPerRun: 1 },
    }).polling;
    expect(resolvePolling(polling)).toEqual({
      initialIntervalMs: 100,
      backoffCoefficient: 1,
      maxIntervalMs: 100,
      timeoutMs: 1_000,
      maxPollsPerRun: 1,
      settleWindowMs: 30_000,
    });
  });
});

describe('validateFollowUpInput with bad input', () => {
  const withPolling = (polling: unknown) => ({ ...valid, polling });

  /** [what is wrong, the input, the field the problem must name first, a fragment of the problem]. */
  const badInputs: Array<[string, unknown, string, string]> = [
    ['a missing prompt', { projectId: 'p', jobId: 'j' }, 'prompt', 'required'],
    ['an empty prompt', { ...valid, prompt: '' }, 'prompt', 'must not be empty'],
    ['a white-space-only prompt', { ...valid, prompt: ' \n\t ' }, 'prompt', 'more than white space'],
    ['a prompt that is not a string', { ...valid, prompt: 42 }, 'prompt', 'must be a string'],
    ['a missing projectId', { jobId: 'j', prompt: 'p' }, 'projectId', 'required'],
    ['an empty projectId', { ...valid, projectId: '' }, 'projectId', 'must not be empty'],
    ['a missing jobId', { projectId: 'p', prompt: 'p' }, 'jobId', 'required'],
    ['an empty jobId', { ...valid, jobId: '' }, 'jobId', 'must not be empty'],
    ['a jobId that is a number', { ...valid, jobId: 7 }, 'jobId', 'must be a string'],
    ['a projectId that is null', { ...valid, projectId: null }, 'projectId', 'must be a string'],
    ['a projectId with a slash', { ...valid, projectId: 'acme/docs' }, 'projectId', 'no slashes'],
    ['a jobId with a slash', { ...valid, jobId: 'a/b' }, 'jobId', 'no slashes'],
    ['a jobId of ".."', { ...valid, jobId: '..' }, 'jobId', 'must start with a letter or digit'],
    ['a jobId of "."', { ...valid, jobId: '.' }, 'jobId', 'must start with a letter or digit'],
    ['a jobId that climbs with "../"', { ...valid, jobId: '../admin' }, 'jobId', 'no slashes'],
    ['a jobId with a space', { ...valid, jobId: 'job 1' }, 'jobId', 'spaces'],
    ['a projectId with unicode', { ...valid, projectId: 'projét' }, 'projectId', 'unicode'],
    ['a jobId with a new line', { ...valid, jobId: 'job\n1' }, 'jobId', 'control characters'],
    ['a jobId ending in a NUL', { ...valid, jobId: 'job\u0000' }, 'jobId', 'control characters'],
    ['a jobId over 200 characters', { ...valid, jobId: 'j'.repeat(201) }, 'jobId', 'at most 200'],
    ['a negative interval', withPolling({ initialInterval: '-5s' }), 'polling.initialInterval', 'between 100ms and 1d'],
    ['a zero interval', withPolling({ initialInterval: 0 }), 'polling.initialInterval', 'between 100ms and 1d'],
    ['a bare "5" (5 ms) interval', withPolling({ initialInterval: '5' }), 'polling.initialInterval', 'between'],
    ['an unparsable interval', withPolling({ initialInterval: 'soon' }), 'polling.initialInterval', 'not a duration'],
    ['an interval that is a boolean', withPolling({ initialInterval: true }), 'polling.initialInterval', 'must be a duration'],
    ['an unparsable max interval', withPolling({ maxInterval: 'five minutes' }), 'polling.maxInterval', 'not a duration'],
    ['a negative timeout', withPolling({ timeout: -1_000 }), 'polling.timeout', 'between 1s and 30d'],
    ['an absurd timeout of 400d', withPolling({ timeout: '400d' }), 'polling.timeout', 'between 1s and 30d'],
    [
      'a max interval below the initial interval',
      withPolling({ initialInterval: '10s', maxInterval: '5s' }),
      'polling.maxInterval',
      'must not be below polling.initialInterval',
    ],
    [
      'an initial interval above the default max interval',
      withPolling({ initialInterval: '2m' }),
      'polling.maxInterval',
      'must not be below polling.initialInterval (2m)',
    ],
    ['a backoff coefficient below 1', withPolling({ backoffCoefficient: 0.5 }), 'polling.backoffCoefficient', 'at least 1'],
    ['a backoff coefficient above 10', withPolling({ backoffCoefficient: 11 }), 'polling.backoffCoefficient', 'at most 10'],
    ['a backoff coefficient as a string', withPolling({ backoffCoefficient: '2' }), 'polling.backoffCoefficient', 'must be a number'],
    ['a fractional poll count', withPolling({ maxPollsPerRun: 1.5 }), 'polling.maxPollsPerRun', 'whole number'],
    ['a zero poll count', withPolling({ maxPollsPerRun: 0 }), 'polling.maxPollsPerRun', 'at least 1'],
    ['a poll count over 5000', withPolling({ maxPollsPerRun: 5_001 }), 'polling.maxPollsPerRun', 'at most 5000'],
    ['polling that is not an object', withPolling('fast'), 'polling', 'must be an object'],
    ['an unknown polling field', withPolling({ interval: '5s' }), 'polling', 'unknown field(s) "interval"'],
    ['an unknown top-level field', { ...valid, projectID: 'p' }, 'input', 'unknown field(s) "projectID"'],
    ['a string instead of an object', 'follow up please', 'input', 'must be a JSON object'],
    ['null instead of an object', null, 'input', 'must be a JSON object'],
    ['an array instead of an object', [valid], 'input', 'must be a JSON object'],
  ];

  test.each(badInputs.map(([title, input, field, fragment]) => [title, field, fragment, input] as const))(
    '%s is refused with a problem naming %s',
    (_title, field, fragment, input) => {
      const problems = problemsOf(input);
      expect(problems.startsWith(field)).toBe(true);
      expect(problems).toContain(fragment);
    },
  );

  test('a prompt over a lowered maximum length is refused naming the prompt and the limit', () => {
    expect(problemsOf({ ...valid, prompt: 'x'.repeat(11) }, createFollowUpInputSchema(10))).toBe(
      'prompt must be at most 10 characters',
    );
  });

  test('the same long prompt is accepted by the default schema', () => {
    expect(parsed({ ...valid, prompt: 'x'.repeat(11) }).prompt).toHaveLength(11);
  });

  test('an empty prompt is reported once, not also as white space only', () => {
    expect(problemsOf({ ...valid, prompt: '' })).toBe('prompt must not be empty (the API needs at least 1 character)');
  });

  test('every problem is listed at once, separated by semicolons', () => {
    expect(problemsOf({})).toBe('projectId is required; jobId is required; prompt is required');
  });

  test('problems in the ids and in polling are reported together', () => {
    const problems = problemsOf({ projectId: 'a b', jobId: 'j', prompt: 'p', polling: { timeout: '400d', backoffCoefficient: 0 } });
    expect(problems).toContain('projectId may contain only');
    expect(problems).toContain('polling.timeout must be between');
    expect(problems).toContain('polling.backoffCoefficient must be at least 1');
    expect(problems.split('; ')).toHaveLength(3);
  });

  test('a refused duration is quoted back so the caller sees what they typed', () => {
    expect(problemsOf(withPolling({ timeout: '400d' }))).toContain('(got "400d")');
  });
});

describe('formatInputProblems', () => {
  test('a message that does not start with its field is prefixed with the dotted path', () => {
    const schema = z.object({ polling: z.object({ timeout: z.string().refine(() => false, { message: 'is odd' }) }) });
    const result = schema.safeParse({ polling: { timeout: 'x' } });
    if (result.success) throw new Error('expected a failure');
    expect(formatInputProblems(result.error)).toBe('polling.timeout: is odd');
  });

  test('a problem with no path is attributed to the input', () => {
    const result = z.string({ error: 'expected text' }).safeParse(1);
    if (result.success) throw new Error('expected a failure');
    expect(formatInputProblems(result.error)).toBe('input: expected text');
  });

  test('a message that already names its field is not prefixed twice', () => {
    const result = z.object({ jobId: z.string({ error: 'jobId is required' }) }).safeParse({});
    if (result.success) throw new Error('expected a failure');
    expect(formatInputProblems(result.error)).toBe('jobId is required');
  });
});
