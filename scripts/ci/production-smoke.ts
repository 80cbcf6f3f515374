/**
 * `npm run smoke:production`: the production path, run here. Brings up the compose topology without Docker
 * (scripts/stack/production-stack.sh: PostgreSQL, Temporal server 1.32.1, its set-up, the simulator, two workers) and
 * checks what a deployment relies on: follow-ups to several jobs of one project and three to one job, through a
 * worker SIGKILL and a Temporal server restart, each message accepted exactly once, the lane's messages in order,
 * one burst to the project sent at once within its budget (the project's coordinator counts every send, none waited) with
 * no 429, and search attributes found through PostgreSQL visibility.
 * Exits non-zero naming every check that failed; `--keep` leaves the stack up for a look.
 */
import { execFileSync } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { FollowUpClient, type FollowUpResult } from '../../src/client';
import type { JobCounts } from '../../src/simulator/simulator';

const STACK = `${__dirname}/../../../scripts/stack/production-stack.sh`;
const PORT_BASE = Number(process.env.PRODUCTION_STACK_PORT_BASE ?? 17000);
const SIMULATOR = `http://127.0.0.1:${PORT_BASE + 787}`;
/** The production default: the smoke test's 9 sends are one burst well within it. */
const SENDS_PER_HOUR = process.env.SMOKE_SENDS_PER_HOUR ?? '80';
const PROJECT = 'smoke-project';
const JOBS = 6;
const LANE_PROMPTS = ['First, in the lane', 'Second, in the lane', 'Third, in the lane'];
const POLLING = { initialInterval: '1s', backoffCoefficient: 1.5, maxInterval: '3s', timeout: '10m' };

function stack(...args: string[]): void {
  execFileSync('bash', [STACK, ...args], {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, AGENT_SENDS_PER_PROJECT_PER_HOUR: SENDS_PER_HOUR, SIMULATOR_WORK_MS: '4000' },
  });
}

async function simulator<T>(path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${SIMULATOR}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`simulator ${path}: HTTP ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

const counts = async (jobId: string) =>
  (await simulator<{ counts: JobCounts }>(`/_simulator/jobs/${PROJECT}/${jobId}`)).counts;

async function main(): Promise<void> {
  const keep = process.argv.includes('--keep');
  const failures: string[] = [];
  const check = (ok: boolean, what: string) => {
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
    if (!ok) failures.push(what);
  };

  stack('down', '--volumes');
  stack('up', '--workers', '2');
  const connection = await Connection.connect({ address: `127.0.0.1:${PORT_BASE + 233}` });
  const followUps = new FollowUpClient(new Client({ connection }), { taskQueue: 'agent-followup' });
  try {
    const jobIds = Array.from({ length: JOBS }, (_, index) => `job-${index + 1}`);
    for (const jobId of [...jobIds, 'lane-job'])
      await simulator('/_simulator/jobs', { projectId: PROJECT, jobId, workMs: 4_000 });

    const started: Array<{ jobId: string; workflowId: string }> = [];
    for (const jobId of jobIds) {
      const { workflowId } = await followUps.start({
        projectId: PROJECT,
        jobId,
        prompt: `Smoke test of ${jobId}`,
        polling: POLLING,
      });
      started.push({ jobId, workflowId });
    }
    for (const prompt of LANE_PROMPTS) {
      const { workflowId } = await followUps.start({ projectId: PROJECT, jobId: 'lane-job', prompt, polling: POLLING });
      started.push({ jobId: 'lane-job', workflowId });
    }
    console.log(`started ${started.length} follow-ups`);

    // Faults in the middle of the work: a worker dies without a goodbye, and the server restarts on its database.
    await waitUntil(async () => (await counts('job-2')).messagesAccepted >= 1, 'the first sends');
    stack('kill', 'worker-1');
    stack('stop', 'temporal');
    stack('start', 'temporal');
    stack('start', 'worker-1');

    const results = await Promise.all(started.map(({ workflowId }) => followUps.result(workflowId)));
    check(
      results.every((result) => result.outcome === 'completed'),
      `all ${results.length} follow-ups completed (${results.map((result) => result.outcome).join(', ')})`,
    );

    const perJob = await Promise.all(jobIds.map(counts));
    check(
      perJob.every((job) => job.messagesAccepted === 1),
      `each of ${JOBS} jobs accepted its message exactly once (${perJob.map((job) => job.messagesAccepted).join(', ')})`,
    );

    const lane = await counts('lane-job');
    const laneResults = results.slice(JOBS);
    check(
      JSON.stringify([...lane.prompts].sort()) === JSON.stringify([...LANE_PROMPTS].sort()) &&
        lane.statusesAtSend.every((status) => status !== 'active'),
      `the lane sent its 3 messages once each, one at a time (job status at each send: ${lane.statusesAtSend.join(', ')})`,
    );
    // The simulator numbers each agent run's pull request 101, 102, ... in message order: the n-th message's
    // follow-up must return pull request 100 + n, not another's.
    const attributed = LANE_PROMPTS.every((prompt, index) =>
      laneResults[index]?.prLink?.endsWith(`/pull/${101 + lane.prompts.indexOf(prompt)}`),
    );
    check(
      attributed,
      `each follow-up in the lane returned the pull request of its own message (${laneResults.map((result: FollowUpResult) => result.prLink).join(', ')})`,
    );

    check(
      [...perJob, lane].every((job) => job.rateLimited === 0),
      'no send met a 429',
    );
    // The project's coordinator counted every send, through the SIGKILL and the restart, and held none back: a burst
    // within the budget goes out at once.
    const budget = await followUps.projectBudget(PROJECT).catch(() => null);
    check(
      budget !== null &&
        budget.sentInWindow >= JOBS + LANE_PROMPTS.length &&
        budget.totals.waitedForBudget === 0 &&
        budget.limit === Number(SENDS_PER_HOUR),
      `the project's coordinator counted all ${JOBS + LANE_PROMPTS.length} sends in its window of ${SENDS_PER_HOUR} and none waited (${JSON.stringify(budget && { sentInWindow: budget.sentInWindow, limit: budget.limit, totals: budget.totals })})`,
    );

    // Visibility is eventually consistent: give it a moment after the last result.
    let found = 0;
    const query = `AgentProjectId = "${PROJECT}" AND AgentJobStatus = "completed"`;
    await waitUntil(
      async () => (found = (await followUps.client.workflow.count(query)).count) >= started.length,
      'visibility',
    ).catch(() => undefined);
    check(
      found === started.length,
      `PostgreSQL visibility finds all ${started.length} by their search attributes (found ${found})`,
    );
  } finally {
    await connection.close();
    if (!keep) stack('down', '--volumes');
  }
  if (failures.length > 0) {
    console.error(`production smoke test: ${failures.length} check(s) failed`);
    process.exit(1);
  }
  console.log('production smoke test: all checks passed');
}

async function waitUntil(condition: () => Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt += 1) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`gave up waiting for ${what}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
