/**
 * `npm run histories:record`: runs follow-ups on a local stack and writes their histories to test/histories/, for
 * the replay test. Until the first release (v1.0.0) these are the one baseline set, re-recorded when the workflow
 * changes. From the release on, keep every recorded file: running follow-ups have those histories, and a change that
 * would not replay them must be guarded with `patched()` (README, "Upgrading"; docs/DEVELOPMENT.md).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { checkFollowUpInput } from '../../src/client';
import { startLocalStack, type LocalStack } from '../stack/local-stack';
import { coordinatorWorkflowId, watcherWorkflowId } from '../../src/kernel/workflow-ids';
import { followUpStartMetadata } from '../../src/client/start-metadata';
import { watchShardOf } from '../../src/watch/watcher-book';
import type { FollowUpInput } from '../../src/client/input';
import type { followUpWorkflow } from '../../src/workflows/follow-up/follow-up';
const OUT_DIR = join(__dirname, '..', '..', '..', 'test', 'histories');
/** Prefix of the files this version of the workflow writes; bump it when the workflow's history shape changes. */
const HISTORY_VERSION = 'baseline';

interface Scenario {
  name: string;
  workMs: number;
  faults?: number;
  dropSend?: boolean;
  /** Started the way another SDK or the Web UI would: no summary, no search attributes (the workflow adds them). */
  bareStart?: boolean;
  /** The job is busy with earlier work for this long when the follow-up starts. */
  busyMs?: number;
  /** An earlier run delivered the message and then failed (its key was refused): this run resumes from it. */
  earlierRunFailed?: boolean;
  /** Run on a server that suggests continue-as-new after this many events. */
  continueAsNewAfterEvents?: number;
  /** Other follow-ups to the same job started just before: this one waits its turn in the job's lane. */
  queuedBehind?: number;
  /** Past the settle window after the send, a caller asks for a read now (its next poll is far off). */
  readNow?: boolean;
  /** Waits through shared job watchers of this many shards; the watcher's own history is recorded beside it. */
  watchShards?: number;
  /**
   * The first send meets a 429 with this Retry-After (seconds): the project's coordinator pauses its sends and grants
   * a probe. Recorded in a project of its own, with the coordinator's history beside it.
   */
  refusedFor?: number;
  polling: FollowUpInput['polling'];
}

