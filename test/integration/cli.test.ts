import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { stripVTControlCharacters } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { ExitCode, runCli } from '../../src/cli';
import { FollowUpClient } from '../../src/client';
import type { z } from 'zod';
import {
  BudgetReportSchema,
  CancelReportSchema,
  CliErrorSchema,
  FollowUpListSchema,
  FollowUpReportSchema,
} from '../../src/command-line/json-output';
import { runCliOn, startCliOn } from '../support/cli-runner';
import { createHarness, uniqueJob, waitFor, type Harness } from '../support/harness';
import { startBuiltScript } from '../support/processes';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

const cli = runCliOn;

const fast = ['--initial-interval', '100', '--max-interval', '300'];

test('send --wait --json prints the final job with its prLink and exits 0', async () => {
  const ref = uniqueJob();
  h.simulator.addJob(ref);
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const { run, status, text } = await worker.runUntil(async () => {
    const run = await cli(
      [
        'send',
        '--project',
        ref.projectId,
        '--job',
        ref.jobId,
        '--prompt',
        'Fix the flaky test',
        '--wait',
        '--json',
        ...fast,
      ],
      taskQueue,
    );
    const workflowId = (JSON.parse(run.out) as { workflowId: string }).workflowId;
    return {
      run,
      status: await cli(['status', workflowId, '--json'], taskQueue),
      text: await cli(['status', workflowId], taskQueue),
    };
  });
  expect(run.code).toBe(ExitCode.Ok);
  const printed = FollowUpReportSchema.parse(JSON.parse(run.out));
  expect(printed.result?.outcome).toBe('completed');
  expect(printed.result?.prLink).toMatch(/\/pull\/\d+$/);
  expect(printed.result?.job.id).toBe(ref.jobId);
  expect(printed).toMatchObject({
    attached: false,
    executionStatus: 'COMPLETED',
    outcome: { kind: 'completed', type: null, message: null },
  });
  // One count everywhere: the report's, the result's, and the text status prints for the same follow-up.
  expect(printed.polls).toBe(printed.result?.polls);
  // status --json is the same shape, and says the same as send --wait --json (but for how send started it).
  expect({ ...FollowUpReportSchema.parse(JSON.parse(status.out)), attached: false, progress: null }).toEqual({
    ...printed,
    progress: null,
  });
  expect(text.out).toContain(`ended completed after ${printed.polls} poll(s)`);
});

test.each([
  ['failed', ExitCode.JobFailed],
  ['archived', ExitCode.JobArchived],
] as const)('send --wait exits with the documented code when the job ends %s', async (outcome, code) => {
  const ref = uniqueJob();
  h.simulator.addJob({ ...ref, outcome });
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const run = await worker.runUntil(
    cli(['send', '--project', ref.projectId, '--job', ref.jobId, '--prompt', 'Go', '--wait', ...fast], taskQueue),
  );
  expect(run.code).toBe(code);
  expect(run.out).toContain(`ended ${outcome}`);
});

test('send --wait exits 5 when the follow-up times out', async () => {
  const ref = uniqueJob();
  h.simulator.addJob({ ...ref, workMs: 10 * 60_000 });
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const run = await worker.runUntil(
    cli(
      [
        'send',
        '--project',
        ref.projectId,
        '--job',
        ref.jobId,
        '--prompt',
        'Slow',
        '--wait',
        '--timeout',
        '1s',
        ...fast,
      ],
      taskQueue,
    ),
  );
  expect(run.code).toBe(ExitCode.TimedOut);
  // The timeout as typed, not converted to milliseconds.
  expect(run.err).toContain('FollowUpTimedOut: The agent job did not reach completed, archived or failed within 1s');
});

test('send --wait exits 6 with the API reason when the job does not exist', async () => {
  const ref = uniqueJob();
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const run = await worker.runUntil(
    cli(
      ['send', '--project', ref.projectId, '--job', ref.jobId, '--prompt', 'Hi', '--wait', '--json', ...fast],
      taskQueue,
    ),
  );
  expect(run.code).toBe(ExitCode.Rejected);
  // The follow-up's own ending is an outcome in the report, not an error of the CLI.
  const printed = FollowUpReportSchema.parse(JSON.parse(run.out));
  expect(printed.outcome).toMatchObject({ kind: 'rejected', type: 'AgentJobNotFound' });
  expect(printed.outcome?.message).toContain(ref.jobId);
  expect(printed.result).toBeNull();
});

