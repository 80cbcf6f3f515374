/**
 * The follow-up's input rules (src/kernel/request.ts): what the workflow itself checks, with no zod, and what the
 * client's zod schema (src/client/input.ts) checks through the very same functions. The agreement tests at the end
 * run every row through both, and through the contract published for other languages (src/client/workflow-contract.ts).
 */
import { createFollowUpInputSchema } from '../../src/client/input';
import { FollowUpInputContract } from '../../src/client/workflow-contract';
import {
  inspectFollowUpInput,
  DEFAULT_POLLING,
  describeProblems,
  type FollowUpRequest,
} from '../../src/kernel/request';

const valid = { projectId: 'proj-1', jobId: 'job-1', prompt: 'Please also update the changelog.' };

/** The checked request of an input that must be valid. */
function parsed(input: unknown, maxPromptLength?: number): FollowUpRequest {
  const result = inspectFollowUpInput(input, maxPromptLength);
  if (!result.ok) throw new Error(`expected a valid input, got: ${describeProblems(result.problems)}`);
  return result.request;
}

/** The problem text of an input that must be refused. */
function problemsOf(input: unknown, maxPromptLength?: number): string {
  const result = inspectFollowUpInput(input, maxPromptLength);
  if (result.ok) throw new Error(`expected the input to be refused: ${JSON.stringify(input)}`);
  return describeProblems(result.problems);
}

describe('inspectFollowUpInput with valid input', () => {
  test('a minimal input gets every default', () => {
    expect(parsed(valid)).toEqual({
      ...valid,
      polling: { ...DEFAULT_POLLING },
      onAmbiguousSend: 'reconcile',
      notify: null,
    });
  });

  test('ids may use letters, digits, dots, underscores, colons and dashes', () => {
    const input = { ...valid, projectId: 'Acme_Docs.v2', jobId: 'job:2025-01-01_a.b' };
    expect(parsed(input)).toMatchObject(input);
  });

  test('the prompt keeps its surrounding white space and inner new lines', () => {
    const prompt = '  Fix the typo\n in the intro.  ';
    expect(parsed({ ...valid, prompt }).prompt).toBe(prompt);
  });

  test('durations written as "5s", "10m" and "1.5h" become milliseconds', () => {
    const value = parsed({
      ...valid,
      polling: {
        initialInterval: '5s',
        maxInterval: '10m',
        timeout: '1.5h',
        backoffCoefficient: 1.5,
        settleWindow: '0s',
      },
    });
    expect(value.polling).toEqual({
      initialIntervalMs: 5_000,
      maxIntervalMs: 600_000,
      timeoutMs: 5_400_000,
      backoffCoefficient: 1.5,
      settleWindowMs: 0,
    });
  });

  test('durations given as numbers are taken as milliseconds; what is not given keeps its default', () => {
    const value = parsed({ ...valid, polling: { initialInterval: 250, maxInterval: 1_000, timeout: 90_000 } });
    expect(value.polling).toEqual({
      ...DEFAULT_POLLING,
      initialIntervalMs: 250,
      maxIntervalMs: 1_000,
      timeoutMs: 90_000,
    });
  });

  test('an interval of 1.5h is accepted when the max interval is at least as long', () => {
    const value = parsed({ ...valid, polling: { initialInterval: '1.5h', maxInterval: '2h' } });
    expect(value.polling).toMatchObject({ initialIntervalMs: 5_400_000, maxIntervalMs: 7_200_000 });
  });

  test('a backoff coefficient of exactly 1 (fixed interval) and of exactly 10 are both accepted', () => {
    expect(parsed({ ...valid, polling: { backoffCoefficient: 1 } }).polling.backoffCoefficient).toBe(1);
    expect(parsed({ ...valid, polling: { backoffCoefficient: 10 } }).polling.backoffCoefficient).toBe(10);
  });

  test('each ambiguous-send policy is accepted', () => {
    for (const policy of ['reconcile', 'retry', 'fail'] as const)
      expect(parsed({ ...valid, onAmbiguousSend: policy }).onAmbiguousSend).toBe(policy);
  });

  test('a prompt exactly at a lowered maximum length is accepted', () => {
    expect(parsed({ ...valid, prompt: 'x'.repeat(10) }, 10).prompt).toHaveLength(10);
  });
});