const SCENARIOS: Scenario[] = [
  // Send, a poll that fails past its retries, more polls, completion with a pull request.
  {
    name: 'completed-after-poll-error',
    workMs: 2_500,
    faults: 4,
    polling: { initialInterval: 200, maxInterval: 500, timeout: '1m' },
  },
  // The first run of a chain: the server suggests continue-as-new early, so the first run carries its state over.
  {
    name: 'continued-as-new',
    workMs: 2_500,
    continueAsNewAfterEvents: 12,
    polling: { initialInterval: 200, maxInterval: 500, timeout: '1m' },
  },
  // A job busy with earlier work: the follow-up waits until it is idle, then sends.
  {
    name: 'waited-for-idle',
    workMs: 1_500,
    busyMs: 1_500,
    polling: { initialInterval: 200, maxInterval: 500, timeout: '1m' },
  },
  // A second run of a follow-up whose first run delivered and then failed: it resumes, it does not send.
  {
    name: 'resumed-from-earlier-run',
    workMs: 2_500,
    earlierRunFailed: true,
    polling: { initialInterval: 200, maxInterval: 500, timeout: '1m' },
  },
  // A send whose connection drops after the API took it: reconciled by reading the job, never resent.
  {
    name: 'reconciled-send',
    workMs: 2_500,
    dropSend: true,
    polling: { initialInterval: 200, maxInterval: 500, timeout: '1m' },
  },
  // A job that outlives the follow-up's timeout.
  // The first send meets a 429 (Retry-After 1 s): the coordinator pauses the project, then grants this follow-up the probe.
  { name: 'refused-then-probed', workMs: 500, refusedFor: 1, polling: { initialInterval: 200, maxInterval: 500 } },
  { name: 'timed-out', workMs: 600_000, polling: { initialInterval: 200, maxInterval: 500, timeout: '2s' } },
  // Queued behind two follow-ups to the same job; the project coordinator's own history is recorded beside it.
  {
    name: 'queued-in-lane',
    workMs: 1_000,
    queuedBehind: 2,
    polling: { initialInterval: 200, maxInterval: 500, timeout: '1m' },
  },
  // Started without our client: the workflow sets AgentProjectId and AgentJobId itself.
  // The wait after the send is cancelled and started again with a read at once: it finds the result.
  {
    name: 'read-now',
    workMs: 300,
    readNow: true,
    polling: { initialInterval: '10m', maxInterval: '10m', settleWindow: '1s', timeout: '30m' },
  },
  {
    name: 'started-without-attributes',
    workMs: 1_500,
    bareStart: true,
    polling: { initialInterval: 200, maxInterval: 500, timeout: '1m' },
  },
  // Shared watching: the send registers the first wait with the job's watcher (starting it), which answers it.
  {
    name: 'shared-watch',
    workMs: 1_500,
    watchShards: 2,
    polling: { initialInterval: 200, maxInterval: 500, timeout: '1m' },
  },
  // Shared watching and a job busy with earlier work: the watcher reads for the wait before the send as for the one after.
  {
    name: 'shared-waited-for-idle',
    workMs: 1_500,
    busyMs: 1_500,
    watchShards: 2,
    polling: { initialInterval: 200, maxInterval: 500, timeout: '1m' },
  },
  // Shared watching and a read asked for: the follow-up makes it itself, and its result ends the wait.
  {
    name: 'shared-read-now',
    workMs: 300,
    watchShards: 2,
    readNow: true,
    polling: { initialInterval: '10m', maxInterval: '10m', settleWindow: '1s', timeout: '30m' },
  },
];

async function main(): Promise<void> {
  mkdirSync(OUT_DIR, { recursive: true });
  for (const scenario of SCENARIOS) {
    const stack = await startLocalStack({
      taskQueue: 'record-histories',
      ...(scenario.continueAsNewAfterEvents
        ? {
            serverArgs: [
              '--dynamic-config-value',
              `limit.historyCount.suggestContinueAsNew=${scenario.continueAsNewAfterEvents}`,
            ],
          }
        : {}),
      // Each scenario records one way of waiting: its follow-up polls for itself unless it names shards.
      watchShards: scenario.watchShards ?? 0,
    });
    try {
      await record(stack, scenario);
    } finally {
      await stack.teardown();
    }
  }
}