test('on a terminal --wait updates one progress line in place and colours errors; piped, it prints plain lines', async () => {
  const ref = uniqueJob();
  h.simulator.addJob({ ...ref, workMs: 1_500 });
  // Reads fail for a while, so there is an error to colour.
  h.simulator.injectFaults(ref.projectId, ref.jobId, [{ operation: 'get', status: 500, times: 10 }]);
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const args = ['send', '--project', ref.projectId, '--job', ref.jobId, '--prompt', 'On a terminal', '--wait', ...fast];
  // Piped: reads a second apart, progress asked every 100 ms, so the times move between reads while the state does not.
  const slow = uniqueJob();
  h.simulator.addJob({ ...slow, workMs: 3_000 });
  const pipedArgs = ['send', '--project', slow.projectId, '--job', slow.jobId, '--prompt', 'Piped', '--wait'];
  const { tty, piped } = await worker.runUntil(async () => ({
    tty: await startCliOn(args, taskQueue, 100, undefined, { tty: true, colour: true, columns: 60 }).done,
    piped: await cli([...pipedArgs, '--initial-interval', '1s', '--max-interval', '1s'], taskQueue),
  }));
  expect(tty.code).toBe(ExitCode.Ok);
  const updates = tty.err.split('\r\x1b[2K').slice(1);
  expect(updates.length).toBeGreaterThan(1);
  // Every update but the last is rewritten in place: no newline inside, and none longer than the terminal.
  for (const update of updates.slice(0, -1)) {
    expect(update).not.toContain('\n');
    expect(stripVTControlCharacters(update).length).toBeLessThanOrEqual(59);
  }
  expect(tty.err).toContain('\x1b[31m');

  expect(piped.code).toBe(ExitCode.Ok);
  expect(piped.err).not.toContain('\x1b[');
  expect(piped.err).toContain('  … ');
  // A line only when something changed: no two lines in a row say the same but for their times.
  const states = piped.err
    .split('\n')
    .filter((line) => line.startsWith('  … '))
    .map((line) => line.replace(/sent \S+ ago|next poll in \S+|\S+ left before the deadline/g, ''));
  expect(states.length).toBeGreaterThan(0);
  expect(states.filter((state, i) => i > 0 && state === states[i - 1])).toEqual([]);
});

test('under --json every command that fails prints one error object on stdout, with the exit code', async () => {
  const taskQueue = h.taskQueue();
  const unknown = await cli(['status', 'followup/nope/nope/0000', '--json'], taskQueue);
  expect(unknown.code).toBe(ExitCode.BadInput);
  expect(CliErrorSchema.parse(JSON.parse(unknown.out))).toEqual({
    error: {
      type: 'FollowUpNotFound',
      message: "no follow-up with workflow id 'followup/nope/nope/0000' in this namespace",
      exitCode: ExitCode.BadInput,
    },
  });
  expect(unknown.err).toContain('agent-followup: no follow-up with workflow id');
  const usage = await cli(['send', '--project', 'p', '--job', 'j', '--json'], taskQueue);
  expect(usage.code).toBe(ExitCode.BadInput);
  expect(CliErrorSchema.parse(JSON.parse(usage.out)).error).toMatchObject({
    type: 'BadInput',
    exitCode: ExitCode.BadInput,
  });
  expect(usage.connected).toBe(false);
  const option = await cli(['schedule', 'list', '--json', '--wiat'], taskQueue);
  expect(CliErrorSchema.parse(JSON.parse(option.out)).error.message).toContain("unknown option '--wiat'");
  const schedule = await cli(['schedule', 'describe', 'no-such-schedule', '--json'], taskQueue);
  expect(CliErrorSchema.parse(JSON.parse(schedule.out)).error.type).toBe('ScheduleNotFound');
});

