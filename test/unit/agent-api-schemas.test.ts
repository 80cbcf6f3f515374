import { z } from 'zod';
import {
  AgentJobSchema,
  FollowUpMessageSchema,
  describeSchemaProblem,
  ErrorBodySchema,
  isKnownStatus,
  isTerminal,
  toAgentJob,
} from '../../src/agent-api/schemas';

const job = {
  id: 'job-1',
  status: 'completed',
  source: { repository: 'https://github.com/acme/docs', ref: 'main' },
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

/** What we keep of a body: the parsed, trimmed job. */
function kept(value: unknown) {
  return toAgentJob(AgentJobSchema.parse(value));
}

describe('AgentJobSchema and toAgentJob: the vendor requires nothing; we require what we decide on', () => {
  test('a full job is kept as given', () => {
    expect(kept(job)).toEqual(job);
  });

  test('a job of only id and status is accepted; prLink then reads null', () => {
    expect(kept({ id: 'job-1', status: 'active' })).toEqual({ id: 'job-1', status: 'active', prLink: null });
  });

  test('archivedAt may be absent, null or a date', () => {
    expect('archivedAt' in kept(without('archivedAt'))).toBe(false);
    expect(kept({ ...job, archivedAt: null }).archivedAt).toBeNull();
    expect(kept({ ...job, status: 'archived', archivedAt: '2025-02-01T00:00:00Z' }).archivedAt).toBe(
      '2025-02-01T00:00:00Z',
    );
  });

  test('prLink may be absent or null, and both read as null', () => {
    expect(kept(without('prLink')).prLink).toBeNull();
    expect(kept({ ...job, prLink: null }).prLink).toBeNull();
  });

  test('source.ref may be null, as the vendor documents (a job without a branch)', () => {
    expect(kept({ ...job, source: { repository: job.source.repository, ref: null } }).source).toEqual({
      repository: job.source.repository,
      ref: null,
    });
  });

  test('a job without model, source or createdAt is accepted without them', () => {
    const parsed = kept({ id: 'job-1', status: 'completed', prLink: null });
    expect(Object.keys(parsed).sort()).toEqual(['id', 'prLink', 'status']);
  });

  test('fields the vendor does not document are dropped, also inside source, however large', () => {
    const parsed = kept({ ...job, transcript: 'x'.repeat(100_000), source: { ...job.source, sha: 'abc123' } });
    expect(parsed).toEqual(job);
  });

  test('an informational field of the wrong type is dropped, not a reason to refuse the job', () => {
    const parsed = kept({ ...job, model: 7, createdAt: { at: 'now' }, source: { repository: 5, ref: 'main' } });
    expect(parsed.model).toBeUndefined();
    expect(parsed.createdAt).toBeUndefined();
    expect(parsed.source).toEqual({ ref: 'main' });
  });

  test('an informational field too long to be real is dropped', () => {
    expect(kept({ ...job, model: 'm'.repeat(3_000) }).model).toBeUndefined();
  });

  test('a status the vendor does not list is accepted as it is', () => {
    expect(kept({ ...job, status: 'paused' }).status).toBe('paused');
  });

  test('an empty status is refused, naming the status field', () => {
    expect(jobProblem({ ...job, status: '' })).toMatch(/^field 'status': /);
  });

  test('a missing status is refused, naming the status field', () => {
    expect(jobProblem(without('status'))).toMatch(/^field 'status': /);
  });

  test('a missing id is refused, naming the id field', () => {
    expect(jobProblem(without('id'))).toMatch(/^field 'id': /);
  });

  test('a numeric id is refused, naming the id field', () => {
    expect(jobProblem({ ...job, id: 1 })).toMatch(/^field 'id': /);
  });

  test('a prLink that is a number is refused, naming prLink: the workflow decides on it', () => {
    expect(jobProblem({ ...job, prLink: 42 })).toMatch(/^field 'prLink': /);
  });

  test('a prLink longer than any link is refused', () => {
    expect(jobProblem({ ...job, prLink: `https://x/${'p'.repeat(3_000)}` })).toMatch(/^field 'prLink': /);
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

describe('ErrorBodySchema', () => {
  test("the vendor's error body is one human-readable message", () => {
    expect(ErrorBodySchema.parse({ error: 'Job not found' })).toEqual({ error: 'Job not found' });
    expect(ErrorBodySchema.safeParse({ message: 'Job not found' }).success).toBe(false);
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