describe('inspectFollowUpInput with bad input', () => {
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
    [
      'an interval that is a boolean',
      withPolling({ initialInterval: true }),
      'polling.initialInterval',
      'is not a duration',
    ],
    ['a duration that is an object', withPolling({ timeout: { days: 1 } }), 'polling.timeout', 'is not a duration'],
    [
      'an unknown ambiguous-send policy',
      { ...valid, onAmbiguousSend: 'guess' },
      'onAmbiguousSend',
      'must be one of reconcile, retry, fail',
    ],
    [
      'an unparsable max interval',
      withPolling({ maxInterval: 'five minutes' }),
      'polling.maxInterval',
      'not a duration',
    ],
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
    [
      'a backoff coefficient below 1',
      withPolling({ backoffCoefficient: 0.5 }),
      'polling.backoffCoefficient',
      'at least 1',
    ],
    [
      'a backoff coefficient above 10',
      withPolling({ backoffCoefficient: 11 }),
      'polling.backoffCoefficient',
      'at most 10',
    ],
    [
      'a backoff coefficient as a string',
      withPolling({ backoffCoefficient: '2' }),
      'polling.backoffCoefficient',
      'must be a number',
    ],
    ['the removed maxPollsPerRun', withPolling({ maxPollsPerRun: 10 }), 'polling', 'unknown field(s) "maxPollsPerRun"'],
    ['polling that is not an object', withPolling('fast'), 'polling', 'must be an object'],
    ['an unknown polling field', withPolling({ interval: '5s' }), 'polling', 'unknown field(s) "interval"'],
    ['an unknown top-level field', { ...valid, projectID: 'p' }, 'input', 'unknown field(s) "projectID"'],
    [
      'a second copy of the state a continued run carries',
      { ...valid, delivered: { sentAtMs: 0 } },
      'input',
      'unknown field(s) "delivered"',
    ],
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
    expect(problemsOf({ ...valid, prompt: 'x'.repeat(11) }, 10)).toBe('prompt must be at most 10 characters');
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
    const problems = problemsOf({
      projectId: 'a b',
      jobId: 'j',
      prompt: 'p',
      polling: { timeout: '400d', backoffCoefficient: 0 },
    });
    expect(problems).toContain('projectId may contain only');
    expect(problems).toContain('polling.timeout must be between');
    expect(problems).toContain('polling.backoffCoefficient must be at least 1');
    expect(problems.split('; ')).toHaveLength(3);
  });

  test('a refused duration is quoted back so the caller sees what they typed', () => {
    expect(problemsOf(withPolling({ timeout: '400d' }))).toContain('(got "400d")');
  });

  test("the published input contract refuses what the check refuses, but for what a JSON Schema cannot say (a duration string's range, one field against another), and takes what it takes", () => {
    const cannotSay = new Set([
      'a negative interval',
      'a bare "5" (5 ms) interval',
      'an unparsable interval',
      'an unparsable max interval',
      'an absurd timeout of 400d',
      'a max interval below the initial interval',
      'an initial interval above the default max interval',
    ]);
    for (const [title, input] of badInputs) {
      expect({ title, takenByContract: FollowUpInputContract.safeParse(input).success }).toEqual({
        title,
        takenByContract: cannotSay.has(title),
      });
    }
    for (const input of [
      valid,
      { ...valid, polling: { initialInterval: '2s', timeout: 600_000, backoffCoefficient: 1 } },
    ]) {
      expect(inspectFollowUpInput(input).ok).toBe(true);
      expect(FollowUpInputContract.safeParse(input).success).toBe(true);
    }
  });

  test('the zod schema of the client agrees with the check on every row: same verdict, same resolved request', () => {
    const schema = createFollowUpInputSchema();
    const rows: unknown[] = [
      ...badInputs.map((row) => row[1]),
      valid,
      { ...valid, polling: { initialInterval: '2s', timeout: '10m' } },
    ];
    for (const input of rows) {
      const checked = inspectFollowUpInput(input);
      const viaZod = schema.safeParse(input);
      expect({ input, ok: viaZod.success }).toEqual({ input, ok: checked.ok });
      if (checked.ok && viaZod.success) expect(viaZod.data).toEqual(checked.request);
      if (!checked.ok && !viaZod.success)
        expect(viaZod.error.issues.map((issue) => issue.message)).toEqual(
          checked.problems.map((problem) => problem.message),
        );
    }
  });
});
