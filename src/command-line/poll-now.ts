/** `agent-followup poll-now`: have a follow-up read its job now, for whoever knows the job just changed. */
import type { Command } from 'commander';
import { NoWorkerAnsweredError, utcClock } from '../index';
import { checkWorkflowIdArgument, ExitCode, UsageError, type CliContext, type CliIo } from './io';

export function registerPollNow(program: Command, ctx: CliContext): void {
  program
    .command('poll-now')
    .summary('have a running follow-up read its job now instead of at its next poll (you know the job changed)')
    .argument('[workflowId]', 'the id send printed')
    .option('--project <id>', 'with --job: every running follow-up of this job instead of one id')
    .option('--job <id>', 'with --project: the job whose running follow-ups read it now')
    .action(async (workflowId: string | undefined, options: { project?: string; job?: string }) => {
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
      ctx.exitCode =
        workflowId !== undefined
          ? await pollNow(checkWorkflowIdArgument(workflowId), ctx.io)
          : await pollNowJob({ projectId: options.project as string, jobId: options.job as string }, ctx.io);
    });
}

/** Every running follow-up of a job: for a caller whose own webhook names the job. None running is exit 2. */
async function pollNowJob(job: { projectId: string; jobId: string }, io: CliIo): Promise<number> {
  const followUps = await io.connect();
  try {
    const { followUps: asked } = await followUps.pollNow(job);
    const requested = asked.filter((answer) => answer.requested);
    if (requested.length === 0) {
      io.err(
        `agent-followup: no running follow-up of job ${job.jobId} in project ${job.projectId} (one started in the last ` +
          'seconds may not be listed yet); nothing to read for.\n',
      );
      return ExitCode.BadInput;
    }
    io.out(
      `Asked ${requested.length} running follow-up${requested.length === 1 ? '' : 's'} of job ${job.jobId} to read it ` +
        `now: ${requested.map((answer) => answer.workflowId).join(', ')}; see what each found with: agent-followup status <id>\n`,
    );
    return ExitCode.Ok;
  } catch (error) {
    if (!(error instanceof NoWorkerAnsweredError)) throw error;
    io.err(
      `agent-followup: no worker took the ask within ${error.timeoutMs / 1000}s, so the follow-ups of job ${job.jobId} ` +
        `may not read it now: the workers of task queue '${followUps.options.taskQueue}' may have stopped. The ` +
        'follow-ups are safe in Temporal; once a worker runs, ask again.\n',
    );
    return ExitCode.Error;
  } finally {
    await followUps.close();
  }
}

async function pollNow(workflowId: string, io: CliIo): Promise<number> {
  const followUps = await io.connect();
  try {
    const { requested, executionStatus, readAt, covered } = await followUps.pollNow(workflowId);
    if (!requested) {
      io.err(
        `agent-followup: follow-up ${workflowId} already ended (${executionStatus}); it reads its job no more. See it with: agent-followup status ${workflowId}\n`,
      );
      return ExitCode.BadInput;
    }
    // A read due later than now: asks keep coming, and the follow-up spaces the reads they ask for.
    const later = readAt !== null && Date.parse(readAt) > Date.now() + 1_000 ? ` at ${utcClock(readAt)} UTC` : null;
    const asked = covered
      ? `A read asked for earlier is due${later ?? ' now'} and covers this ask`
      : `Asked follow-up ${workflowId} to read its job${later ? `${later} (reads asked for one after another are spaced out)` : ' now'}`;
    io.out(`${asked}; see what it found with: agent-followup status ${workflowId}\n`);
    return ExitCode.Ok;
  } catch (error) {
    if (!(error instanceof NoWorkerAnsweredError)) throw error;
    io.err(
      `agent-followup: no worker took the ask within ${error.timeoutMs / 1000}s, so follow-up ${workflowId} may not read its job now: the workers ` +
        `of task queue '${followUps.options.taskQueue}' may have stopped. The follow-up is safe in Temporal; once a worker runs, ask again.\n`,
    );
    return ExitCode.Error;
  } finally {
    await followUps.close();
  }
}
