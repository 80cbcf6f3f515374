/**
 * Replays committed histories against today's workflow code. A change that would break running follow-ups (a
 * different command order, a removed activity) fails here; guard such a change with `patched()` and record a new
 * history beside the old ones (npm run histories:record).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DeterminismViolationError } from '@temporalio/workflow';
import { Worker } from '@temporalio/worker';

const HISTORIES_DIR = join(__dirname, '..', 'histories');
const historyFiles = readdirSync(HISTORIES_DIR).filter((file) => file.endsWith('.json'));

function bundle() {
  const codePath = process.env.TEST_WORKFLOW_BUNDLE;
  if (!codePath) throw new Error('run with `npm test` (the jest globalSetup bundles the workflows)');
  return { codePath };
}

function loadHistory(file: string): { events: Array<Record<string, unknown>> } {
  return JSON.parse(readFileSync(join(HISTORIES_DIR, file), 'utf8')) as { events: Array<Record<string, unknown>> };
}

test('there are committed histories to replay', () => {
  expect(historyFiles).toEqual(
    expect.arrayContaining([
      // v0.1 (before reconciliation): running follow-ups of that version must still replay.
      'v0.1-completed-after-poll-error.json',
      'v0.1-continued-as-new.json',
      'v0.1-timed-out.json',
      'v0.2-completed-after-poll-error.json',
      'v0.2-continued-as-new.json',
      'v0.2-reconciled-send.json',
      'v0.2-timed-out.json',
      // v0.3: search attributes kept current (guarded by SEARCH_ATTRIBUTES_PATCH); v0.2 runs replay without upserts.
      'v0.3-completed-after-poll-error.json',
      'v0.3-continued-as-new.json',
      'v0.3-reconciled-send.json',
      'v0.3-started-without-attributes.json',
      'v0.3-timed-out.json',
    ]),
  );
});

test.each(historyFiles)('the workflow replays %s without a determinism error', async (file) => {
  await expect(Worker.runReplayHistory({ workflowBundle: bundle() }, loadHistory(file))).resolves.toBeUndefined();
});

test('replay does catch a history the code could not have produced', async () => {
  const history = loadHistory('v0.2-completed-after-poll-error.json');
  const scheduled = history.events.find((event) => event.activityTaskScheduledEventAttributes) as {
    activityTaskScheduledEventAttributes: { activityType: { name: string } };
  };
  scheduled.activityTaskScheduledEventAttributes.activityType.name = 'someOtherActivity';
  await expect(Worker.runReplayHistory({ workflowBundle: bundle() }, history)).rejects.toThrow(DeterminismViolationError);
});
