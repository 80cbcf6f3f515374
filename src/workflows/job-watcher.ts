/**
 * jobWatcherWorkflow: reads the jobs of many waiting follow-ups for them (one watcher per shard of a task queue's
 * jobs). Follow-ups register a wait by signal and hear back only when their job answered, or when reads of it begin
 * or stop failing. The reading is one long activity (watchJobs) that asks this workflow for the changes to its book by
 * query, so the book never passes through history; this workflow only keeps the book and keeps that activity running.
 * It continues as new before its signals or history grow large, and ends when no wait is left for a while.
 */
import {
  ActivityCancellationType,
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  isCancellation,
  log,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { FollowUpActivities } from '../activities';
import { WatchRegistry, type WatchRegistration } from '../follow-up/watch-registry';
import { unwatchJobSignal, watchChangesQuery, watchedWaitQuery, watchJobSignal } from './definitions';

/**
 * A run continues as new after this many signals or events, so that replaying it stays short. A watcher that takes
 * signals all the time is evicted at its continue-as-new (the server refuses the completion while a signal that came
 * meanwhile is unhandled) and replays its whole run before its next task. At 4,000 signals that replay took 7 s on a
 * busy worker; with the 10 s workflow task timeout and signals still arriving, the run outgrew every retry and its
 * reading stayed cancelled (10,000 waits: 3 of 8 watchers stuck for over 20 minutes).
 */
const SIGNALS_PER_RUN = 1_000;
const EVENTS_PER_RUN = 2_000;
/** How long a watcher with nothing to watch stays, so a burst of follow-ups does not start it over and over. */
const IDLE_FOR_MS = 10 * 60_000;

export interface WatcherStart {
  /** The waits carried from the run before (continue-as-new). */
  registrations?: WatchRegistration[];
  /** When each of them was first registered, by workflow id. */
  watchedSince?: Record<string, number>;
}

const { watchJobs } = proxyActivities<FollowUpActivities>({
  // One attempt runs for as long as the watcher: it heartbeats every few seconds, so a worker that dies is noticed
  // within 5 s and the reading moves to another worker (the retry starts after 1 s).
  startToCloseTimeout: '7 days',
  heartbeatTimeout: '5s',
  retry: { initialInterval: '1s', backoffCoefficient: 1.5, maximumInterval: '5s' },
  // The attempt hears of its cancellation only at its next heartbeat (up to 4 s later): until then it still reads, so
  // the next run's attempt must not start before it has stopped, or the two read the same jobs at once.
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  // Eager dispatch would hand the reading to the worker that ran this workflow's task, and a watcher's tasks stay on
  // the worker that has it cached: every watcher started in one burst would then read on one worker. Through the
  // task queue, each attempt goes to whichever worker polls for it, so the reading spreads over all of them.
  allowEagerDispatch: false,
  summary: 'read the watched jobs on their schedules, and tell their follow-ups when they answer',
});

export async function jobWatcherWorkflow(start: WatcherStart = {}): Promise<void> {
  const since = typeof start.watchedSince === 'object' && start.watchedSince !== null ? start.watchedSince : {};
  const registry = new WatchRegistry(Array.isArray(start.registrations) ? start.registrations : [], since, Date.now());
  let signals = 0;
  setHandler(watchJobSignal, (registration) => {
    signals += 1;
    registry.upsert(registration, Date.now());
  });
  setHandler(unwatchJobSignal, ({ workflowId, runId, round }) => {
    signals += 1;
    registry.remove(workflowId, runId, round);
  });
  setHandler(watchChangesQuery, (version, reports) => {
    // The reader's reports only feed watchedWaitQuery: nothing the workflow decides reads them (see WatchRegistry).
    if (Array.isArray(reports)) registry.noteReports(reports);
    return registry.changesSince(typeof version === 'number' ? version : 0);
  });
  setHandler(watchedWaitQuery, (workflowId) => registry.view(String(workflowId)));

  const reading = new CancellationScope();
  const reader = reading.run(() => watchJobs({ watcherId: workflowInfo().workflowId })).catch((error: unknown) => {
    if (!isCancellation(error)) log.warn('The watch activity ended', { error: String(error) });
  });
  for (;;) {
    setCurrentDetails(`Watching **${registry.size}** wait(s) of follow-ups; run ${workflowInfo().runId}.`);
    const shouldContinue = () => workflowInfo().continueAsNewSuggested || signals >= SIGNALS_PER_RUN || workflowInfo().historyLength >= EVENTS_PER_RUN;
    const size = registry.size;
    if (size === 0) {
      const busy = await condition(() => registry.size > 0 || shouldContinue(), IDLE_FOR_MS);
      if (!busy) break;
    } else {
      await condition(() => registry.size !== size || shouldContinue());
    }
    if (shouldContinue()) {
      reading.cancel();
      await reader;
      await condition(allHandlersFinished);
      await continueAsNew<typeof jobWatcherWorkflow>({ registrations: registry.all(), watchedSince: registry.watchedSince() });
    }
  }
  reading.cancel();
  await reader;
}