test('send without --wait prints the workflow id; status and cancel work on it', async () => {
  const ref = uniqueJob();
  h.simulator.addJob({ ...ref, workMs: 10 * 60_000 });
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  await worker.runUntil(async () => {
    const sent = await cli(
      ['send', '--project', ref.projectId, '--job', ref.jobId, '--prompt', 'Later', '--json', ...fast],
      taskQueue,
    );
    expect(sent.code).toBe(ExitCode.Ok);
    const { workflowId, attached, executionStatus, outcome } = FollowUpReportSchema.parse(JSON.parse(sent.out));
    expect({ attached, executionStatus, outcome }).toEqual({
      attached: false,
      executionStatus: 'RUNNING',
      outcome: null,
    });

    await waitFor(async () => {
      const status = await cli(['status', workflowId, '--json'], taskQueue);
      return (FollowUpReportSchema.parse(JSON.parse(status.out)).polls ?? 0) >= 1;
    }, 'a first poll');

    const again = await cli(
      ['send', '--project', ref.projectId, '--job', ref.jobId, '--prompt', 'Later', ...fast],
      taskQueue,
    );
    expect(again.out).toContain('Attached to the existing follow-up');
    // Said aloud: nothing was sent this time, and since when the one it follows has run.
    expect(again.err).toContain(
      `No new message was sent: follow-up ${workflowId}, with the same project, job and prompt, was started `,
    );
    expect(again.err).toContain('ago');
    expect(again.err).toContain('and is still running');

    const cancelled = await cli(['cancel', workflowId], taskQueue);
    expect(cancelled.code).toBe(ExitCode.Ok);
    await waitFor(async () => (await cli(['status', workflowId], taskQueue)).out.includes('CANCELLED'), 'cancellation');
  });
  expect(h.simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });
});

type FollowUpReport = z.infer<typeof FollowUpReportSchema>;

test("list finds a project's follow-ups by job and state; watch follows one to its end as send --wait does; --address and --namespace beat the environment", async () => {
  const done = uniqueJob('listed-done');
  const long = { projectId: done.projectId, jobId: `${done.jobId}-long` };
  h.simulator.addJob(done);
  h.simulator.addJob({ ...long, workMs: 10 * 60_000 });
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  await worker.runUntil(async () => {
    const sendArgs = (job: { projectId: string; jobId: string }) => [
      'send',
      '--project',
      job.projectId,
      '--job',
      job.jobId,
      '--prompt',
      'Listed',
      '--json',
      ...fast,
    ];
    const finished = FollowUpReportSchema.parse(JSON.parse((await cli([...sendArgs(done), '--wait'], taskQueue)).out));
    const running = FollowUpReportSchema.parse(JSON.parse((await cli(sendArgs(long), taskQueue)).out));
    try {
      await listAndWatch(finished, running);
    } finally {
      // A failed expectation must not leave the worker waiting on a ten-minute job.
      await h.client.workflow
        .getHandle(running.workflowId)
        .cancel()
        .catch(() => undefined);
    }
  });

  async function listAndWatch(finished: FollowUpReport, running: FollowUpReport): Promise<void> {
    const listed = async (...filter: string[]) => {
      const run = await cli(['list', '--project', done.projectId, ...filter, '--json'], taskQueue);
      expect(run.code).toBe(ExitCode.Ok);
      return FollowUpListSchema.parse(JSON.parse(run.out));
    };
    // Visibility lists a run a moment after it starts or ends.
    await waitFor(
      async () =>
        (await listed()).followUps.filter((row) => row.outcome === 'completed' || row.executionStatus === 'RUNNING')
          .length === 2,
      'both follow-ups listed as they stand',
    );
    const [runningRow, ...rest] = (await listed()).followUps;
    // The running one's job status is its last read's: none yet, or the job at work.
    expect([null, 'active']).toContain(runningRow?.jobStatus);
    expect([runningRow, ...rest]).toEqual([
      {
        workflowId: running.workflowId,
        projectId: long.projectId,
        jobId: long.jobId,
        executionStatus: 'RUNNING',
        outcome: null,
        jobStatus: runningRow?.jobStatus,
        prLink: null,
        startedAt: expect.any(String),
        endedAt: null,
      },
      {
        workflowId: finished.workflowId,
        projectId: done.projectId,
        jobId: done.jobId,
        executionStatus: 'COMPLETED',
        outcome: 'completed',
        jobStatus: 'completed',
        prLink: finished.result?.prLink,
        startedAt: expect.any(String),
        endedAt: expect.any(String),
      },
    ]);
    const ids = (list: { followUps: Array<{ workflowId: string }> }) => list.followUps.map((row) => row.workflowId);
    expect(ids(await listed('--state', 'running'))).toEqual([running.workflowId]);
    expect(ids(await listed('--state', 'completed'))).toEqual([finished.workflowId]);
    expect(ids(await listed('--state', 'ended'))).toEqual([finished.workflowId]);
    expect(ids(await listed('--state', 'failed'))).toEqual([]);
    expect(ids(await listed('--job', done.jobId))).toEqual([finished.workflowId]);
    expect(await listed('--limit', '1')).toMatchObject({ followUps: [{ workflowId: running.workflowId }], more: true });
    const text = await cli(['list', '--project', done.projectId], taskQueue);
    const [header, ...rows] = text.out.trimEnd().split('\n');
    expect(header?.split(/ {2,}/)).toEqual([
      'WORKFLOW ID',
      'STATE',
      'PROJECT/JOB',
      'JOB STATUS',
      'PR',
      'STARTED (UTC)',
      'ENDED (UTC)',
    ]);
    expect(rows.map((row) => row.split(/ {2,}/).slice(0, 5))).toEqual([
      [running.workflowId, 'running', `${long.projectId}/${long.jobId}`, expect.stringMatching(/^(-|active)$/), '-'],
      [finished.workflowId, 'completed', `${done.projectId}/${done.jobId}`, 'completed', finished.result?.prLink],
    ]);

    // watch: an ended follow-up at once, with send --wait's report and exit code; a running one to its end.
    const watchedEnded = await cli(['watch', finished.workflowId, '--json'], taskQueue);
    expect(watchedEnded.code).toBe(ExitCode.Ok);
    expect(FollowUpReportSchema.parse(JSON.parse(watchedEnded.out))).toEqual({ ...finished, attached: null });
    const watching = startCliOn(['watch', running.workflowId], taskQueue);
    await waitFor(async () => watching.run.err.includes('Watching follow-up'), 'watch to start');
    h.simulator.finishJob(long.projectId, long.jobId);
    const watched = await watching.done;
    expect(watched.code).toBe(ExitCode.Ok);
    expect(watched.out).toMatch(/ended completed after \d+ poll\(s\)/);
    expect(h.simulator.counts(long.projectId, long.jobId)).toMatchObject({ posts: 1 });
    // Not a follow-up under the id: said, exit 2.
    const coordinator = await cli(['watch', `agent-followup-project/${done.projectId}`], taskQueue);
    expect(coordinator.code).toBe(ExitCode.BadInput);
    expect(coordinator.err).toContain('workflow, not a follow-up; list the follow-ups with: agent-followup list');

    // The flags beat the environment: its address leads nowhere and its namespace does not exist.
    const flagged = (argv: string[]) =>
      runCli(argv, {
        env: {
          TEMPORAL_ADDRESS: '127.0.0.1:1',
          TEMPORAL_NAMESPACE: 'no-such-namespace',
          TEMPORAL_TASK_QUEUE: taskQueue,
        },
        out: () => {},
        err: () => {},
        connect: (env) => FollowUpClient.fromEnvironment(env ?? {}),
      });
    const address = process.env.TEST_TEMPORAL_ADDRESS as string;
    expect(await flagged(['--address', address, '--namespace', 'default', 'status', finished.workflowId])).toBe(
      ExitCode.Ok,
    );
    expect(await flagged(['status', finished.workflowId, '--address', address])).toBe(ExitCode.Error);
  }
});

