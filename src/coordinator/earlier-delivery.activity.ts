/**
 * readEarlierDelivery: what earlier runs under this workflow id did with the message. A follow-up that failed, timed
 * out or was cancelled after its message went out, started again with the same input (hence the same id), must not
 * send it a second time: it resumes from the earlier run's record (its memo) instead.
 *
 * The runs come from visibility (earlier-of-job.activity.ts: eventually consistent, but a run is listed from its start, long
 * before it can end); each record is read with describe(), which is consistent.
 */
import type { Client } from '@temporalio/client';
import { DELIVERY_MEMO_KEY, type DeliveryRecord } from '../kernel/types';
import type { EarlierRun } from './earlier-of-job.activity';

/** Builds the reader around a Temporal client of the worker's connection. */
export function createReadEarlierDelivery(client: Client) {
  return async function readEarlierDelivery(workflowId: string, runs: EarlierRun[]): Promise<DeliveryRecord | null> {
    const newestFirst = [...runs].sort((a, b) => b.startMs - a.startMs);
    for (const run of newestFirst) {
      const { memo } = await client.workflow.getHandle(workflowId, run.runId).describe();
      const record = memo?.[DELIVERY_MEMO_KEY];
      // The newest run with a record knows best: an older one's open send was settled by it.
      if (isDeliveryRecord(record)) return record.state === 'not-sent' ? null : record;
    }
    return null;
  };
}

function isDeliveryRecord(value: unknown): value is DeliveryRecord {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Partial<DeliveryRecord>;
  return (
    (record.state === 'sending' || record.state === 'not-sent' || record.state === 'delivered') &&
    typeof record.baseline?.status === 'string' &&
    typeof record.attemptStartedAtMs === 'number' &&
    typeof record.sendAttempts === 'number'
  );
}
