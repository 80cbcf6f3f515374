import { z } from 'zod';
import {
  AgentJobSchema,
  FollowUpMessageSchema,
  describeSchemaProblem,
  isKnownStatus,
  isTerminal,
} from '../../src/agent-api/schemas';

const job = {
  id: 'job-1',
  status: 'completed',
  source: { repository: 'acme/docs', ref: 'main' },
  model: 'claude-x',
  prLink: 'https://github.com/acme/docs/pull/7',
  createdAt: '2025-01-01T00:00:00Z',
  archivedAt: null,
};

/** A copy of the job without one field. */
function without(field: keyof typeof job): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...job };
  delete copy[field];
  return copy;
}

/** The problem describeSchemaProblem gives for a value the job schema refuses. */
function jobProblem(value: unknown): string {
  const result = AgentJobSchema.safeParse(value);
  if (result.success) throw new Error('expected the job to be refused');
  return describeSchemaProblem(result.error);
}

describe('isTerminal', () => {
  test.each(['completed', 'archived', 'failed'])('%s ends polling', (status) => {
    expect(isTerminal(status)).toBe(true);
  });

  test.each(['active', 'queued', 'COMPLETED', ''])('%j does not end polling', (status) => {
    expect(isTerminal(status)).toBe(false);
  });
});

describe('isKnownStatus', () => {
  test.each(['active', 'completed', 'archived', 'failed'])('%s is one of the documented statuses', (status) => {
    expect(isKnownStatus(status)).toBe(true);
  });

  test.each(['paused', 'Active', ''])('%j is not a documented status', (status) => {
    expect(isKnownStatus(status)).toBe(false);
  });
});

describe('AgentJobSchema', () => {
  test('a full job is accepted as given', () => {
    expect(AgentJobSchema.parse(job)).toEqual(job);
  });

  test('archivedAt may be absent', () => {
    const parsed = AgentJobSchema.parse(without('archivedAt'));
    expect('archivedAt' in parsed).toBe(false);
  });

  test('archivedAt may be null or a date', () => {
    expect(AgentJobSchema.parse({ ...job, archivedAt: null }).archivedAt).toBeNull();
    expect(AgentJobSchema.parse({ ...job, status: 'archived', archivedAt: '2025-02-01T00:00:00Z' }).archivedAt).toBe(
      '2025-02-01T00:00:00Z',
    );
  });

  test('prLink may be absent or null', () => {
    expect('prLink' in AgentJobSchema.parse(without('prLink'))).toBe(false);
    expect(AgentJobSchema.parse({ ...job, prLink: null }).prLink).toBeNull();
  });

  test('fields the seed does not list are kept in the parsed job, also inside source', () => {
    const parsed = AgentJobSchema.parse({ ...job, title: 'Docs fix', source: { ...job.source, sha: 'abc123' } });
    expect(parsed['title']).toBe('Docs fix');
    expect(parsed.source['sha']).toBe('abc123');
  });

  test('a status the seed does not list is accepted as it is', () => {
    expect(AgentJobSchema.parse({ ...job, status: 'paused' }).status).toBe('paused');
  });

  test('an empty status is refused, naming the status field', () => {
    expect(jobProblem({ ...job, status: '' })).toMatch(/^field 'status': /);
  });

  test('a missing id is refused, naming the id field', () => {
    expect(jobProblem(without('id'))).toMatch(/^field 'id': /);
  });

  test('a numeric id is refused, naming the id field', () => {
    expect(jobProblem({ ...job, id: 1 })).toMatch(/^field 'id': /);
  });

  test('a bad nested field is named by its dotted path', () => {
    expect(jobProblem({ ...job, source: { repository: 5, ref: 'main' } })).toMatch(/^field 'source\.repository': /);
  });

  test('a prLink that is a number is refused, naming prLink', () => {
    expect(jobProblem({ ...job, prLink: 42 })).toMatch(/^field 'prLink': /);
  });

  test('a body that is not an object is reported at the root', () => {
    expect(jobProblem([job])).toMatch(/^field '\(root\)': /);
  });

  test('the problem text never echoes the values of the body', () => {
    const problem = jobProblem({ ...job, id: 12345, model: 'secret-model-name' });
    expect(problem).not.toContain('12345');
    expect(problem).not.toContain('secret-model-name');
  });
});

describe('describeSchemaProblem', () => {
  test('an error with no issues gets a generic message', () => {
    expect(describeSchemaProblem(new z.ZodError([]))).toBe('the response did not match the job shape');
  });
});

describe('FollowUpMessageSchema', () => {
  test('a prompt of one character is accepted', () => {
    expect(FollowUpMessageSchema.parse({ prompt: 'x' })).toEqual({ prompt: 'x' });
  });

  test('an empty prompt and extra fields are refused', () => {
    expect(FollowUpMessageSchema.safeParse({ prompt: '' }).success).toBe(false);
    expect(FollowUpMessageSchema.safeParse({ prompt: 'x', model: 'y' }).success).toBe(false);
  });
});