test.each([
  [['send', '--job', 'j', '--prompt', 'x'], /missing --project/],
  [['send', '--project', 'p', '--job', 'a/b', '--prompt', 'x'], /jobId may contain only/],
  [['send', '--project', 'p', '--job', 'j', '--prompt', ''], /prompt must not be empty/],
  [
    ['send', '--project', 'p', '--job', 'j', '--prompt', 'x', '--timeout', 'forever'],
    /polling\.timeout is not a duration/,
  ],
  [
    ['send', '--project', 'p', '--job', 'j', '--prompt', 'x', '--backoff-coefficient', 'fast'],
    /--backoff-coefficient must be a number/,
  ],
  [['send', '--project', 'p', '--job', 'j', '--prompt', 'x', '--bogus'], /unknown option '--bogus'/],
  [
    ['send', '--project', 'p', '--job', 'j', '--prompt', 'x', '--wiat'],
    /unknown option '--wiat'\n\(Did you mean --wait\?\)/,
  ],
  [
    ['send', '--project', 'p', '--job', 'j', '--prompt', 'x', 'and more'],
    /unexpected argument 'and more' \(quote the prompt/,
  ],
  [
    ['send', 'p', 'j', 'do it'],
    /unexpected argument 'p' 'j' 'do it': the project, job and prompt are options \(--project ID --job ID --prompt "\.\.\."\)/,
  ],
  [
    ['schedule', 'create', '--project', 'p', '--job', 'j', '--prompt', 'x', '--cron', '0', '9', '*', '*', '1'],
    /unexpected argument '9' '\*' '\*' '1' \(quote the prompt and the cron expression/,
  ],
  [['status'], /missing required argument 'workflowId'/],
  [['status', 'a', 'b'], /too many arguments for 'status'/],
  [['launch'], /unknown command 'launch'/],
  [['sned'], /unknown command 'sned'\n\(Did you mean send\?\)/],
])('bad input %j exits 2 with a clear message and never connects', async (args, message) => {
  const run = await cli(args, 'unused');
  expect(run.code).toBe(ExitCode.BadInput);
  expect(run.err).toMatch(message);
  expect(run.connected).toBe(false);
});

test('status of an unknown workflow id exits 2 and says so', async () => {
  const run = await cli(['status', 'followup-no-such-thing'], 'unused');
  expect(run.code).toBe(ExitCode.BadInput);
  expect(run.err).toContain("no follow-up with workflow id 'followup-no-such-thing'");
});

test('--help, and the bare command, print the commands and the exit codes and exit 0', async () => {
  for (const args of [['--help'], []]) {
    const run = await cli(args, 'unused');
    expect(run.code).toBe(ExitCode.Ok);
    expect(run.out).toContain('Usage: agent-followup [options] [command]');
    expect(run.out).toMatch(/send \[options\] +send a follow-up message/);
    expect(run.out).toContain('Exit codes');
  }
});

test('each command has its own help', async () => {
  const send = await cli(['send', '--help'], 'unused');
  expect(send.code).toBe(ExitCode.Ok);
  expect(send.out).toContain(
    'Usage: agent-followup send --project ID --job ID (--prompt TEXT | --prompt-file PATH) [options]',
  );
  expect(send.out).toContain('--on-ambiguous-send <policy>');
  expect(send.out).not.toContain('--cron');
  const create = await cli(['schedule', 'create', '--help'], 'unused');
  expect(create.out).toContain('--cron <expr>');
  expect(create.out).toContain('--no-pause-on-failure');
});

test('--version prints the package version', async () => {
  const run = await cli(['--version'], 'unused');
  expect(run.code).toBe(ExitCode.Ok);
  expect(run.out.trim()).toBe(
    (JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version,
  );
});

describe('status and cancel tell the truth', () => {
  test("status of a failed follow-up: the failure's type and message, what it last knew, and the outcome's exit code", async () => {
    const ref = uniqueJob(); // never added: the API answers 404
    const taskQueue = h.taskQueue();
    const worker = await h.worker(taskQueue);
    await worker.runUntil(async () => {
      const sent = await cli(
        ['send', '--project', ref.projectId, '--job', ref.jobId, '--prompt', 'Hi', '--wait', ...fast],
        taskQueue,
      );
      expect(sent.code).toBe(ExitCode.Rejected);
      const workflowId = /follow-up (\S+);/.exec(sent.err)?.[1] as string;
      const text = await cli(['status', workflowId], taskQueue);
      expect(text.code).toBe(ExitCode.Rejected);
      expect(text.out).toContain(`Follow-up ${workflowId}: FAILED`);
      expect(text.out).toMatch(/Outcome: rejected \(AgentJobNotFound\): .*job-/);
      expect(text.out).toContain(`Last known: job ${ref.jobId} not sent the message, 0 poll(s)`);
      const json = JSON.parse((await cli(['status', workflowId, '--json'], taskQueue)).out) as {
        outcome: { kind: string; type: string };
      };
      expect(json.outcome).toMatchObject({ kind: 'rejected', type: 'AgentJobNotFound' });
    });
  });

  test('status of a cancelled follow-up exits 7; cancel of a follow-up that already ended says so and exits 2', async () => {
    const ref = uniqueJob();
    h.simulator.addJob({ ...ref, workMs: 10 * 60_000 });
    const done = uniqueJob();
    h.simulator.addJob(done);
    const taskQueue = h.taskQueue();
    const worker = await h.worker(taskQueue);
    await worker.runUntil(async () => {
      const { workflowId } = JSON.parse(
        (
          await cli(
            ['send', '--project', ref.projectId, '--job', ref.jobId, '--prompt', 'Long', '--json', ...fast],
            taskQueue,
          )
        ).out,
      ) as { workflowId: string };
      const cancelled = await cli(['cancel', workflowId], taskQueue);
      expect(cancelled.code).toBe(ExitCode.Ok);
      expect(cancelled.out).toContain(`Cancellation requested for follow-up ${workflowId}`);
      // Asked again under --json (the cancellation is under way, or done): the report, or the refusal as an object.
      const json = await cli(['cancel', workflowId, '--json'], taskQueue);
      if (json.code === ExitCode.Ok)
        expect(CancelReportSchema.parse(JSON.parse(json.out))).toMatchObject({ workflowId, cancelRequested: true });
      else expect(CliErrorSchema.parse(JSON.parse(json.out)).error.type).toBe('AlreadyEnded');
      expect(cancelled.out).toContain("the agent's work on it goes on");
      await waitFor(
        async () => (await cli(['status', workflowId], taskQueue)).code === ExitCode.Cancelled,
        'the status to say cancelled',
      );
      expect((await cli(['status', workflowId], taskQueue)).out).toContain('Outcome: cancelled (Cancelled)');

      const finished = await cli(
        ['send', '--project', done.projectId, '--job', done.jobId, '--prompt', 'Short', '--wait', '--json', ...fast],
        taskQueue,
      );
      const finishedId = (JSON.parse(finished.out) as { workflowId: string }).workflowId;
      const again = await cli(['cancel', finishedId], taskQueue);
      expect(again.code).toBe(ExitCode.BadInput);
      expect(again.err).toContain(`follow-up ${finishedId} already ended (COMPLETED); there is nothing to cancel`);
      expect(again.out).not.toContain('Cancellation requested');
      expect(CliErrorSchema.parse(JSON.parse((await cli(['cancel', finishedId, '--json'], taskQueue)).out))).toEqual({
        error: {
          type: 'AlreadyEnded',
          message: expect.stringContaining('already ended (COMPLETED)'),
          exitCode: ExitCode.BadInput,
        },
      });
      const status = await cli(['status', finishedId], taskQueue);
      expect(status.code).toBe(ExitCode.Ok);
      expect(status.out).toContain(`ended completed`);
    });
  });
});

describe('send says what it cannot do silently', () => {
  test('sending again with other options attaches to the running follow-up and warns which options differ', async () => {
    const ref = uniqueJob();
    h.simulator.addJob({ ...ref, workMs: 10 * 60_000 });
    const taskQueue = h.taskQueue();
    const worker = await h.worker(taskQueue);
    await worker.runUntil(async () => {
      const base = ['send', '--project', ref.projectId, '--job', ref.jobId, '--prompt', 'Same prompt', ...fast];
      const first = await cli([...base, '--timeout', '2h'], taskQueue);
      const workflowId = /follow-up (\S+)\n/.exec(first.out)?.[1] as string;
      const same = await cli([...base, '--timeout', '2h'], taskQueue);
      expect(same.err).not.toContain('differ');
      const other = await cli([...base, '--timeout', '10m', '--on-ambiguous-send', 'fail'], taskQueue);
      expect(other.code).toBe(ExitCode.Ok);
      expect(other.out).toContain(`Attached to the existing follow-up ${workflowId}`);
      expect(other.err).toContain(
        'it keeps its own options, and these differ: timeout 10m here, 2h in the running follow-up; on-ambiguous-send fail here, reconcile in the running follow-up',
      );
      // Cancelling before the message went out would make the count below prove nothing.
      await waitFor(
        async () => h.simulator.counts(ref.projectId, ref.jobId).messagesAccepted > 0,
        'the first message to be delivered',
      );
      await cli(['cancel', workflowId], taskQueue);
    });
    expect(h.simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });
  });

  test('with no worker on the task queue: send warns, status answers at once, and send --wait says when a worker comes', async () => {
    const ref = uniqueJob();
    h.simulator.addJob(ref);
    const taskQueue = h.taskQueue();
    const queued = await cli(
      ['send', '--project', ref.projectId, '--job', ref.jobId, '--prompt', 'Nobody home', ...fast],
      taskQueue,
    );
    expect(queued.code).toBe(ExitCode.Ok);
    expect(queued.err).toContain(`warning: no worker polls task queue '${taskQueue}' in namespace 'default'`);
    const workflowId = /follow-up (\S+)\n/.exec(queued.out)?.[1] as string;
    const status = await cli(['status', workflowId], taskQueue);
    expect(status.code).toBe(ExitCode.Ok);
    expect(status.out).toContain(
      `Progress: not available (no worker polls task queue '${taskQueue}' in namespace 'default')`,
    );

    // --wait warns, keeps waiting, and goes on once a worker starts.
    const waiting = cli(
      ['send', '--project', ref.projectId, '--job', ref.jobId, '--prompt', 'Nobody home', '--wait', ...fast],
      taskQueue,
    );
    const worker = await h.worker(taskQueue);
    const run = await worker.runUntil(waiting);
    expect(run.code).toBe(ExitCode.Ok);
    expect(run.err).toContain(`warning: no worker polls task queue '${taskQueue}'`);
    expect(run.err).toContain('A worker polls the task queue again; the follow-up goes on.');
    expect(run.out).toContain(`Job ${ref.jobId} ended completed`);
  });

  test('budget set with no worker on the coordinator task queue: within 10s, the set kept, and how to fix it', async () => {
    const { projectId } = uniqueJob('unserved');
    const coordinators = `nobody-${randomUUID().slice(0, 8)}`;
    const set = await cli(
      ['budget', 'set', '--project', projectId, '--sends-per-hour', '40', '--json'],
      'unused',
      100,
      coordinators,
    );
    expect(set.code).toBe(ExitCode.Error);
    // Not the SDK's "Failed to query Workflow" after half a minute: what happened, what did not, and the fix.
    expect(CliErrorSchema.parse(JSON.parse(set.out)).error).toEqual({
      type: 'NoWorkerAnswered',
      message:
        `the budget is set; no worker of coordinator task queue '${coordinators}' answered ` +
        `agent-followup-project/${projectId} within 10s, so the budget cannot be shown: start a worker (budgets and ` +
        'what they hold are kept in Temporal meanwhile)',
      exitCode: ExitCode.Error,
    });
    expect(set.err).toContain('agent-followup: the budget is set; no worker of coordinator task queue');
    // Kept: the set is a signal in the coordinator's history, which a worker of that queue will take.
    const coordinator = h.client.workflow.getHandle(`agent-followup-project/${projectId}`);
    const { events } = await coordinator.fetchHistory();
    expect(events?.some((event) => event.workflowExecutionSignaledEventAttributes?.signalName === 'setBudget')).toBe(
      true,
    );
    await coordinator.terminate('test over');
  });

  test.each([
    [['send', '--project', 'p', '--job', 'j', '--prompt', 'x']],
    // Without --no-job-check: the note that the job could not be checked is not said of a schedule never created.
    [['schedule', 'create', '--project', 'p', '--job', 'j', '--prompt', 'x', '--every', '6h']],
  ])('a namespace without the search attributes: %j names the namespace and the fix', async (argv) => {
    const namespace = `bare-${randomUUID().slice(0, 8)}`;
    await h.client.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
    const run = { out: '', err: '' };
    const code = await runCli(argv, {
      env: {},
      out: (text) => (run.out += text),
      err: (text) => (run.err += text),
      connect: async () =>
        new FollowUpClient(
          new Client({
            connection: await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS }),
            namespace,
          }),
          { taskQueue: 'unused' },
        ),
    });
    expect(code).toBe(ExitCode.Error);
    expect(run.err).toContain(`Namespace '${namespace}' lacks agent-followup's search attributes`);
    expect(run.err).toContain('npx agent-followup setup');
    expect(run.err).not.toContain('created without the check');
  });
});

