/**
 * `npm run demo`: one follow-up end to end on the embedded default stack (a local Temporal dev server with its Web
 * UI, the agent API simulator and a worker), printing progress and the final job.
 * `--keep` leaves the stack up afterwards (until Ctrl-C) so the follow-up can be looked at in the Web UI; `--ui-port`
 * and `--temporal-port` move it off 8233 and a free port (`npm run demo -- --keep --ui-port 8234`).
 */
import { Command, InvalidArgumentError } from 'commander';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { demoteRoutineLines } from '../../src/observability/logging';
import { ensureTemporalCli } from './temporal-cli';
import { startLocalStack } from './local-stack';
import { followUpListUrl } from './web-ui-view';
import { describeProgress } from '../../src/command-line/render';

function port(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1 || number > 65_535)
    throw new InvalidArgumentError('must be a port number (1-65535)');
  return number;
}

const program = new Command('npm run demo --')
  .description('One follow-up end to end on a local Temporal dev server, the agent API simulator and a worker.')
  .option('--keep', 'keep the dev server, its Web UI and the worker up afterwards, until Ctrl-C')
  .option('--ui-port <port>', 'the Temporal Web UI', port, 8233)
  .option('--temporal-port <port>', 'the dev server (default: a free port)', port)
  .showSuggestionAfterError(true);

async function main(): Promise<void> {
  program.parse();
  const { keep, uiPort, temporalPort } = program.opts<{ keep?: boolean; uiPort: number; temporalPort?: number }>();
  // Keep the demo's output to what it shows; the worker's own logs go to WARN and above.
  // The sends worker's "No workflows registered" and other routine SDK lines are no warning to a person trying it.
  Runtime.install({ logger: demoteRoutineLines(new DefaultLogger('WARN')) });
  const cli = ensureTemporalCli();
  if (!cli)
    throw new Error('could not install the Temporal CLI (see above); set TEMPORAL_CLI_PATH to a `temporal` binary');
  process.env.TEMPORAL_CLI_PATH = cli;

  const stack = await startLocalStack({
    ui: true,
    uiPort,
    ...(temporalPort !== undefined ? { temporalPort } : {}),
    simulator: { defaultWorkMs: 6_000 },
  });
  try {
    const projectId = 'demo-project';
    const jobId = 'demo-job';
    stack.simulator.addJob({ projectId, jobId, outcome: 'completed' });
    console.log(`Temporal Web UI: ${stack.uiUrl}`);
    console.log(`Agent API simulator: ${stack.simulator.baseUrl}\n`);

    const input = {
      projectId,
      jobId,
      prompt: 'Please also add a unit test for the date parser and update the changelog.',
      polling: { initialInterval: '1s', backoffCoefficient: 1.5, maxInterval: '3s', timeout: '5m' },
    };
    const result = await stack.run(
      (async () => {
        const { workflowId } = await stack.followUps.start(input, { workflowId: `demo-followup-${Date.now()}` });
        console.log(`Started follow-up ${workflowId}`);
        console.log(
          `See it in the Web UI: ${stack.uiUrl}/namespaces/default/workflows/${encodeURIComponent(workflowId)}`,
        );
        const query = `AgentJobId="${jobId}"`;
        console.log(`Every follow-up of this job: ${followUpListUrl(stack.uiUrl as string, 'default', query)}\n`);
        let last = '';
        const outcome = stack.followUps.result(workflowId);
        let finished = false;
        void outcome.finally(() => (finished = true)).catch(() => undefined);
        while (!finished) {
          try {
            const progress = await stack.followUps.progress(workflowId);
            // The same progress line as `agent-followup send --wait`.
            const line = describeProgress(progress);
            if (line !== last) console.log(line);
            last = line;
          } catch {
            // between runs, or already finished
          }
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
        return outcome;
      })(),
    );
    console.log(
      `\nThe job ended ${result.outcome} after ${result.polls} poll(s). Pull request: ${result.prLink ?? 'none'}`,
    );
    console.log(JSON.stringify(result.job, null, 2));
    console.log(
      `\nMessages the simulator accepted for this job: ${stack.simulator.counts(projectId, jobId).messagesAccepted}`,
    );
    if (keep) {
      console.log(
        `\n--keep: the dev server (${stack.address}), its Web UI (${stack.uiUrl}) and the worker stay up. Press Ctrl-C to stop.`,
      );
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
    }
  } finally {
    await stack.teardown();
  }
}

main().catch((error: unknown) => {
  console.error('demo failed:', error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
