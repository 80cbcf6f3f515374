import { checkFollowUpInput } from '../../src/client';
import {
  excerpt,
  followUpDetails,
  followUpStartMetadata,
  followUpSummary,
  MAX_SUMMARY_BYTES,
  truncateUtf8,
  utf8Length,
} from '../../src/client/start-metadata';

const ref = { projectId: 'proj-1', jobId: 'job-7' };

describe('the summary shown in the workflow list', () => {
  test('names project and job and quotes a short prompt whole', () => {
    expect(followUpSummary({ ...ref, prompt: 'Add tests for the parser' })).toBe(
      'Follow-up proj-1/job-7: "Add tests for the parser"',
    );
  });

  test.each([
    ['ASCII', 'x'.repeat(1_000)],
    ['two-byte characters', 'é'.repeat(500)],
    ['three-byte characters', '漢'.repeat(500)],
    ['emoji (surrogate pairs)', '🚀'.repeat(500)],
  ])('a long prompt of %s is cut to fit 200 bytes without splitting a character', (_name, prompt) => {
    const summary = followUpSummary({ ...ref, prompt });
    expect(utf8Length(summary)).toBeLessThanOrEqual(MAX_SUMMARY_BYTES);
    expect(Buffer.byteLength(summary, 'utf8')).toBe(utf8Length(summary));
    expect(summary).toMatch(/…"$/);
    expect(summary).not.toContain('\uFFFD');
    // Nearly all of the room is used: at most one character (4 bytes) short.
    expect(utf8Length(summary)).toBeGreaterThan(MAX_SUMMARY_BYTES - 4);
  });

  test('line breaks, tabs and control characters become single spaces', () => {
    expect(excerpt('Fix\n\nthe\tbuild\u0007 now  ', 100)).toBe('Fix the build now');
  });
});

describe('truncateUtf8', () => {
  test('leaves text that fits alone', () => {
    expect(truncateUtf8('abc', 3)).toBe('abc');
  });
  test('marks a cut with an ellipsis inside the budget', () => {
    expect(truncateUtf8('abcdef', 5)).toBe('ab…');
    expect(utf8Length('ab…')).toBe(5);
  });
  test('returns nothing when even the ellipsis does not fit', () => {
    expect(truncateUtf8('abcdef', 2)).toBe('');
  });
});

describe('the start metadata', () => {
  test('carries the project and job as search attributes and the settings in the details', () => {
    const input = checkFollowUpInput({
      ...ref,
      prompt: 'Go',
      polling: { initialInterval: '10s', backoffCoefficient: 1.5 },
    });
    const metadata = followUpStartMetadata(input);
    expect(metadata.typedSearchAttributes.map((pair) => [pair.key.name, pair.value])).toEqual([
      ['AgentProjectId', 'proj-1'],
      ['AgentJobId', 'job-7'],
    ]);
    expect(metadata.staticDetails).toContain(
      'Polling: from 10s, ×1.5, up to 1m; gives up after 1d; settle window 30s; ambiguous sends: reconcile.',
    );
  });

  test('the details quote at most about 1 KB of the prompt; the rest stays in the input', () => {
    const details = followUpDetails(checkFollowUpInput({ ...ref, prompt: 'p'.repeat(50_000) }));
    expect(utf8Length(details)).toBeLessThan(2_000);
    expect(details).toContain('Polling: from 5s, ×2, up to 1m; gives up after 1d; settle window 30s');
  });
});
