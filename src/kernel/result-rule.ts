/**
 * Whether a read after the send is the follow-up's result (`judgeRead`), and what a reader of the job may leave
 * untold (`isNews`): one rule for the follow-up and for whoever reads the job for it (its watcher, its own poll), so a
 * read the follow-up would only wait on after never wakes it. Pure and workflow-safe: the follow-up, the job watcher
 * and the activities import it.
 */
import { isTerminal, jobState, sameJobState, type AgentJob, type JobState } from './agent-job';

/** What the follow-up knows while it waits for its result. */
export interface ResultWatch {
  /** The idle job just before the send. */
  baseline: JobState;
  sentAtMs: number;
  /** A read after the send showed the job `active`: the agent took this follow-up's message. */
  sawActive: boolean;
  /** The read returned before this one, if any since the send. */
  previous: JobState | null;
  settleWindowMs: number;
}

/** What to do with a read: it is this follow-up's result, or wait on (telling the wait activity when to come back). */
export type ReadVerdict =
  | { kind: 'result' }
  | {
      kind: 'wait';
      /** Come back when the job differs from this... */
      known: JobState;
      /** ...or, if it is terminal and unchanged, once this time has come (null: only on a change). */
      acceptUnchangedFromMs: number | null;
      why: 'working' | 'settling' | 'confirming';
    };

/**
 * Whether a read (made at `readAtMs`) is this follow-up's result. A terminal read counts only after the job was seen
 * `active` after the send, or once the settle window has passed since the send, or when it shows a pull request the
 * job did not have before the send: before that it may be a lagging replica, or the job's earlier result, and neither
 * shows a link the job did not have yet. A read identical to the job before the send must also be read twice in a row,
 * so one lagging read cannot end the follow-up with the old result.
 */
export function judgeRead(watch: ResultWatch, read: JobState, readAtMs: number): ReadVerdict {
  if (!isTerminal(read.status)) return { kind: 'wait', known: read, acceptUnchangedFromMs: null, why: 'working' };
  const newPullRequest = read.prLink !== null && read.prLink !== watch.baseline.prLink;
  const settled = watch.sawActive || newPullRequest || readAtMs - watch.sentAtMs >= watch.settleWindowMs;
  if (!settled) {
    return { kind: 'wait', known: read, acceptUnchangedFromMs: watch.sentAtMs + watch.settleWindowMs, why: 'settling' };
  }
  const asBefore = sameJobState(read, watch.baseline);
  const confirmed = watch.previous !== null && sameJobState(watch.previous, read);
  if (asBefore && !confirmed) return { kind: 'wait', known: read, acceptUnchangedFromMs: readAtMs, why: 'confirming' };
  return { kind: 'result' };
}

/** The watch after a read that was not the result. */
export function watchAfter(watch: ResultWatch, read: JobState): ResultWatch {
  return { ...watch, sawActive: watch.sawActive || read.status === 'active', previous: read };
}

/**
 * At most this many states a follow-up has seen go with a wait: a job that moves through more distinct states than this
 * wakes its follow-up at the ones forgotten (the earliest, other than the baseline), never misses a result.
 */
export const SEEN_STATES_KEPT = 8;

/**
 * What a reader needs to answer a wait only with news (WaitRequest.result): the follow-up's own judgement, and the
 * states it has already seen since the send (the baseline first). Absent from the first wait after a send.
 */
export interface ResultRule {
  baseline: JobState;
  sentAtMs: number;
  settleWindowMs: number;
  sawActive: boolean;
  seen: JobState[];
}

/** What one reader remembers of its own reads of a wait: the read before (null: none yet), and whether one was `active`. */
export interface ReaderMemory {
  previous: JobState | null;
  sawActive: boolean;
}

/**
 * Whether a read that would answer a wait by the old rule (it changed, or is the unchanged terminal read asked for) is
 * news to the follow-up: its result by the follow-up's own judgement, or a state it has not seen since the send. A job
 * that flaps between states already seen (a lagging replica serving the earlier result between `active` reads) so
 * costs its follow-up nothing until it ends. `memory` is the reader's own (never the follow-up's, which may not know
 * of reads the reader made since): one that lost its memory knows no read before, and judges as the follow-up would
 * after its first read.
 */
export function isNews(rule: ResultRule, job: AgentJob | JobState, readAtMs: number, memory: ReaderMemory): boolean {
  const read = jobState(job);
  if (!rule.seen.some((state) => sameJobState(state, read))) return true;
  const watch: ResultWatch = {
    baseline: rule.baseline,
    sentAtMs: rule.sentAtMs,
    settleWindowMs: rule.settleWindowMs,
    sawActive: rule.sawActive || memory.sawActive,
    previous: memory.previous,
  };
  return judgeRead(watch, read, readAtMs).kind === 'result';
}

/** The states a follow-up has seen, with `state` added (at most SEEN_STATES_KEPT, the baseline kept first). */
export function withSeen(seen: JobState[], state: JobState): JobState[] {
  if (seen.some((kept) => sameJobState(kept, state))) return seen;
  const [baseline, ...later] = [...seen, jobState(state)];
  return baseline ? [baseline, ...later.slice(-(SEEN_STATES_KEPT - 1))] : [];
}
