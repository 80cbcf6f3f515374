/** Message definitions shared by the workflows and their callers. */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { LaneJoined, LaneView } from '../follow-up/lane';
import type { FollowUpProgress } from '../follow-up/types';

export const FOLLOW_UP_WORKFLOW_TYPE = 'followUpWorkflow';
export const JOB_LANE_WORKFLOW_TYPE = 'jobLaneWorkflow';

/** Where the follow-up stands: phase, last status, place in its job's lane, reads, last error. */
export const progressQuery = defineQuery<FollowUpProgress>('progress');

/**
 * To a job's lane, sent with update-with-start: a follow-up takes its place at the end of the line (or keeps the one it
 * has) and learns at once whether the job is its own now, or how many follow-ups go first.
 */
export const joinLaneUpdate = defineUpdate<LaneJoined, [{ workflowId: string }]>('joinLane');
/** To a job's lane: a follow-up is done with the job, or gives up its place. */
export const leaveLaneSignal = defineSignal<[{ workflowId: string }]>('leaveLane');
/** To a follow-up: the job is yours; send. */
export const laneTurnSignal = defineSignal('laneTurn');
/** To a follow-up: this many follow-ups to the job are ahead of you. */
export const lanePlaceSignal = defineSignal<[{ ahead: number }]>('lanePlace');
/** The lane as it stands: who holds the job, who waits, in order. */
export const laneQuery = defineQuery<LaneView>('lane');
