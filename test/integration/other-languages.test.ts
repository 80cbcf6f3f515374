/**
 * The starters of docs/STARTING-FROM-OTHER-LANGUAGES.md, run as their users run them: Python's `temporalio` (from PyPI,
 * in a venv) and Go's SDK (from the module proxy) start follow-ups by the workflow type's name against this file's
 * worker on the dev server, read progress, ask a read, await the result, cancel, and make a Temporal Schedule. What
 * they print is checked against the published contract (src/client/workflow-contract.ts). Both toolchains are
 * required in CI; elsewhere a missing one is skipped with the reason printed.
 */
import { execFile as execFileCallback, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { FollowUpWorker } from '../../src/worker/follow-up-worker';
import { followUpWorkflowId } from '../../src/client/ids';
import {
  AskedReadContract,
  FailureTypesContract,
  FollowUpProgressContract,
  FollowUpResultContract,
} from '../../src/client/workflow-contract';
import { FOLLOW_UP_WORKFLOW_TYPE } from '../../src/kernel/workflow-ids';
import { createHarness, uniqueJob, waitFor, type Harness } from '../support/harness';

const execFile = promisify(execFileCallback);
const ROOT = join(__dirname, '..', '..');
const CACHE = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'agent-followup', 'starters');

type Starter = (args: string[]) => Promise<Record<string, unknown>>;

/** The venv of starters/python/requirements.txt, made once per version of that file. */
async function pythonStarter(): Promise<string[]> {
  const requirements = join(ROOT, 'starters', 'python', 'requirements.txt');
  const version = createHash('sha256').update(readFileSync(requirements)).digest('hex').slice(0, 12);
  const venv = join(CACHE, `python-${version}`);
  const python = join(venv, 'bin', 'python');
  if (spawnSync(python, ['-c', 'import temporalio']).status !== 0) {
    mkdirSync(CACHE, { recursive: true });
    await execFile('python3', ['-m', 'venv', '--clear', venv]);
    await execFile(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '-r', requirements]);
  }
  return [python, join(ROOT, 'starters', 'python', 'follow_up.py')];
}

/** starters/go, built (Go's own caches keep the modules and the build). */
async function goStarter(): Promise<string[]> {
  mkdirSync(CACHE, { recursive: true });
  const binary = join(CACHE, 'follow-up-go');
  await execFile('go', ['build', '-o', binary, '.'], { cwd: join(ROOT, 'starters', 'go') });
  return [binary];
}

const toolchains = {
  Python: { has: spawnSync('python3', ['--version']).status === 0, build: pythonStarter },
  Go: { has: spawnSync('go', ['version']).status === 0, build: goStarter },
};
for (const [language, { has }] of Object.entries(toolchains)) {
  if (!has && process.env.CI === 'true') throw new Error(`CI runs the ${language} starter: install ${language}`);
  if (!has) console.warn(`${language} is not installed here: its starter's tests are skipped`);
}

let h: Harness;
let worker: FollowUpWorker;
let running: Promise<void>;
let queue: string;
const starters: Record<string, Starter> = {};

beforeAll(async () => {
  h = await createHarness();
  queue = h.taskQueue();
  worker = await h.worker(queue);
  running = worker.run();
  for (const [language, { has, build }] of Object.entries(toolchains)) {
    if (!has) continue;
    const [command, ...before] = await build();
    starters[language] = async (args) => {
      const env = {
        ...process.env,
        TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS,
        TEMPORAL_TASK_QUEUE: queue,
      };
      const { stdout } = await execFile(command!, [...before, ...args], { env });
      return JSON.parse(stdout) as Record<string, unknown>;
    };
  }
}, 600_000);

afterAll(async () => {
  worker?.shutdown();
  await running;
  await h?.close();
});

const languages = Object.entries(toolchains).map(([language, { has }]) => [language, has] as const);
const polling = JSON.stringify({ initialInterval: '200ms', maxInterval: '1s', settleWindow: 0 });

