/** The client's zod schema over the input rules: its output, its issue paths and its one-line problem text. */
import { z } from 'zod';
import { checkFollowUpInput, InvalidFollowUpInputError } from '../../src/client';
import { createFollowUpInputSchema, fixFor, formatInputProblems } from '../../src/client/input';

const valid = { projectId: 'proj-1', jobId: 'job-1', prompt: 'Please also update the changelog.' };

describe('createFollowUpInputSchema', () => {
  test('its output is the checked request, durations in milliseconds and defaults applied', () => {
    const parsed = createFollowUpInputSchema().parse({ ...valid, polling: { timeout: '10m' } });
    expect(parsed.polling.timeoutMs).toBe(600_000);
    expect(parsed.onAmbiguousSend).toBe('reconcile');
  });

  test('each problem is an issue at the path of its field, so a schema that embeds it prefixes the path', () => {
    const embedded = z.object({ input: createFollowUpInputSchema() });
    const result = embedded.safeParse({
      input: { projectId: 'a b', jobId: 'j', prompt: 'p', polling: { timeout: '400d' } },
    });
    if (result.success) throw new Error('expected a failure');
    expect(result.error.issues.map((issue) => issue.path.join('.'))).toEqual([
      'input.projectId',
      'input.polling.timeout',
    ]);
  });

  test('a lowered prompt limit is applied', () => {
    const result = createFollowUpInputSchema(10).safeParse({ ...valid, prompt: 'x'.repeat(11) });
    if (result.success) throw new Error('expected a failure');
    expect(formatInputProblems(result.error)).toBe('prompt must be at most 10 characters');
  });

  test('every problem is listed at once, separated by semicolons', () => {
    const result = createFollowUpInputSchema().safeParse({});
    if (result.success) throw new Error('expected a failure');
    expect(formatInputProblems(result.error)).toBe('projectId is required; jobId is required; prompt is required');
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

describe('InvalidFollowUpInputError.problems', () => {
  function refusal(input: unknown): InvalidFollowUpInputError {
    try {
      checkFollowUpInput(input);
    } catch (error) {
      if (error instanceof InvalidFollowUpInputError) return error;
      throw error;
    }
    throw new Error('expected the input to be refused');
  }

  test('every problem as data: the dotted field and the rule it broke, without the field repeated', () => {
    const error = refusal({
      projectId: 'a b',
      jobId: 'j',
      prompt: 'p',
      polling: { initialInterval: '5', timeout: '1y' },
    });
    expect(error.problems).toEqual([
      {
        field: 'projectId',
        problem: expect.stringMatching(/^may contain only letters/),
        fix: "give the projectId as the agent service shows it: 1 to 200 letters, digits, '.', '_', ':' or '-', starting with a letter or digit",
      },
      {
        field: 'polling.initialInterval',
        problem: 'must be between 100ms and 1d (got "5")',
        fix: 'a duration between 100ms and 1d such as "5s" or "2m" (a bare number is milliseconds), maxInterval not below initialInterval; or leave it out (5s)',
      },
      {
        field: 'polling.timeout',
        problem: 'must be between 1s and 30d (got "1y")',
        fix: 'a duration between 1s and 30d such as "24h" (a bare number is milliseconds); or leave it out (1d)',
      },
    ]);
    // The message still says it all in one line, for a person.
    expect(error.message).toContain('polling.timeout must be between 1s and 30d');
  });

  test('missing fields are each a problem of their own', () => {
    expect(refusal({}).problems.map((problem) => problem.field)).toEqual(['projectId', 'jobId', 'prompt']);
  });

  test('a refusal outside the schema names its field too', () => {
    let caught: unknown;
    try {
      checkFollowUpInput(valid, 0);
    } catch (error) {
      caught = error;
    }
    expect((caught as InvalidFollowUpInputError).problems).toEqual([
      {
        field: 'maxPromptLength',
        problem: 'must be a whole number of at least 1 (got 0)',
        fix: 'a whole number of at least 1 (it can only lower the built-in 100000)',
      },
    ]);
  });

  test('every field a refusal can name has a fix of its own, and a lowered prompt limit is the one the fix gives', () => {
    const fields = ['input', 'projectId', 'jobId', 'prompt', 'onAmbiguousSend', 'polling'];
    const polling = ['initialInterval', 'backoffCoefficient', 'maxInterval', 'timeout', 'settleWindow'];
    for (const field of [...fields, ...polling.map((name) => `polling.${name}`)]) {
      expect(fixFor(field)).not.toContain('docs/LIBRARY.md');
    }
    let caught: unknown;
    try {
      checkFollowUpInput({ ...valid, prompt: 'x'.repeat(11) }, 10);
    } catch (error) {
      caught = error;
    }
    expect((caught as InvalidFollowUpInputError).problems[0]?.fix).toBe(
      'give the instruction for the agent: 1 to 10 characters, not only white space',
    );
  });
});
