/**
 * A follow-up's side of its job's lane (job-lane.ts): check in (join, and learn what earlier runs of this follow-up
 * sent), wait for the turn (telling the UI how many are ahead), do the work, leave. Leaving happens on every way out
 * except continue-as-new, where the next run keeps the turn.
 */
import {
  CancellationScope,
  condition,
  ContinueAsNew,
  getExternalWorkflowHandle,
  log,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { laneWorkflowId } from '../follow-up/lane';
import type { DeliveryRecord } from '../follow-up/types';
import { checkIn } from './activities';
import { lanePlaceSignal, laneTurnSignal, leaveLaneSignal } from './definitions';
import type { FollowUpRun } from './follow-up-run';

/**
 * Runs `work` holding the job: at most one follow-up per job between "about to send" and "result returned". `work`
 * gets what an earlier run under this workflow id did with the message (null for a continued run, which knows).
 */
export async function withJobLane<T>(run: FollowUpRun, work: (earlier: DeliveryRecord | null) => Promise<T>): Promise<T> {
  let turn = run.holdsLane;
  setHandler(laneTurnSignal, () => {
    turn = true;
  });
  setHandler(lanePlaceSignal, ({ ahead }) => {
    if (!turn) run.queued(ahead);
  });
  try {
    let earlier: DeliveryRecord | null = null;
    if (!turn) {
      run.queued(null);
      const { workflowId, runId, taskQueue } = workflowInfo();
      const checkedIn = await checkIn({ ...run.ref, workflowId, runId, taskQueue });
      earlier = checkedIn.earlier;
      if (checkedIn.turn) turn = true;
      else run.queued(checkedIn.ahead);
      const deadline = { summary: `give up waiting in the lane of job ${run.ref.jobId} at the follow-up's deadline` };
      if (!(await condition(() => turn, Math.max(run.deadlineMs - Date.now(), 1), deadline))) {
        throw run.timedOut('earlier follow-ups to the job were still running; nothing was sent');
      }
    }
    run.tookLane();
    const result = await work(earlier);
    await leaveLane(run);
    return result;
  } catch (error) {
    // The next run of a continued follow-up keeps the turn; every other way out gives it up.
    if (!(error instanceof ContinueAsNew)) await leaveLane(run);
    throw error;
  }
}

/** Tells the lane this follow-up is done with the job (or no longer waits), even while being cancelled. */
async function leaveLane(run: FollowUpRun): Promise<void> {
  const laneId = laneWorkflowId(run.ref.projectId, run.ref.jobId, workflowInfo().taskQueue);
  await CancellationScope.nonCancellable(async () => {
    try {
      await getExternalWorkflowHandle(laneId).signal(leaveLaneSignal, { workflowId: workflowInfo().workflowId });
    } catch (error) {
      // The lane has ended (idle) or was never joined: there is nothing to leave.
      log.info('The job lane could not be told this follow-up left', { laneId, reason: error instanceof Error ? error.message : String(error) });
    }
  });
}
