/** The CLI's --json shapes: the documented schemas are the ones the code checks against, and reports fill them. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FollowUpReportSchema, followUpReport, jsonSchemas } from '../../src/command-line/json-output';
import { FAILURE_TYPES, workflowContractSchemas } from '../../src/client/workflow-contract';
import type { FollowUpProgress } from '../../src/kernel/types';

test.each([
  ['json', jsonSchemas()],
  ['json/workflow', workflowContractSchemas()],
] as const)(
  'docs/%s holds exactly the schemas the code defines (regenerate with npm run json-schemas)',
  (folder, schemas) => {
    const dir = join(__dirname, '..', '..', 'docs', folder);
    expect(
      readdirSync(dir)
        .filter((name) => name.endsWith('.schema.json'))
        .sort(),
    ).toEqual(Object.keys(schemas).sort());
    for (const [name, schema] of Object.entries(schemas)) {
      const committed: unknown = JSON.parse(readFileSync(join(dir, name), 'utf8'));
      expect({ name, schema: committed }).toEqual({ name, schema: JSON.parse(JSON.stringify(schema)) });
    }
  },
);

const progress: FollowUpProgress = {
  phase: 'waiting',
  projectId: 'p',
  jobId: 'j',
  lastStatus: 'active',
  lastStatusUnknown: false,
  waitingFor: 'work',
  queue: null,
  polls: 2,
  lastError: null,
  errorsSince: null,
  sentAt: '2026-11-25T00:00:00.000Z',
  deadline: '2026-11-25T02:00:00.000Z',
  runs: 1,
  sendAttempts: 1,
  delivery: 'response',
  prLink: null,
  outcome: null,
  poll: { polls: 5, nextPollAt: null, lastStatus: 'active', lastError: null, failingSince: null, failedReads: 0 },
};

test("a running follow-up: no outcome, its progress, and one count of reads (the workflow's and the running wait's)", () => {
  const report = followUpReport({ workflowId: 'w', executionStatus: 'RUNNING', progress }, null);
  expect(FollowUpReportSchema.parse(report)).toMatchObject({
    workflowId: 'w',
    attached: null,
    outcome: null,
    result: null,
    polls: 7,
  });
});

test('a follow-up that did not end with a job: its kind, type and message, and no result', () => {
  const report = followUpReport(
    {
      workflowId: 'w',
      executionStatus: 'FAILED',
      outcome: { kind: 'timed-out', type: 'FollowUpTimedOut', message: 'm' },
    },
    { workflowId: 'w', attached: true, startedAt: '2026-11-25T00:00:00.000Z', executionStatus: 'RUNNING' },
  );
  expect(FollowUpReportSchema.parse(report)).toMatchObject({
    attached: true,
    startedAt: '2026-11-25T00:00:00.000Z',
    outcome: { kind: 'timed-out', type: 'FollowUpTimedOut', message: 'm' },
    result: null,
    polls: null,
  });
});

test('the schema refuses what is not in the contract', () => {
  const report = followUpReport({ workflowId: 'w', executionStatus: 'RUNNING' }, null);
  expect(FollowUpReportSchema.safeParse({ ...report, surprise: 1 }).success).toBe(false);
});

test("docs/STARTING-FROM-OTHER-LANGUAGES.md's table of failure types names exactly the contract's", () => {
  const page = readFileSync(join(__dirname, '..', '..', 'docs', 'STARTING-FROM-OTHER-LANGUAGES.md'), 'utf8');
  const table = page.slice(page.indexOf('| type | outcome kind |'), page.indexOf('A cancelled follow-up'));
  const firstCells = table.split('\n').map((line) => line.split('|')[1] ?? '');
  const named = firstCells.flatMap((cell) => [...cell.matchAll(/`([A-Za-z]+)`/g)].map((match) => match[1]));
  expect([...new Set(named)].sort()).toEqual(Object.keys(FAILURE_TYPES).sort());
});
