/**
 * A job's lane: at most one follow-up between "about to send" and "result returned" per (project, job), the others
 * waiting in arrival order. The lane is a workflow of its own (workflows/job-lane.ts); this module holds its pure
 * parts: its id, its state and the state's changes, unit-tested without a server. Pure: workflow code imports it.
 */

/**
 * The lane's workflow id: one lane per job and deployment (task queue), which also runs the lane. Project and job ids
 * cannot contain '/' or '@', so the id names exactly one (project, job, task queue).
 */
export function laneWorkflowId(projectId: string, jobId: string, taskQueue: string): string {
  return `lane/${projectId}/${jobId}@${taskQueue}`;
}

export interface LaneEntry {
  /** The follow-up's workflow id (a continued or restarted run keeps its place). */
  workflowId: string;
  joinedAtMs: number;
}

export interface LaneState {
  projectId: string;
  jobId: string;
  holder: (LaneEntry & { sinceMs: number }) | null;
  waiting: LaneEntry[];
  /** Follow-ups that had their turn over the lane's whole life (all runs). */
  served: number;
  runs: number;
}

/** What a follow-up learns when it joins: the job is its own now, or this many go first. */
export interface LaneJoined {
  turn: boolean;
  ahead: number;
}

/** How many follow-ups go before this one (the holder included), or null when it is not waiting. */
export function placeOf(lane: LaneState, workflowId: string): number | null {
  const index = lane.waiting.findIndex((entry) => entry.workflowId === workflowId);
  return index < 0 ? null : index + (lane.holder ? 1 : 0);
}

/** What the `lane` query answers. */
export interface LaneView {
  projectId: string;
  jobId: string;
  holder: { workflowId: string; sinceMs: number } | null;
  waiting: string[];
  served: number;
}

export function emptyLane(projectId: string, jobId: string): LaneState {
  return { projectId, jobId, holder: null, waiting: [], served: 0, runs: 1 };
}

/** A follow-up joins; one already holding or waiting keeps its place (a retry, a continued or restarted run). */
export function join(lane: LaneState, workflowId: string, nowMs: number): 'holding' | 'waiting' | 'joined' {
  if (lane.holder?.workflowId === workflowId) return 'holding';
  if (lane.waiting.some((entry) => entry.workflowId === workflowId)) return 'waiting';
  lane.waiting.push({ workflowId, joinedAtMs: nowMs });
  return 'joined';
}

/** A follow-up leaves: the holder is done (the next may go), or a waiting one gives up its place. */
export function leave(lane: LaneState, workflowId: string): 'released' | 'left' | 'unknown' {
  if (lane.holder?.workflowId === workflowId) {
    lane.holder = null;
    lane.served += 1;
    return 'released';
  }
  const index = lane.waiting.findIndex((entry) => entry.workflowId === workflowId);
  if (index < 0) return 'unknown';
  lane.waiting.splice(index, 1);
  return 'left';
}

/** Hands the job to the first in line, if it is free; returns the new holder. */
export function grantNext(lane: LaneState, nowMs: number): LaneEntry | null {
  if (lane.holder !== null) return null;
  const next = lane.waiting.shift();
  if (!next) return null;
  lane.holder = { ...next, sinceMs: nowMs };
  return next;
}

export function isIdle(lane: LaneState): boolean {
  return lane.holder === null && lane.waiting.length === 0;
}

export function viewOf(lane: LaneState): LaneView {
  return {
    projectId: lane.projectId,
    jobId: lane.jobId,
    holder: lane.holder ? { workflowId: lane.holder.workflowId, sinceMs: lane.holder.sinceMs } : null,
    waiting: lane.waiting.map((entry) => entry.workflowId),
    served: lane.served,
  };
}

/** A continued lane's state, checked before it is trusted (only our own continue-as-new writes one). */
export function isLaneState(value: unknown): value is LaneState {
  if (typeof value !== 'object' || value === null) return false;
  const lane = value as Partial<LaneState>;
  const isEntry = (entry: unknown) =>
    typeof entry === 'object' && entry !== null && typeof (entry as LaneEntry).workflowId === 'string' && typeof (entry as LaneEntry).joinedAtMs === 'number';
  return (
    typeof lane.projectId === 'string' &&
    typeof lane.jobId === 'string' &&
    (lane.holder === null || (isEntry(lane.holder) && typeof lane.holder?.sinceMs === 'number')) &&
    Array.isArray(lane.waiting) &&
    lane.waiting.every(isEntry) &&
    typeof lane.served === 'number' &&
    typeof lane.runs === 'number'
  );
}
