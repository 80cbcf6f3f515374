/**
 * jobLaneWorkflow: one job's lane. Follow-ups to the job join it (update-with-start, through an activity: the answer
 * says whether the job is theirs now), wait for their turn in arrival order, and leave when they have their result or
 * give up; the lane hands the job to one at a time and tells the others their place. It is Temporal's mutex pattern
 * (samples-typescript/mutex) with a queue.
 *
 * It outlives worker and server restarts like any workflow, drops follow-ups that are gone (a turn or a place it
 * cannot deliver; a holder that is no longer running), keeps its history bounded with continue-as-new, and ends
 * after a while with nobody in it (the next follow-up starts it again).
 */
import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  log,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { FollowUpActivities } from '../activities';
import { emptyLane, grantNext, isIdle, isLaneState, join, leave, placeOf, viewOf, type LaneJoined, type LaneState, type LaneView } from '../follow-up/lane';
import { identifierProblem } from '../follow-up/request';
import { FollowUpErrorType } from '../follow-up/types';
import { joinLaneUpdate, lanePlaceSignal, laneQuery, laneTurnSignal, leaveLaneSignal } from './definitions';

/** With nobody holding or waiting for this long, the lane ends; the next follow-up starts it again. */
const IDLE_MS = 5 * 60_000;
/**
 * How often the lane makes sure its holder still runs (one that was terminated never says it is done): soon while
 * others wait behind it; rarely while it is alone, when a dead holder blocks nobody and only keeps the lane open.
 * Each check is a timer, two workflow tasks and an activity, so with one follow-up per job (the usual) a check every
 * 5 minutes cost more than polling the job every 60s did (docs/BENCHMARKS.md).
 */
const HOLDER_CHECK_MS = { othersWaiting: 5 * 60_000, alone: 60 * 60_000 } as const;

const { followUpIsRunning } = proxyActivities<FollowUpActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', maximumInterval: '30s' },
  summary: 'check that the follow-up holding the job still runs',
});

export interface LaneStart {
  projectId: string;
  jobId: string;
}

/** Serves one job's follow-ups one at a time, in arrival order. */
export async function jobLaneWorkflow(start: LaneStart, ...continued: unknown[]): Promise<LaneView> {
  const lane = admit(start, continued);
  let changed = true;
  /** The place each waiting follow-up was last told, so only changes are signalled. */
  const told = new Map<string, number>();
  setHandler(
    joinLaneUpdate,
    ({ workflowId }): LaneJoined => {
      join(lane, workflowId, Date.now());
      // A free job goes to the first in line at once; when that is the joiner, the answer itself tells it.
      if (lane.holder === null && lane.waiting[0]?.workflowId === workflowId) grantNext(lane, Date.now());
      changed = true;
      if (lane.holder?.workflowId === workflowId) return { turn: true, ahead: 0 };
      told.set(workflowId, placeOf(lane, workflowId) ?? 0);
      return { turn: false, ahead: placeOf(lane, workflowId) ?? 0 };
    },
    { validator: ({ workflowId }) => validateJoiner(workflowId) },
  );
  setHandler(leaveLaneSignal, ({ workflowId }) => {
    leave(lane, workflowId);
    told.delete(workflowId);
    changed = true;
  });
  setHandler(laneQuery, () => viewOf(lane));

  for (;;) {
    changed = false;
    await handOver(lane, told);
    await tellPlaces(lane, told);
    setCurrentDetails(describeLane(lane));
    if (workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof jobLaneWorkflow>(start, { ...lane, runs: lane.runs + 1 });
    }
    if (isIdle(lane)) {
      if (!(await condition(() => changed, IDLE_MS, { summary: 'close the idle lane unless a follow-up arrives' }))) return viewOf(lane);
      continue;
    }
    const check = { summary: `check that ${lane.holder?.workflowId ?? 'the holder'} still runs` };
    const checkInMs = lane.waiting.length > 0 ? HOLDER_CHECK_MS.othersWaiting : HOLDER_CHECK_MS.alone;
    if (!(await condition(() => changed, checkInMs, check)) && lane.holder && !(await followUpIsRunning(lane.holder.workflowId))) {
      log.warn('The follow-up holding the job is no longer running; the next one may go', { ...start, holder: lane.holder.workflowId });
      leave(lane, lane.holder.workflowId);
    }
  }
}