describe('the built command in a terminal', () => {
  test('with Temporal down: exit 1, naming the address, the namespace and what to check', async () => {
    const exit = await startBuiltScript('cli.js', ['status', 'any-id'], {
      TEMPORAL_ADDRESS: '127.0.0.1:1',
      TEMPORAL_NAMESPACE: 'team-a',
    }).exited;
    expect(exit.code).toBe(ExitCode.Error);
    expect(exit.stderr).toContain("Cannot reach Temporal at 127.0.0.1:1 (namespace 'team-a')");
    expect(exit.stderr).toContain('Is the server running there?');
  });

  test('Ctrl-C during send --wait exits 130 and says the follow-up goes on and how to follow or cancel it', async () => {
    const ref = uniqueJob();
    const taskQueue = h.taskQueue(); // no worker: the follow-up waits for one, and so does the command
    const started = startBuiltScript(
      'cli.js',
      ['send', '--project', ref.projectId, '--job', ref.jobId, '--prompt', 'Wait for me', '--wait'],
      {
        TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS ?? '',
        TEMPORAL_TASK_QUEUE: taskQueue,
      },
    );
    await waitFor(() => started.output().includes('waiting for the job to end'), 'the command to wait');
    started.child.kill('SIGINT');
    const exit = await started.exited;
    const workflowId = /follow-up (\S+);/.exec(exit.stderr)?.[1] as string;
    expect(exit.code).toBe(ExitCode.Interrupted);
    expect(exit.stderr).toContain(`Stopped waiting. Follow-up ${workflowId} goes on in Temporal.`);
    expect(exit.stderr).toContain(`agent-followup status ${workflowId}`);
    expect(exit.stderr).toContain(`agent-followup cancel ${workflowId}`);
    await h.client.workflow.getHandle(workflowId).terminate('test done');
  });
});

