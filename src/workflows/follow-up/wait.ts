/**
 * Waiting: follows the job after the send until a read is this follow-up's own result (`judgeRead`). The poll
 * activity comes back only when the job changed, or with the unchanged terminal read the verdict asked for, so the
 * workflow wakes a handful of times per follow-up however long the agent works.
 */
import { jobState, type AgentJob } from '../../kernel/agent-job';
import type { Delivered } from './checkpoint';
import { judgeRead, watchAfter, type ReadVerdict, type ResultWatch } from './decisions';
import { confirmTold, waitForJobChange, withJobWatch } from './job-change';
import type { PollResult } from '../activity-contract';
import type { FollowUpRun } from './follow-up-run';
import type { PollNow } from './poll-now';
import type { SharedWatch } from './shared-watch';

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
  const watch = (): ResultWatch => ({ ...state, settleWindowMs: run.request.polling.settleWindowMs });
  const watchSeen = (read: PollResult): ResultWatch => ({ ...watch(), sawActive: state.sawActive || read.sawActive });
  // Until a read says otherwise, what the follow-up knows is the send's answer (or the job before it).
  let verdict: Extract<ReadVerdict, { kind: 'wait' }> = {
    kind: 'wait',
    known: state.known,
    acceptUnchangedFromMs: state.sentAtMs + run.request.polling.settleWindowMs,
    why: state.sawActive ? 'working' : 'settling',
  };
  for (;;) {
    run.enter('waiting', WAITING_FOR[verdict.why]);
    const { known, acceptUnchangedFromMs } = verdict;
    let read: PollResult = await waitForJobChange(run, pollNow, shared, {
      known,
      acceptUnchangedFromMs,
      summary: (readAtOnce) =>
        readAtOnce
          ? `read job ${run.ref.jobId} now (asked for), then wait for it to change from ${known.status}`
          : `wait for job ${run.ref.jobId} to change from ${known.status}`,
    });
    // A result the watcher told is this follow-up's only once its own read shows it (one GET, only then).
    if ('told' in read && judgeRead(watchSeen(read), jobState(read.job), read.readAtMs).kind === 'result') {
      const own = await confirmTold(run, read);
      if (own === null) continue;
      read = own;
    }
    const { job, readAtMs, polls, sawActive } = read;
    const recordedSawActive = state.sawActive;
    // Reads that found the job `active` as already known still prove the agent took this message.
    if (sawActive) state = { ...state, sawActive: true };
    const seen = jobState(job);
    const next = judgeRead(watch(), seen, readAtMs);
    // The result is shown with the outcome (one upsert); any other read at once.
    run.observe(job, polls, next.kind !== 'result');
    // Not recorded for the result (a history event saved): this run ends at once, and a later run resuming from the
    // record (after a failure) at worst waits out the rest of the settle window before taking the same result.
    if (next.kind === 'result') return job;
    const after = watchAfter(watch(), seen);
    state = { ...state, sawActive: after.sawActive, previous: after.previous, known: next.known };
    // A later run of this follow-up must know the job was seen working on its message.
    if (state.sawActive && !recordedSawActive) run.recordDelivered(state);
    verdict = next;
    await run.continueAsNewIfSuggested(state);
  }
}
