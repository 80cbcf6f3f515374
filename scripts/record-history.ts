/**
 * `npm run histories:record`: runs follow-ups on a local stack and writes their histories to test/histories/, for
 * the replay test. Record new histories when the workflow changes in a way that old histories do not cover; keep the
 * old files, since running workflows still have those histories (that is what `patched` guards).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { checkFollowUpInput } from '../src/client';
import { startLocalStack } from '../src/dev/local-stack';
import { followUpStartMetadata } from '../src/follow-up/start-metadata';
import type { FollowUpInput } from '../src/follow-up/input';
import type { followUpWorkflow } from '../src/workflows/follow-up';

const OUT_DIR = join(__dirname, '..', '..', 'test', 'histories');
/** Prefix of the files this version of the workflow writes; bump it when the workflow's history shape changes. */
const HISTORY_VERSION = 'v0.3';

interface Scenario {
  name: string;
  workMs: number;
  faults?: number;
  dropSend?: boolean;
  /** Started the way another SDK or the Web UI would: no summary, no search attributes (the workflow adds them). */
  bareStart?: boolean;
  polling: FollowUpInput['polling'];
}

const SCENARIOS: Scenario[] = [
  // Send, a poll that fails past its retries, more polls, completion with a pull request.
  { name: 'completed-after-poll-error', workMs: 2_500, faults: 4, polling: { initialInterval: 200, maxInterval: 500, timeout: '1m' } },
  // The first run of a chain: two polls, then continue-as-new.
  { name: 'continued-as-new', workMs: 4_000, polling: { initialInterval: 200, maxInterval: 200, timeout: '1m', maxPollsPerRun: 2 } },
  // A send whose connection drops after the API took it: reconciled by reading the job, never resent.
  { name: 'reconciled-send', workMs: 2_500, dropSend: true, polling: { initialInterval: 200, maxInterval: 500, timeout: '1m' } },
  // A job that outlives the follow-up's timeout.
  { name: 'timed-out', workMs: 600_000, polling: { initialInterval: 200, maxInterval: 500, timeout: '2s' } },
  // Started without our client: the workflow sets AgentProjectId and AgentJobId itself.
  { name: 'started-without-attributes', workMs: 1_500, bareStart: true, polling: { initialInterval: 200, maxInterval: 500, timeout: '1m' } },
];

async function main(): Promise<void> {
  const stack = await startLocalStack({ taskQueue: 'record-histories' });
  try {
    mkdirSync(OUT_DIR, { recursive: true });
    for (const scenario of SCENARIOS) {
      const ref = { projectId: 'history-project', jobId: `history-${scenario.name}` };
      stack.simulator.addJob({ ...ref, workMs: scenario.workMs });
      if (scenario.dropSend) {
        stack.simulator.setJobFaults(ref.projectId, ref.jobId, [{ operation: 'send', kind: 'drop-after-processing', times: 1 }]);
      }
      const input: FollowUpInput = { ...ref, prompt: `Recorded follow-up: ${scenario.name}`, polling: scenario.polling };
      const handle = await stack.env.client.workflow.start<typeof followUpWorkflow>('followUpWorkflow', {
        taskQueue: 'record-histories',
        workflowId: `history-${scenario.name}-${Date.now()}`,
        args: [input],
        ...(scenario.bareStart ? {} : followUpStartMetadata(checkFollowUpInput(input))),
      });
      if (scenario.faults) {
        // After the send, so the failures hit polls rather than the read before the send.
        while (stack.simulator.counts(ref.projectId, ref.jobId).messagesAccepted === 0) await new Promise((r) => setTimeout(r, 50));
        stack.simulator.injectFaults(ref.projectId, ref.jobId, [{ operation: 'get', status: 503, times: scenario.faults }]);
      }
      await stack.run(handle.result().catch(() => undefined));
      const history = await stack.env.client.workflow.getHandle(handle.workflowId, handle.firstExecutionRunId).fetchHistory();
      const file = join(OUT_DIR, `${HISTORY_VERSION}-${scenario.name}.json`);
      writeFileSync(file, `${JSON.stringify(JSON.parse(historyToJSON(history)), null, 2)}\n`);
      console.log(`wrote ${file} (${history.events?.length ?? 0} events)`);
    }
  } finally {
    await stack.teardown();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