test("budget set gives a project its own budget, budget show tells its use, 'default' gives it back; a bad number, or one above the vendor's 100 without --above-vendor-limit, exits 2", async () => {
  const { projectId } = uniqueJob('budget');
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const budget = (args: string[]) => cli(['budget', ...args], taskQueue, 100, h.coordinatorTaskQueue);
  const runs = await worker.runUntil(async () => ({
    set: await budget(['set', '--project', projectId, '--sends-per-hour', '5']),
    show: await budget(['show', '--project', projectId, '--json']),
    all: await budget(['show']),
    // A schedule whose busiest hour beats the budget: created, with the numbers and the fix.
    everyMinute: await cli(
      ['schedule', 'create', '--project', projectId, '--job', 'j', '--prompt', 'x', '--every', '1m', '--no-job-check'],
      taskQueue,
      100,
      h.coordinatorTaskQueue,
    ),
    bad: await budget(['set', '--project', projectId, '--sends-per-hour', 'lots']),
    notPlain: await Promise.all(
      ['1e9', '0x10', ' 5'].map((n) => budget(['set', '--project', projectId, '--sends-per-hour', n])),
    ),
    overVendor: await budget(['set', '--project', projectId, '--sends-per-hour', '150']),
    meantOverVendor: await budget(['set', '--project', projectId, '--sends-per-hour', '150', '--above-vendor-limit']),
    back: await budget(['set', '--project', projectId, '--sends-per-hour', 'default']),
  }));
  expect(runs.set.code).toBe(ExitCode.Ok);
  expect(runs.set.out).toContain(`${projectId}: 0 of 5 sends used in the last hour (set for this project)`);
  expect(BudgetReportSchema.parse(JSON.parse(runs.show.out)).projects).toEqual([
    expect.objectContaining({ projectId, limit: 5, limitSetForProject: true, sentInWindow: 0 }),
  ]);
  expect(runs.all.out).toContain("Default for every project: the workers' AGENT_SENDS_PER_PROJECT_PER_HOUR");
  expect(runs.all.out).toContain(`${projectId}: 0 of 5 sends used`);
  expect(runs.everyMinute.code).toBe(ExitCode.Ok);
  expect(runs.everyMinute.err).toContain(
    `warning: this schedule starts up to 60 follow-ups an hour for project ${projectId}, and project ${projectId}'s budget is 5 sends an hour`,
  );
  expect(runs.everyMinute.err).toContain(`agent-followup budget set --project ${projectId} --sends-per-hour N`);
  const scheduleId = /Created schedule (\S+):/.exec(runs.everyMinute.out)?.[1] as string;
  await h.client.schedule.getHandle(scheduleId).delete();
  expect(runs.bad).toMatchObject({ code: ExitCode.BadInput, connected: false });
  expect(runs.bad.err).toContain(
    "--sends-per-hour must be a whole number in plain digits (e.g. 80), or default (got 'lots')",
  );
  for (const run of runs.notPlain) expect(run).toMatchObject({ code: ExitCode.BadInput, connected: false });
  // Above the vendor's 100 only when meant, and the refusal says why and how.
  expect(runs.overVendor).toMatchObject({ code: ExitCode.BadInput, connected: false });
  expect(runs.overVendor.err).toContain(
    "--sends-per-hour 150 is above the vendor's documented limit of 100 uses per project per hour",
  );
  expect(runs.overVendor.err).toContain('--above-vendor-limit');
  expect(runs.meantOverVendor.code).toBe(ExitCode.Ok);
  expect(runs.meantOverVendor.out).toContain(`${projectId}: 0 of 150 sends used`);
  expect(runs.back.code).toBe(ExitCode.Ok);
  expect(runs.back.out).toContain('default');
});
