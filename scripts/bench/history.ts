/** Workflow histories as benchmarks read them: event times on the server's clock (the bench's machine), in ms. */
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { inBatches } from './stats';

export type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** An event's time in epoch ms. */
export function eventMs(event: Pick<HistoryEvent, 'eventTime'>): number {
  const time = event.eventTime;
  return Number(time?.seconds ?? 0) * 1000 + (time?.nanos ?? 0) / 1e6;
}

/** The histories of these workflows (their latest runs), 10 fetched at a time. */
export async function fetchHistories(client: Client, workflowIds: readonly string[]): Promise<HistoryEvent[][]> {
  return inBatches(
    workflowIds,
    10,
    async (workflowId) => (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [],
  );
}