/** Gives the job to the first follow-up in line that can still be reached. */
async function handOver(lane: LaneState, told: Map<string, number>): Promise<void> {
  for (let next = grantNext(lane, Date.now()); next; next = grantNext(lane, Date.now())) {
    const { workflowId } = next;
    told.delete(workflowId);
    if (await deliver(workflowId, () => getExternalWorkflowHandle(workflowId).signal(laneTurnSignal))) return;
    leave(lane, workflowId);
  }
}

/** Tells each waiting follow-up how many are ahead of it, when that changed; drops the ones that are gone. */
async function tellPlaces(lane: LaneState, told: Map<string, number>): Promise<void> {
  const ahead = (index: number) => index + (lane.holder ? 1 : 0);
  const changes = lane.waiting.map((entry, index) => ({ workflowId: entry.workflowId, ahead: ahead(index) })).filter((entry) => told.get(entry.workflowId) !== entry.ahead);
  const results = await Promise.all(
    changes.map(async (entry) => ({
      ...entry,
      delivered: await deliver(entry.workflowId, () => getExternalWorkflowHandle(entry.workflowId).signal(lanePlaceSignal, { ahead: entry.ahead })),
    })),
  );
  for (const entry of results) {
    if (entry.delivered) told.set(entry.workflowId, entry.ahead);
    else leave(lane, entry.workflowId);
  }
}

/** Sends a signal; false when the follow-up is gone (ended, terminated, or never existed). */
async function deliver(workflowId: string, send: () => Promise<void>): Promise<boolean> {
  try {
    await send();
    return true;
  } catch (error) {
    log.info('A follow-up in the lane is gone; dropping it', { workflowId, reason: error instanceof Error ? error.message : String(error) });
    return false;
  }
}

/** Refuses a join that is not a workflow id (the update is rejected before it reaches history). */
function validateJoiner(workflowId: unknown): void {
  if (typeof workflowId !== 'string' || workflowId.length === 0 || workflowId.length > 1_000) {
    throw new Error('joinLane takes { workflowId }, the joining follow-up\'s workflow id');
  }
}

function describeLane(lane: LaneState): string {
  const lines = [`**Lane of job \`${lane.jobId}\`** in project \`${lane.projectId}\`: ${lane.served} follow-up(s) served so far.`, ''];
  lines.push(lane.holder ? `- Holding the job: \`${lane.holder.workflowId}\` since ${new Date(lane.holder.sinceMs).toISOString()}` : '- Nobody holds the job.');
  lines.push(`- Waiting: ${lane.waiting.length === 0 ? 'nobody' : lane.waiting.map((entry) => `\`${entry.workflowId}\``).join(', ')}`);
  return lines.join('\n');
}

function admit(start: LaneStart, continued: unknown[]): LaneState {
  const problems = [identifierProblem('projectId', start?.projectId), identifierProblem('jobId', start?.jobId)].filter(Boolean);
  const carried = continued[0];
  if (continued.length > 1 || (continued.length === 1 && (workflowInfo().continuedFromExecutionRunId === undefined || !isLaneState(carried)))) {
    problems.push('the lane takes one argument, { projectId, jobId }');
  }
  if (problems.length > 0) {
    throw ApplicationFailure.create({ type: FollowUpErrorType.InvalidInput, message: `Invalid lane input: ${problems.join('; ')}`, nonRetryable: true });
  }
  return isLaneState(carried) ? carried : emptyLane(start.projectId, start.jobId);
}
