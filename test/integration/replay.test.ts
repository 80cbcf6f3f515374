/**
 * Replays committed histories against today's workflow code. Until the first release these are one baseline set,
 * re-recorded when the workflow changes (npm run histories:record). From v1.0.0 on, a change that would break running
 * follow-ups (a different command order, a removed activity) fails here: guard it with `patched()` and record new
 * histories beside the released ones, never instead of them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DeterminismViolationError } from '@temporalio/workflow';
import { Worker } from '@temporalio/worker';
import { coordinatorWorkflowId } from '../../src/kernel/workflow-ids';
import { installQuietRuntime } from '../support/quiet-runtime';

installQuietRuntime();

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

test('there are committed histories to replay, one per way a follow-up runs', () => {
  expect(historyFiles.sort()).toEqual([
    'baseline-completed-after-poll-error.json',
    'baseline-continued-as-new.json',
    'baseline-coordinator-refused-then-probed.json',
    'baseline-coordinator-served-3.json',
    'baseline-queued-in-lane.json',
    'baseline-read-now.json',
    'baseline-reconciled-send.json',
    'baseline-refused-then-probed.json',
    'baseline-resumed-from-earlier-run.json',
    'baseline-shared-read-now.json',
    'baseline-shared-waited-for-idle.json',
    'baseline-shared-watch.json',
    'baseline-started-without-attributes.json',
    'baseline-timed-out.json',
    'baseline-waited-for-idle.json',
    'baseline-watcher-of-shared-read-now.json',
    'baseline-watcher-of-shared-waited-for-idle.json',
    'baseline-watcher-of-shared-watch.json',
  ]);
});

test('the workflow replays every committed history without a determinism error (one replay worker for all)', async () => {
  // A coordinator checks that it runs under its own project's id, so its history replays under that id.
  // A scenario with a project of its own (record-history.ts) names it after itself.
  const workflowIdOf = (file: string) => {
    const scenario = /-coordinator-(.+)\.json$/.exec(file)?.[1];
    if (scenario === undefined) return file;
    return coordinatorWorkflowId(scenario.startsWith('served-') ? 'history-project' : `history-project-${scenario}`);
  };
  const histories = historyFiles.map((file) => ({ workflowId: workflowIdOf(file), history: loadHistory(file) }));
  const failures: string[] = [];
  for await (const result of Worker.runReplayHistories({ workflowBundle: bundle() }, histories)) {
    if (result.error) failures.push(`${result.workflowId}: ${String(result.error)}`);
  }
  expect(failures).toEqual([]);
});

test('replay does catch a history the code could not have produced', async () => {
  const history = loadHistory('baseline-completed-after-poll-error.json');
  const scheduled = history.events.find((event) => event.activityTaskScheduledEventAttributes) as {
    activityTaskScheduledEventAttributes: { activityType: { name: string } };
  };
  scheduled.activityTaskScheduledEventAttributes.activityType.name = 'someOtherActivity';
  const results = [];
  for await (const result of Worker.runReplayHistories({ workflowBundle: bundle() }, [
    { workflowId: 'changed', history },
  ]))
    results.push(result);
  expect(results).toHaveLength(1);
  expect(results[0]?.error).toBeInstanceOf(DeterminismViolationError);
});
