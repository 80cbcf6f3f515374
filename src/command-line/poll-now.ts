/** `agent-followup poll-now`: have a follow-up read its job now, for whoever knows the job just changed. */
import type { Command } from 'commander';
import type { z } from 'zod';
import { type FollowUpClient, NoWorkerAnsweredError, utcClock } from '../index';
import {
  checkWorkflowIdArgument,
  CommandRefusal,
  examplesOf,
  ExitCode,
  UsageError,
  type CliContext,
  type CliIo,
} from './io';
import type { PollNowReportSchema } from './json-output';

interface PollNowOptions {
  project?: string;
  job?: string;
  json?: boolean;
}

export function registerPollNow(program: Command, ctx: CliContext): void {
  program
    .command('poll-now')
    .summary('have a running follow-up read its job now instead of at its next poll (you know the job changed)')
    .argument('[workflowId]', 'the id send printed')
    .option('--project <id>', 'with --job: every running follow-up of this job instead of one id')
    .option('--job <id>', 'with --project: the job whose running follow-ups read it now')
    .option('--json', 'print one JSON object instead of text')
    .addHelpText(
      'after',
      examplesOf([
        'agent-followup poll-now <workflowId>',
        "agent-followup poll-now --project proj-1 --job job-7   # from the PR's webhook",
      ]),
    )
    .action(async (workflowId: string | undefined, options: PollNowOptions) => {
      const byJob = options.project !== undefined || options.job !== undefined;
      if (
        byJob === (workflowId !== undefined) ||
        (byJob && (options.project === undefined || options.job === undefined))
      ) {
        throw new UsageError(
          'poll-now takes either a workflow id (agent-followup poll-now <workflowId>) or a job ' +
            '(agent-followup poll-now --project P --job J), not both',
        );
      }
      const json = Boolean(options.json);
      ctx.exitCode =
        workflowId !== undefined
          ? await pollNow(checkWorkflowIdArgument(workflowId), json, ctx.io)
          : await pollNowJob({ projectId: options.project as string, jobId: options.job as string }, json, ctx.io);
    });
}

type PollNowReport = z.infer<typeof PollNowReportSchema>;

/** Every running follow-up of a job: for a caller whose own webhook names the job. None running is exit 2. */
async function pollNowJob(job: { projectId: string; jobId: string }, json: boolean, io: CliIo): Promise<number> {
  const followUps = await io.connect();
  try {
    const { followUps: asked } = await noWorkerSaid(
      followUps,
      `the follow-ups of job ${job.jobId} may not read it now`,
      () => followUps.pollNow(job),
    );
    const requested = asked.filter((answer) => answer.requested);
    if (requested.length === 0) {
      throw new CommandRefusal(
        'NoRunningFollowUp',
        `no running follow-up of job ${job.jobId} in project ${job.projectId} (one started in the last seconds may ` +
          'not be listed yet); nothing to read for.',
        ExitCode.BadInput,
      );
    }
    if (json) {
      const report: PollNowReport = {
        followUps: requested.map(({ workflowId, executionStatus, readAt, covered }) => ({
          workflowId,
          executionStatus,
          readAt,
          covered,
        })),
      };
      io.out(`${JSON.stringify(report)}\n`);
      return ExitCode.Ok;
    }
    io.out(
      `Asked ${requested.length} running follow-up${requested.length === 1 ? '' : 's'} of job ${job.jobId} to read it ` +
        `now: ${requested.map((answer) => answer.workflowId).join(', ')}; see what each found with: agent-followup status <id>\n`,
    );
    return ExitCode.Ok;
  } finally {
    await followUps.close();
  }
}

async function pollNow(workflowId: string, json: boolean, io: CliIo): Promise<number> {
  const followUps = await io.connect();
  try {
    const { requested, executionStatus, readAt, covered } = await noWorkerSaid(
      followUps,
      `follow-up ${workflowId} may not read its job now`,
      () => followUps.pollNow(workflowId),
    );
    if (!requested) {
      throw new CommandRefusal(
        'AlreadyEnded',
        `follow-up ${workflowId} already ended (${executionStatus}); it reads its job no more. See it with: agent-followup status ${workflowId}`,
        ExitCode.BadInput,
      );
    }
    if (json) {
      const report: PollNowReport = { followUps: [{ workflowId, executionStatus, readAt, covered }] };
      io.out(`${JSON.stringify(report)}\n`);
      return ExitCode.Ok;
    }
    // A read due later than now: asks keep coming, and the follow-up spaces the reads they ask for.
    const later = readAt !== null && Date.parse(readAt) > Date.now() + 1_000 ? ` at ${utcClock(readAt)} UTC` : null;
    const asked = covered
      ? `A read asked for earlier is due${later ?? ' now'} and covers this ask`
      : `Asked follow-up ${workflowId} to read its job${later ? `${later} (reads asked for one after another are spaced out)` : ' now'}`;
    io.out(`${asked}; see what it found with: agent-followup status ${workflowId}\n`);
    return ExitCode.Ok;
  } finally {
    await followUps.close();
  }
}

/** The ask, with no worker taking it said as what it means: the follow-ups are safe, and may not read now. */
async function noWorkerSaid<T>(followUps: FollowUpClient, consequence: string, ask: () => Promise<T>): Promise<T> {
  try {
    return await ask();
  } catch (error) {
    if (!(error instanceof NoWorkerAnsweredError)) throw error;
    throw new CommandRefusal(
      'NoWorkerAnswered',
      `no worker took the ask within ${error.timeoutMs / 1000}s, so ${consequence}: the workers of task queue ` +
        `'${followUps.options.taskQueue}' may have stopped. Nothing is lost: Temporal keeps the follow-ups; once a worker runs, ask again.`,
      ExitCode.Error,
    );
  }
}
