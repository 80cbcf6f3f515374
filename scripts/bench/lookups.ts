/**
 * The check-in's visibility look-ups: what the server spends on them while N follow-ups run (no worker: they only
 * have to be listed). Each look-up is the check-in's own (`findEarlierOfJob`: one list) beside the two lists it made
 * before (the earlier runs of the id, then the running follow-ups to the job started before it, with the running
 * condition at the top of the query), 20 in flight as in a burst, on the dev server's SQLite; and `pollNow` by job's
 * list of the job's open follow-ups beside the one it made with `ExecutionStatus = 'Running'`.
 */
import { TypedSearchAttributes } from '@temporalio/common';
import { createFindEarlierOfJob, quote } from '../../src/coordinator/earlier-of-job.activity';
import { openFollowUpsOfJobQuery } from '../../src/client/follow-up-queries';
import { AgentJobId, AgentProjectId } from '../../src/kernel/search-attributes';
import { FOLLOW_UP_WORKFLOW_TYPE } from '../../src/kernel/workflow-ids';
import { cpuMs, startDevServer } from './processes';
import { inBatches, percentile } from './stats';

export interface LookupRow {
  running: number;
  shape: 'one list (as built)' | 'two lists (before)' | 'poll-now by job (as built)' | 'poll-now by job (before)';
  lookups: number;
  /** The dev server's CPU per look-up. */
  serverCpuMs: number;
  latencyP50Ms: number;
  /** Requests per look-up. */
  lists: number;
}

const IN_FLIGHT = 20;

export async function runLookups(options: {
  sizes: number[];
  lookups: number;
  log: (line: string) => void;
}): Promise<LookupRow[]> {
  const rows: LookupRow[] = [];
  for (const running of options.sizes) {
    const server = await startDevServer();
    try {
      const client = server.client;
      const ref = (index: number) => ({ projectId: `lookup-p${index}`, jobId: `lookup-j${index}` });
      // Started on a queue no worker polls: they stay running, listed as a burst's follow-ups are.
      await inBatches(
        Array.from({ length: running }, (_, index) => index),
        100,
        (index) =>
          client.workflow.start(FOLLOW_UP_WORKFLOW_TYPE, {
            taskQueue: 'lookups-nobody-polls',
            workflowId: `lookup-${index}`,
            args: [],
            typedSearchAttributes: new TypedSearchAttributes([
              { key: AgentProjectId, value: ref(index).projectId },
              { key: AgentJobId, value: ref(index).jobId },
            ]),
          }),
      );
      const startedAtMs = Date.now();
      // Visibility takes the starts in a moment; the look-ups should find each one's own row.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const asking = (index: number) => ({
        ...ref(index),
        workflowId: `lookup-${index}`,
        runId: 'not-a-listed-run',
        startedAtMs,
        // A run's first check-in, which also wants the earlier runs of its id.
        findEarlier: true,
      });
      const findEarlierOfJob = createFindEarlierOfJob(client);
      const drain = async (query: string, pageSize?: number) => {
        for await (const execution of client.workflow.list({ query, ...(pageSize ? { pageSize } : {}) }))
          void execution;
      };
      const shapes: Record<LookupRow['shape'], { lists: number; lookUp: (index: number) => Promise<unknown> }> = {
        'one list (as built)': { lists: 1, lookUp: (index) => findEarlierOfJob(asking(index)) },
        'two lists (before)': {
          lists: 2,
          lookUp: (index) => {
            const { projectId, jobId, workflowId } = asking(index);
            return Promise.all([
              drain(`WorkflowId = ${quote(workflowId)}`),
              drain(
                `WorkflowType = ${quote(FOLLOW_UP_WORKFLOW_TYPE)} AND ExecutionStatus = "Running" AND ` +
                  `AgentProjectId = ${quote(projectId)} AND AgentJobId = ${quote(jobId)} AND ` +
                  `StartTime < ${quote(new Date(startedAtMs).toISOString())}`,
                100,
              ),
            ]);
          },
        },
        'poll-now by job (as built)': { lists: 1, lookUp: (index) => drain(openFollowUpsOfJobQuery(ref(index))) },
        'poll-now by job (before)': {
          lists: 1,
          lookUp: (index) =>
            drain(
              `WorkflowType = '${FOLLOW_UP_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running' AND ` +
                `AgentProjectId = '${ref(index).projectId}' AND AgentJobId = '${ref(index).jobId}'`,
            ),
        },
      };
      for (const [shape, { lists, lookUp }] of Object.entries(shapes) as Array<
        [LookupRow['shape'], (typeof shapes)[LookupRow['shape']]]
      >) {
        const latencies: number[] = [];
        const cpuBefore = cpuMs(server.pid);
        // Spread over the running follow-ups, each looked up once.
        const indexes = Array.from({ length: options.lookups }, (_, n) => (n * 7) % running);
        await inBatches(indexes, IN_FLIGHT, async (index) => {
          const began = performance.now();
          await lookUp(index);
          latencies.push(performance.now() - began);
        });
        const row: LookupRow = {
          running,
          shape,
          lookups: options.lookups,
          serverCpuMs: (cpuMs(server.pid) - cpuBefore) / options.lookups,
          latencyP50Ms: percentile(latencies, 50),
          lists,
        };
        options.log(
          `lookups: ${running} running, ${shape}: ${row.serverCpuMs.toFixed(2)} ms of server CPU per look-up, p50 ${row.latencyP50Ms.toFixed(1)} ms`,
        );
        rows.push(row);
      }
    } finally {
      await server.stop();
    }
  }
  return rows;
}

export function renderLookups(rows: readonly LookupRow[]): string[] {
  return [
    "## The check-in's look-ups",
    '',
    `A check-in's visibility look-ups with N follow-ups running (each to a project and job of its own, no worker), ` +
      `${rows[0]?.lookups ?? 0} look-ups ${IN_FLIGHT} at a time: the check-in's one list beside the two it made before ` +
      '(the earlier runs of the id, and the running follow-ups to the job started before it with `ExecutionStatus = "Running"` ' +
      "at the top of the query); and `pollNow` by job's list of the open follow-ups of a job (closed statuses ruled out " +
      "one by one) beside its list with `ExecutionStatus = 'Running'`.",
    '',
    '| running | look-up | lists | server CPU per look-up (ms) | p50 latency (ms) |',
    '|---|---|---|---|---|',
    ...rows.map(
      (row) =>
        `| ${row.running} | ${row.shape} | ${row.lists} | ${row.serverCpuMs.toFixed(2)} | ${row.latencyP50Ms.toFixed(1)} |`,
    ),
    '',
  ];
}
