/** `agent-followup poll-now`: have a follow-up read its job now, for whoever knows the job just changed. */
import type { Command } from 'commander';
import { NoWorkerAnsweredError } from '../client';
import { utcClock } from '../follow-up/progress-details';
import { checkWorkflowIdArgument, ExitCode, type CliContext, type CliIo } from './io';

export function registerPollNow(program: Command, ctx: CliContext): void {
  program
    .command('poll-now')
    .summary('have a running follow-up read its job now instead of at its next poll (you know the job changed)')
    .argument('<workflowId>', 'the id send printed')
    .action(async (workflowId: string) => {
      ctx.exitCode = await pollNow(checkWorkflowIdArgument(workflowId), ctx.io);
    });
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
