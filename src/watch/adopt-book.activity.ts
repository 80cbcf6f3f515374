/**
 * adoptBook: a watcher started afresh (not continued as new) takes over the waits of the run before it under its id,
 * when that run was terminated (by an operator, or a reset) with waits in its book. Nothing else would read them:
 * a watcher reading by its timers has no reader left to put them back. The new run is started by the next wait on its
 * shard or by a worker's guard (watcher-guard.worker.ts). Its book is read as terminated-book.client.ts says.
 */
import { log } from '@temporalio/activity';
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import type { AdoptBookRequest } from '../workflows/activity-contract';
import { JOB_WATCHER_WORKFLOW_TYPE } from '../kernel/workflow-ids';
import type { WatchRegistration } from './messages';
import { terminatedRunBook } from './terminated-book.client';

/**
 * A run closed longer ago than this is not adopted: its follow-ups have registered again by themselves at the
 * default schedule's silence (an hour), or ended.
 */
export const ADOPT_CLOSED_WITHIN_MS = 60 * 60_000;

export function createAdoptBook(temporal: Client) {
  return async function adoptBook({ watcherId, runId }: AdoptBookRequest): Promise<WatchRegistration[]> {
    const since = new Date(Date.now() - ADOPT_CLOSED_WITHIN_MS).toISOString();
    let last: WorkflowExecutionInfo | undefined;
    const query = `WorkflowId = ${JSON.stringify(watcherId)} AND CloseTime > ${JSON.stringify(since)}`;
    for await (const execution of temporal.workflow.list({ query })) {
      if (execution.runId === runId || !execution.closeTime) continue;
      if (!last?.closeTime || execution.closeTime > last.closeTime) last = execution;
    }
    // Only the run just before this one: one that ended idle (its book empty) or continued as new came after any
    // terminated run whose waits were taken over already.
    if (!last || last.status.name !== 'TERMINATED' || last.type !== JOB_WATCHER_WORKFLOW_TYPE) return [];
    const waits = await terminatedRunBook(temporal, watcherId, last.runId);
    log.warn('The run before this job watcher was terminated with waits in its book: taking them over', {
      watcherId,
      terminatedRunId: last.runId,
      waits: waits.length,
    });
    return waits;
  };
}
