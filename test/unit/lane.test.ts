import { emptyLane, grantNext, isIdle, isLaneState, join, laneWorkflowId, leave, placeOf, viewOf } from '../../src/follow-up/lane';

describe("a job's lane: one follow-up at a time, the others in arrival order", () => {
  test('the lane id names exactly one job of one deployment: ids cannot contain "/" or "@"', () => {
    expect(laneWorkflowId('acme', 'web-X', 'agent-followup')).not.toBe(laneWorkflowId('acme-web', 'X', 'agent-followup'));
    expect(laneWorkflowId('acme', 'job-1', 'agent-followup')).toBe('lane/acme/job-1@agent-followup');
  });

  test('the first to join gets the job; the next ones wait in arrival order and know how many go first', () => {
    const lane = emptyLane('p', 'j');
    expect(join(lane, 'a', 1)).toBe('joined');
    expect(grantNext(lane, 2)?.workflowId).toBe('a');
    join(lane, 'b', 3);
    join(lane, 'c', 4);
    expect(grantNext(lane, 5)).toBeNull();
    expect([placeOf(lane, 'a'), placeOf(lane, 'b'), placeOf(lane, 'c')]).toEqual([null, 1, 2]);
    expect(viewOf(lane)).toEqual({ projectId: 'p', jobId: 'j', holder: { workflowId: 'a', sinceMs: 2 }, waiting: ['b', 'c'], served: 0 });
  });

  test('joining again keeps the place: a retried check-in, a continued or restarted run', () => {
    const lane = emptyLane('p', 'j');
    join(lane, 'a', 1);
    grantNext(lane, 1);
    join(lane, 'b', 2);
    expect(join(lane, 'a', 3)).toBe('holding');
    expect(join(lane, 'b', 4)).toBe('waiting');
    expect(viewOf(lane).waiting).toEqual(['b']);
  });

  test('the holder leaving frees the job for the next; a waiting one leaving just gives up its place', () => {
    const lane = emptyLane('p', 'j');
    for (const id of ['a', 'b', 'c']) join(lane, id, 1);
    grantNext(lane, 1);
    expect(leave(lane, 'b')).toBe('left');
    expect(leave(lane, 'a')).toBe('released');
    expect(leave(lane, 'nobody')).toBe('unknown');
    expect(grantNext(lane, 9)?.workflowId).toBe('c');
    expect(leave(lane, 'c')).toBe('released');
    expect(isIdle(lane)).toBe(true);
    expect(lane.served).toBe(2);
  });

  test('only a well-formed state is taken from a continued run', () => {
    const lane = emptyLane('p', 'j');
    join(lane, 'a', 1);
    grantNext(lane, 1);
    join(lane, 'b', 2);
    expect(isLaneState(JSON.parse(JSON.stringify(lane)))).toBe(true);
    expect(isLaneState({ ...lane, waiting: [{ workflowId: 7 }] })).toBe(false);
    expect(isLaneState({ ...lane, holder: { workflowId: 'a' } })).toBe(false);
    expect(isLaneState({ ...lane, served: 'many' })).toBe(false);
    expect(isLaneState(null)).toBe(false);
  });
});
