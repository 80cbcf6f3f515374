/**
 * `npm run stack`: the pieces to try agent-followup by hand, kept up until Ctrl-C — a Temporal dev server with its
 * Web UI and our search attributes, the agent API simulator with seeded jobs, and a worker — on ports you choose,
 * with the exact CLI lines to try printed once everything is up.
 */
import { Command, InvalidArgumentError } from 'commander';
import { DefaultLogger, Runtime, type Logger } from '@temporalio/worker';
import { demoteRoutineLines, relevel } from '../../src/observability/logging';
import { ensureTemporalCli } from './temporal-cli';
import { startLocalStack } from './local-stack';
import { columnsConsoleSnippet, followUpListUrl } from './web-ui-view';
import { DEFAULT_SENDS_PER_PROJECT_PER_HOUR } from '../../src/kernel/send-budget-rule';

interface StackOptions {
  temporalPort: number;
  uiPort: number;
  simulatorPort: number;
  taskQueue: string;
  workMs: number;
  job: string[];
}

function port(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1 || number > 65_535)
    throw new InvalidArgumentError('must be a port number (1-65535)');
  return number;
}

function positive(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0) throw new InvalidArgumentError('must be a whole number of milliseconds');
  return number;
}

function job(value: string, previous: string[]): string[] {
  if (!/^[^/\s]+\/[^/\s]+$/.test(value))
    throw new InvalidArgumentError('must be PROJECT/JOB, e.g. demo-project/demo-job');
  return [...previous, value];
}

const program = new Command('npm run stack --')
  .description(
    'Start a Temporal dev server (with its Web UI), the agent API simulator and a worker, and keep them up until Ctrl-C.',
  )
  .option('--temporal-port <port>', 'the dev server (TEMPORAL_ADDRESS=localhost:<port>)', port, 7233)
  .option('--ui-port <port>', 'the Temporal Web UI', port, 8233)
  .option('--simulator-port <port>', 'the agent API simulator', port, 8787)
  .option('--task-queue <name>', 'the task queue the worker polls (TEMPORAL_TASK_QUEUE)', 'agent-followup')
  .option('--work-ms <ms>', 'how long the simulated agent works on each follow-up', positive, 20_000)
  .option('--job <project/job>', 'a job to seed in the simulator (repeatable; default demo-project/demo-job)', job, [])
  .showSuggestionAfterError(true);

/** Set on Ctrl-C or SIGTERM. */
let stopping = false;

/**
 * Ctrl-C reaches the dev server too (it shares the terminal's process group) and it stops at once, while the worker
 * drains: every report the worker then tries to make fails to connect, retried and logged at WARN. None of that is
 * news to a person who just pressed Ctrl-C, and the stack's state goes with its in-memory server anyway: once
 * stopping, only errors are printed.
 */
function quietOnceStopping(logger: Logger): Logger {
  return relevel(logger, (level) => (!stopping || level === 'ERROR' ? level : null));
}

async function main(): Promise<void> {
  program.parse();
  const options = program.opts<StackOptions>();
  const jobs = options.job.length > 0 ? options.job : ['demo-project/demo-job'];
  // The stack's own output is what it prints below; the worker logs warnings and errors only.
  // The sends worker's "No workflows registered" and other routine SDK lines are no warning to a person trying it.
  // Core's own lines come through the same logger (forward), so the stop below can quiet them too.
  Runtime.install({
    logger: quietOnceStopping(demoteRoutineLines(new DefaultLogger('WARN'))),
    telemetryOptions: { logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} } },
  });
  const cli = ensureTemporalCli();
  if (!cli)
    throw new Error('could not install the Temporal CLI (see above); set TEMPORAL_CLI_PATH to a `temporal` binary');
  process.env.TEMPORAL_CLI_PATH = cli;

  const stack = await startLocalStack({
    ui: true,
    uiPort: options.uiPort,
    temporalPort: options.temporalPort,
    taskQueue: options.taskQueue,
    simulator: { port: options.simulatorPort, defaultWorkMs: options.workMs },
  });
  for (const entry of jobs) {
    const [projectId, jobId] = entry.split('/') as [string, string];
    stack.simulator.addJob({ projectId, jobId, outcome: 'completed' });
  }
  const [projectId, jobId] = (jobs[0] as string).split('/') as [string, string];
  const env = `TEMPORAL_ADDRESS=${stack.address} TEMPORAL_TASK_QUEUE=${stack.taskQueue}`;
  console.log(
    [
      'agent-followup stack is up (Ctrl-C stops it all):',
      `  Temporal     ${stack.address}, namespace default (dev server; search attributes registered; send budget ${DEFAULT_SENDS_PER_PROJECT_PER_HOUR}/project/hour)`,
      `  Web UI       ${stack.uiUrl}`,
      `  Agent API    ${stack.simulator.baseUrl} (the simulator; jobs ${jobs.join(', ')}; each follow-up works ${options.workMs / 1000}s, then completes with a PR)`,
      `  Worker       task queue ${stack.taskQueue}, in this process`,
      '',
      'Try, in another terminal (after npm run build):',
      `  export ${env}`,
      `  npx agent-followup send --project ${projectId} --job ${jobId} --prompt "Add a test for the date parser" --wait`,
      `  npx agent-followup send --project ${projectId} --job ${jobId} --prompt "Then update the changelog"`,
      '  npx agent-followup status <the workflow id it printed>',
      `  npx agent-followup schedule create --project ${projectId} --job ${jobId} --prompt "Anything new?" --every 1m`,
      '  npx agent-followup schedule list',
      '  npx agent-followup budget show',
      `Every follow-up of the job in the Web UI: ${followUpListUrl(stack.uiUrl as string, 'default', `AgentJobId="${jobId}"`)}`,
      `Every follow-up: ${followUpListUrl(stack.uiUrl as string, 'default')}`,
      "  its columns (docs/WEB-UI.md): paste in the browser's console on that page, then reload:",
      `  ${columnsConsoleSnippet('default')}`,
      `Seed another job: curl -s -X POST ${stack.simulator.baseUrl}/_simulator/jobs -H 'content-type: application/json' -d '{"projectId":"p","jobId":"j"}'`,
      '',
    ].join('\n'),
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  stopping = true;
  console.log('Stopping the worker, the simulator and the dev server...');
  await stack.teardown();
}

main().catch((error: unknown) => {
  console.error('stack failed:', error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
