/**
 * Waiting: follows the job after the send until a read is this follow-up's own result (`judgeRead`). The poll
 * activity comes back only when the job changed, or with the unchanged terminal read the verdict asked for, so the
 * workflow wakes a handful of times per follow-up however long the agent works.
 */
import { jobState, type AgentJob } from '../../kernel/agent-job';
import type { Delivered } from './checkpoint';
import { judgeRead, watchAfter, withSeen, type ReadVerdict, type ResultWatch } from '../../kernel/result-rule';
import { waitForJobChange, withJobWatch } from './job-change';
import { scheduleFrom } from './run-schedule';
import type { PollResult } from '../activity-contract';
import type { FollowUpRun } from './follow-up-run';
import type { PollNow } from './poll-now';
import { confirmTold, type SharedWatch } from '../../watch/shared-watch';

const WAITING_FOR = { working: 'work', settling: 'settle', confirming: 'confirmation' } as const;

/** Waits for the job as it ended after this follow-up's message. */
export async function waitForResult(run: FollowUpRun, pollNow: PollNow, delivered: Delivered): Promise<AgentJob> {
  return withJobWatch(run, run.takeFirstWaitRegistered(), (shared) => waitWith(run, pollNow, delivered, shared));
}

async function waitWith(
  run: FollowUpRun,
  pollNow: PollNow,
  delivered: Delivered,
  shared: SharedWatch | null,
): Promise<AgentJob> {
  let state = delivered;
  const settleWindowMs = run.request.polling.settleWindowMs;
  // The states seen since the send: a watcher tells a read back in one of them only when it is the result.
  let seen = withSeen([state.baseline], state.known);
  // The first wait goes as the send registered it, every later one with the rule (the watcher then tells news only).
  let ruled = false;
  // A read told by a reader under the rule is judged after the read that reader made before it, as the reader judged.
  const watch = (read?: PollResult): ResultWatch => ({
    ...state,
    settleWindowMs,
    previous: ruled && read ? (read.previous ?? null) : state.previous,
  });
  const watchSeen = (read: PollResult): ResultWatch => ({
    ...watch(read),
    sawActive: state.sawActive || read.sawActive,
  });
  // Until a read says otherwise, what the follow-up knows is the send's answer (or the job before it).
  let verdict: Extract<ReadVerdict, { kind: 'wait' }> = {
    kind: 'wait',
    known: state.known,
    acceptUnchangedFromMs: state.sentAtMs + settleWindowMs,
    why: state.sawActive ? 'working' : 'settling',
  };
  for (;;) {
    run.enter('waiting', WAITING_FOR[verdict.why]);
    const { known, acceptUnchangedFromMs } = verdict;
    const { baseline, sentAtMs, sawActive: sawActiveBefore } = state;
    let read: PollResult = await waitForJobChange(run, pollNow, shared, {
      known,
      acceptUnchangedFromMs,
      summary: (readAtOnce) =>
        readAtOnce
          ? `read job ${run.ref.jobId} now (asked for), then wait for it to change from ${known.status}`
          : `wait for job ${run.ref.jobId} to change from ${known.status}`,
      ...(ruled ? { result: { baseline, sentAtMs, settleWindowMs, sawActive: sawActiveBefore, seen } } : {}),
    });
    // A result the watcher told is this follow-up's only once its own read shows it (one GET, only then).
    if ('told' in read && judgeRead(watchSeen(read), jobState(read.job), read.readAtMs).kind === 'result') {
      const own = await confirmTold(run, scheduleFrom(run), read);
      if (own === null) continue;
      read = own;
    }
    const { job, readAtMs, polls, sawActive } = read;
    const recordedSawActive = state.sawActive;
    // Reads that found the job `active` as already known still prove the agent took this message.
    if (sawActive) state = { ...state, sawActive: true };
    const seenNow = jobState(job);
    const next = judgeRead(watch(read), seenNow, readAtMs);
    // The result is shown with the outcome (one upsert); any other read at once.
    run.observe(job, polls, next.kind !== 'result');
    // Not recorded for the result (a history event saved): this run ends at once, and a later run resuming from the
    // record (after a failure) at worst waits out the rest of the settle window before taking the same result.
    if (next.kind === 'result') return job;
    const after = watchAfter(watch(read), seenNow);
    state = { ...state, sawActive: after.sawActive, previous: after.previous, known: next.known };
    seen = withSeen(seen, seenNow);
    ruled = true;
    // A later run of this follow-up must know the job was seen working on its message.
    if (state.sawActive && !recordedSawActive) run.recordDelivered(state);
    verdict = next;
    await run.continueAsNewIfSuggested(state);
  }
}