async function record(stack: LocalStack, scenario: Scenario): Promise<void> {
  const ref = {
    projectId: scenario.refusedFor === undefined ? 'history-project' : `history-project-${scenario.name}`,
    jobId: `history-${scenario.name}`,
  };
  stack.simulator.addJob({
    ...ref,
    workMs: scenario.workMs,
    ...(scenario.busyMs ? { busyForMs: scenario.busyMs } : {}),
  });
  if (scenario.refusedFor !== undefined) {
    stack.simulator.setJobFaults(ref.projectId, ref.jobId, [
      { operation: 'send', kind: 'status', status: 429, retryAfter: String(scenario.refusedFor), times: 1 },
    ]);
  }
  if (scenario.dropSend) {
    stack.simulator.setJobFaults(ref.projectId, ref.jobId, [
      { operation: 'send', kind: 'drop-after-processing', times: 1 },
    ]);
  }
  const input: FollowUpInput = { ...ref, prompt: `Recorded follow-up: ${scenario.name}`, polling: scenario.polling };
  const start = () =>
    stack.env.client.workflow.start<typeof followUpWorkflow>('followUpWorkflow', {
      taskQueue: 'record-histories',
      workflowId: `history-${scenario.name}`,
      args: [input],
      ...(scenario.bareStart ? {} : followUpStartMetadata(checkFollowUpInput(input))),
    });
  const ahead = await Promise.all(
    Array.from({ length: scenario.queuedBehind ?? 0 }, (_, index) =>
      stack.followUps
        .start({ ...input, prompt: `${input.prompt} (ahead ${index + 1})` })
        .then(({ workflowId }) => workflowId),
    ),
  );
  let handle = await start();
  if (scenario.faults || scenario.earlierRunFailed) {
    // After the send, so the failures hit polls rather than the read before the send.
    while (stack.simulator.counts(ref.projectId, ref.jobId).messagesAccepted === 0)
      await new Promise((r) => setTimeout(r, 50));
    stack.simulator.injectFaults(ref.projectId, ref.jobId, [
      { operation: 'get', status: scenario.earlierRunFailed ? 401 : 503, times: scenario.faults ?? 1 },
    ]);
  }
  if (scenario.earlierRunFailed) {
    await stack.run(handle.result().catch(() => undefined));
    handle = await start();
  }
  if (scenario.readNow) {
    const { workflowId } = handle;
    await stack.run(
      (async () => {
        while (stack.simulator.counts(ref.projectId, ref.jobId).messagesAccepted === 0)
          await new Promise((r) => setTimeout(r, 50));
        await new Promise((r) => setTimeout(r, 2_500));
        await stack.followUps.pollNow(workflowId);
      })(),
    );
  }
  await stack.run(handle.result().catch(() => undefined));
  const history = await stack.env.client.workflow
    .getHandle(handle.workflowId, handle.firstExecutionRunId)
    .fetchHistory();
  const file = join(OUT_DIR, `${HISTORY_VERSION}-${scenario.name}.json`);
  writeFileSync(file, `${JSON.stringify(JSON.parse(historyToJSON(history)), null, 2)}\n`);
  console.log(`wrote ${file} (${history.events?.length ?? 0} events)`);
  if (scenario.watchShards !== undefined) {
    // The watcher stays running (it waits ten minutes for more waits): a partial history replays all the same.
    const watcherId = watcherWorkflowId(
      'record-histories',
      watchShardOf(ref.projectId, ref.jobId, scenario.watchShards),
    );
    const watcher = await stack.env.client.workflow.getHandle(watcherId).fetchHistory();
    const watcherFile = join(OUT_DIR, `${HISTORY_VERSION}-watcher-of-${scenario.name}.json`);
    writeFileSync(watcherFile, `${JSON.stringify(JSON.parse(historyToJSON(watcher)), null, 2)}\n`);
    console.log(`wrote ${watcherFile} (${watcher.events?.length ?? 0} events)`);
  }
  if (scenario.refusedFor !== undefined) {
    const coordinator = await stack.env.client.workflow.getHandle(coordinatorWorkflowId(ref.projectId)).fetchHistory();
    const coordinatorFile = join(OUT_DIR, `${HISTORY_VERSION}-coordinator-${scenario.name}.json`);
    writeFileSync(
      coordinatorFile,
      `${JSON.stringify(JSON.parse(historyToJSON(coordinator)), null, 2)}
`,
    );
    console.log(`wrote ${coordinatorFile} (${coordinator.events?.length ?? 0} events)`);
  }
  if (ahead.length > 0) {
    await Promise.all(ahead.map((workflowId) => stack.run(stack.followUps.result(workflowId))));
    // The coordinator is still running (it keeps its window for an hour): a partial history replays all the same.
    const lane = await stack.env.client.workflow.getHandle(coordinatorWorkflowId(ref.projectId)).fetchHistory();
    const laneFile = join(OUT_DIR, `${HISTORY_VERSION}-coordinator-served-${ahead.length + 1}.json`);
    writeFileSync(laneFile, `${JSON.stringify(JSON.parse(historyToJSON(lane)), null, 2)}\n`);
    console.log(`wrote ${laneFile} (${lane.events?.length ?? 0} events)`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
