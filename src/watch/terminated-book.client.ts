/**
 * The waits a terminated watcher run held, for whoever takes them over (adoptBook, the worker's guard). A closed run
 * still answers queries (its history replayed), so its book is read the way a reader reads it. Except a run terminated
 * before its first workflow task completed (no worker took it, or none finished it: all of them down, or overloaded):
 * the server refuses to query it, for ever ("closed before WorkflowTaskStarted", FAILED_PRECONDITION). Nothing it did
 * was recorded, so its book is what its history holds: the book it was started with (a run continued as new carries
 * one) and what its signals brought, put through the same book and the same checks its run would have.
 */
import { ServiceError, type Client } from '@temporalio/client';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { decodedPayloads } from '../client/decoded-payloads';
import { unwatchJobSignal, watchChangesQuery, watchJobBatchSignal, REGISTRATIONS_PER_SIGNAL } from './messages';
import type { WatcherStart, WatchRegistration } from './messages';
import { checkRegistration, checkUnwatch } from './watch-messages';
import { WatcherBook } from './watcher-book';

export async function terminatedRunBook(
  temporal: Client,
  watcherId: string,
  runId: string,
): Promise<WatchRegistration[]> {
  const handle = temporal.workflow.getHandle(watcherId, runId);
  try {
    return (await handle.query(watchChangesQuery, 0)).upserts;
  } catch (error) {
    if (!refusedAsNotRun(error)) throw error;
  }
  const events = (await handle.fetchHistory()).events ?? [];
  if (events.some((event) => event.workflowTaskCompletedEventAttributes)) {
    throw new Error(
      `The terminated watcher run ${runId} of ${watcherId} completed a workflow task, yet its book could not be queried`,
    );
  }
  const converter = temporal.options.loadedDataConverter;
  const started = events[0]?.workflowExecutionStartedEventAttributes;
  const [start] = await decodedPayloads(converter, started?.input?.payloads);
  // No limit here: the run that takes the waits over admits them into its own book, and refuses what it has no room for.
  const book = new WatcherBook((start ?? {}) as WatcherStart, 0, Number.MAX_SAFE_INTEGER);
  for (const event of events) {
    const signal = event.workflowExecutionSignaledEventAttributes;
    if (signal?.signalName !== watchJobBatchSignal.name && signal?.signalName !== unwatchJobSignal.name) continue;
    const [message] = await decodedPayloads(converter, signal.input?.payloads);
    if (signal.signalName === unwatchJobSignal.name) {
      const unwatch = checkUnwatch(message);
      if (unwatch) book.remove(unwatch.workflowId, unwatch.runId, unwatch.round, unwatch.replyTo);
    } else if (Array.isArray(message) && message.length <= REGISTRATIONS_PER_SIGNAL) {
      for (const registration of message.map(checkRegistration)) if (registration) book.admit(registration);
    }
  }
  return book.all();
}

/** The server's refusal to query a run that closed before any workflow task started. */
function refusedAsNotRun(error: unknown): boolean {
  const cause = error instanceof ServiceError ? error.cause : undefined;
  return (
    typeof cause === 'object' && cause !== null && (cause as { code?: unknown }).code === GrpcStatus.FAILED_PRECONDITION
  );
}
