/**
 * followUpWorkflow: send one follow-up message to an agent job, then follow the job until it ends, and return the
 * job as it ended after this message, with its pull-request link.
 *
 * The story: admit the input; take the job from its project's coordinator (one follow-up at a time per job, sends
 * within the project's budget: project-turn.ts); deliver the message
 * (once: deliver.ts); wait for this follow-up's own result (wait.ts); give the job back. Every decision is a pure function in workflows/follow-up/decisions.ts; everything the follow-up shows
 * (query, UI details, search attributes, memo) is written by run-view.ts, and how it fails is shaped by run-failures.ts.
 *
 * Determinism: this module and what it imports use only @temporalio/workflow, pure modules and types; time comes from
 * the workflow clock, waits are activities or durable timers. Nothing heavy (zod, HTTP) is in the workflow bundle.
 */
import {
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  ContinueAsNew,
  log,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { isCheckpoint, type FollowUpCheckpoint } from './checkpoint';
import type { FollowUpInput } from '../../kernel/request';
import { describeProblems, inspectFollowUpInput, type FollowUpRequest } from '../../kernel/request';
import { FollowUpErrorType, type FollowUpNotification, type FollowUpResult } from '../../kernel/types';
import { reservedWorkflowIdProblem } from './workflow-id-owner';
import { deliver } from './deliver';
import { FollowUpRun } from './follow-up-run';
import { withoutStack } from './run-failures';
import { ProjectTurn } from '../../coordinator/project-turn';
import { PollNow } from './poll-now';
import { waitForResult } from './wait';
import { FOLLOW_UP_NOTIFY_WORKFLOW_TYPE, notifyWorkflowId } from '../../kernel/workflow-ids';

/** Sends the follow-up once, follows the job to a terminal status and returns the final job with its `prLink`. */
export async function followUpWorkflow(input: FollowUpInput, ...continued: unknown[]): Promise<FollowUpResult> {
  const { request, checkpoint } = admit(input, continued);
  const run = new FollowUpRun(request, input, checkpoint);
  const turn = new ProjectTurn(run);
  const pollNow = new PollNow();
  let result: FollowUpResult;
  try {
    result = await turn.hold(async (earlier) => {
      const delivered = checkpoint?.delivered ?? (await deliver(run, turn, pollNow, earlier));
      const job = await waitForResult(run, pollNow, delivered);
      return run.finish(job, delivered);
    });
  } catch (error) {
    // A continued run carries on: not an ending, so nothing to show, count or call back.
    if (error instanceof ContinueAsNew) throw error;
    const failure = run.failed(error);
    // A start that waits for the send's answer gets this failure from its update before the workflow ends with it.
    await CancellationScope.nonCancellable(() => condition(allHandlersFinished));
    await notifyEnd(run, run.notification(null, failure));
    throw failure;
  }
  await notifyEnd(run, run.notification(result, null));
  return result;
}

/**
 * Hands the callback, when the input asks for one, to its own workflow (notify.ts), abandoned: the follow-up ends now
 * and the receiver's answers, however late, never change its outcome. Its id is the delivery id receivers dedupe on.
 */
async function notifyEnd(run: FollowUpRun, notification: FollowUpNotification): Promise<void> {
  // The input's own, else the workers' (AGENT_NOTIFY_URL) as its check-in told it.
  const target = run.request.notify ?? (run.defaultNotifyUrl !== null ? { url: run.defaultNotifyUrl } : null);
  if (target === null) return;
  const { workflowId, firstExecutionRunId } = workflowInfo();
  try {
    await CancellationScope.nonCancellable(() =>
      startChild(FOLLOW_UP_NOTIFY_WORKFLOW_TYPE, {
        workflowId: notifyWorkflowId(workflowId, firstExecutionRunId),
        args: [{ url: target.url, notification }],
        parentClosePolicy: 'ABANDON',
        staticSummary: `callback of ${workflowId} (${notification.outcome}) to ${target.url.split('?')[0]}`,
      }),
    );
  } catch (error) {
    // Already started (a reset replays the ending): that one delivers. Anything else must not change the outcome.
    log.warn('The follow-up could not start its callback', { ...run.ref, error: String(error) });
  }
}

/**
 * Checks every argument before anything uses it. The input must follow the rules of request.ts; a second argument is
 * a checkpoint, taken only from our own continue-as-new (a starter passing one could otherwise skip the send). The id
 * must not be a coordinator's: the client refuses one, but another starter (temporal CLI, another SDK) may not, and a
 * follow-up there would keep that project's coordinator from starting. Bad arguments fail the workflow with
 * InvalidFollowUpInput, never the workflow task.
 */
function admit(input: unknown, continued: unknown[]): { request: FollowUpRequest; checkpoint?: FollowUpCheckpoint } {
  const problems: string[] = [];
  const checked = inspectFollowUpInput(input);
  if (!checked.ok) problems.push(describeProblems(checked.problems));
  const reserved = reservedWorkflowIdProblem(workflowInfo().workflowId);
  if (reserved !== undefined) problems.push(`${reserved}; start the follow-up under another id`);
  let checkpoint: FollowUpCheckpoint | undefined;
  if (continued.length > 0) {
    if (continued.length > 1 || workflowInfo().continuedFromExecutionRunId === undefined) {
      problems.push('the workflow takes one argument, the follow-up input; remove the others');
    } else if (!isCheckpoint(continued[0])) {
      problems.push('the state carried from the previous run is malformed');
    } else {
      checkpoint = continued[0];
    }
  }
  if (!checked.ok || problems.length > 0) {
    throw withoutStack(
      ApplicationFailure.create({
        type: FollowUpErrorType.InvalidInput,
        message: `Invalid follow-up input: ${problems.join('; ')}`,
        nonRetryable: true,
      }),
    );
  }
  return { request: checked.request, ...(checkpoint ? { checkpoint } : {}) };
}
