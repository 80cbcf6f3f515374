import { workflowInfo } from '@temporalio/workflow';

/**
 * How far a run's history has grown, as known at the last event it took: what decides when it continues as new.
 *
 * `workflowInfo()`'s history length and the server's continue-as-new suggestion move with every workflow task, also a
 * task that only refused Updates. The SDK evaluates every blocked `condition` after each Update it is handed, refused
 * or not, and a refused Update leaves nothing in history, so a replay is never handed it: a condition that read those
 * figures could turn true in the live run and not on replay, and what followed (cancel the reader, continue as new)
 * failed the replay with a nondeterminism error. That is what a flood of refused Updates did to a watcher on a loaded
 * machine. So the figures are read only by `note()`, which a workflow calls where its history has an event: a signal,
 * the handler of an accepted Update, code that runs on after a timer, an activity or a condition.
 */
export class NotedGrowth {
  private suggested = false;
  private events = 0;

  note(): void {
    const info = workflowInfo();
    this.suggested = info.continueAsNewSuggested;
    this.events = info.historyLength;
  }

  /** The server suggested continuing as new, or the run had `events` events or more, when last noted. */
  reached(events: number): boolean {
    return this.suggested || this.events >= events;
  }
}