describe.each(languages)('the %s starter', (language, has) => {
  const maybe = has ? test : test.skip;
  const run = (...args: string[]) => starters[language]!(args);
  const start = async (job: { projectId: string; jobId: string }, prompt: string, ...more: string[]) =>
    String(
      (await run('start', '--project', job.projectId, '--job', job.jobId, '--prompt', prompt, ...more)).workflowId,
    );

  maybe(
    'starts by type name under the id the TypeScript client gives, reads progress, asks a read, and gets the result with its PR: one message sent',
    async () => {
      const job = uniqueJob(language.toLowerCase());
      h.simulator.addJob({ ...job, workMs: 1_500 });
      const prompt = `Also update the changelog (from ${language}).`;
      const workflowId = await start(job, prompt, '--polling', polling);
      expect(workflowId).toBe(followUpWorkflowId({ ...job, prompt }));
      // Started again while it runs: attached, nothing sent twice.
      expect(await start(job, prompt, '--polling', polling)).toBe(workflowId);

      const progress = FollowUpProgressContract.parse(await run('progress', workflowId));
      expect(progress).toMatchObject({ projectId: job.projectId, jobId: job.jobId });
      const asked = await run('poll-now', workflowId);
      expect(asked.requested).toBe(true);
      AskedReadContract.parse(asked);

      const ended = await run('result', workflowId);
      const result = FollowUpResultContract.parse(ended.result);
      expect(ended).toMatchObject({ kind: 'completed', prLink: result.prLink });
      expect(result.prLink).toBe(h.simulator.job(job.projectId, job.jobId).prLink);
      expect(result.prLink).toMatch(/^https:\/\//);
      expect(h.simulator.counts(job.projectId, job.jobId).messagesAccepted).toBe(1);
      // The workflow set its search attributes itself: listed as any follow-up is.
      const listed = await h.followUps(queue).list({ projectId: job.projectId });
      expect(listed.followUps.map((followUp) => followUp.workflowId)).toEqual([workflowId]);
      // Completed: a start of the same input is not sent again.
      expect(await run('start', '--project', job.projectId, '--job', job.jobId, '--prompt', prompt)).toMatchObject({
        workflowId,
        alreadyCompleted: true,
      });
      expect(h.simulator.counts(job.projectId, job.jobId).messagesAccepted).toBe(1);
    },
    120_000,
  );

  maybe(
    'a misspelt field, an empty prompt, a job the API does not know and a cancel end with the documented failure types, the field named',
    async () => {
      const job = uniqueJob(language.toLowerCase());
      h.simulator.addJob({ ...job, workMs: 600_000 });
      const failures = await Promise.all(
        [
          start(job, 'Misspelt', '--extra', JSON.stringify({ promt: 'x' })),
          start(job, ''),
          start({ projectId: job.projectId, jobId: 'no-such-job' }, 'Hello'),
        ].map(async (started) => run('result', await started)),
      );
      for (const failure of failures) FailureTypesContract.parse(failure.type);
      expect(failures).toEqual([
        {
          kind: 'invalid-input',
          type: 'InvalidFollowUpInput',
          message: expect.stringContaining('unknown field(s) "promt"'),
        },
        {
          kind: 'invalid-input',
          type: 'InvalidFollowUpInput',
          message: expect.stringContaining('prompt must not be empty'),
        },
        { kind: 'rejected', type: 'AgentJobNotFound', message: expect.stringContaining("job 'no-such-job'") },
      ]);
      expect(h.simulator.counts(job.projectId, job.jobId).messagesAccepted).toBe(0);

      const workflowId = await start(job, 'Work until cancelled', '--polling', polling);
      await waitFor(
        async () => (await h.followUps(queue).progress(workflowId)).phase === 'waiting',
        'the follow-up to wait',
      );
      expect(await run('cancel', workflowId)).toEqual({ requested: true });
      expect(await run('result', workflowId)).toMatchObject({ kind: 'cancelled', type: 'Cancelled' });
    },
    120_000,
  );

  maybe(
    'makes a Temporal Schedule whose runs are follow-ups',
    async () => {
      const job = uniqueJob(language.toLowerCase());
      h.simulator.addJob({ ...job, workMs: 500 });
      const { scheduleId } = await run(
        'schedule',
        '--project',
        job.projectId,
        '--job',
        job.jobId,
        '--prompt',
        'Rebase on main.',
        '--polling',
        polling,
      );
      const schedule = h.client.schedule.getHandle(String(scheduleId));
      try {
        const { action } = await schedule.describe();
        expect(action).toMatchObject({
          type: 'startWorkflow',
          workflowType: FOLLOW_UP_WORKFLOW_TYPE,
          taskQueue: queue,
        });
        await schedule.trigger();
        let workflowId = '';
        await waitFor(async () => {
          workflowId = (await schedule.describe()).info.recentActions[0]?.action.workflow.workflowId ?? '';
          return workflowId !== '';
        }, 'the schedule to start a follow-up');
        const ended = await run('result', workflowId);
        expect(ended).toMatchObject({ kind: 'completed', prLink: h.simulator.job(job.projectId, job.jobId).prLink });
        expect(h.simulator.counts(job.projectId, job.jobId).messagesAccepted).toBe(1);
      } finally {
        await schedule.delete();
      }
    },
    120_000,
  );
});
