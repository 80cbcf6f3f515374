/**
 * The per-project send budget, shared by every worker: a per-fairness-key rate limit on the sends task queue
 * (`fairnessKey` = project id), enforced by the Temporal server's matching service. Configured here through the
 * API (`temporal task-queue config set --task-queue-type activity --fairness-key-rps-limit-default R` does the same
 * for the default), read back for `agent-followup budget show` and the worker's start-up check.
 *
 * Requires task queue fairness on the server (`matching.enableFairness`; a namespace setting on Temporal Cloud) and,
 * for exact spacing, one partition for the sends queue: the limit is split across partitions (README, "The send
 * budget").
 */
import { temporal } from '@temporalio/proto';
import { sendsTaskQueue } from './follow-up/task-queues';

/**
 * The vendor allows 100 uses per project per hour, and creating a job counts too: 80 sends leaves a fifth of the
 * budget to whatever else creates jobs in the project (the dashboard, other tools), so our follow-ups never make
 * those fail with 429.
 */
export const DEFAULT_SENDS_PER_PROJECT_PER_HOUR = 80;

/** The Temporal API a budget needs (a Connection's or a NativeConnection's workflow service). */
export interface TaskQueueConfigService {
  updateTaskQueueConfig(request: temporal.api.workflowservice.v1.IUpdateTaskQueueConfigRequest): Promise<unknown>;
  describeTaskQueue(request: temporal.api.workflowservice.v1.IDescribeTaskQueueRequest): Promise<temporal.api.workflowservice.v1.IDescribeTaskQueueResponse>;
}

export interface SendBudget {
  sendsPerProjectPerHour: number;
  /** Per-project weights: a project with weight 2 may send twice the default budget, 0.5 half of it. */
  weights: Record<string, number>;
}

const ACTIVITY = temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY;

function toRps(sendsPerHour: number): number {
  return sendsPerHour / 3600;
}

/** Sets the budget on the deployment's sends queue: the default rate per project, and the weights given. */
export async function configureSendBudget(
  service: TaskQueueConfigService,
  where: { namespace: string; taskQueue: string },
  budget: SendBudget,
): Promise<void> {
  await service.updateTaskQueueConfig({
    namespace: where.namespace,
    taskQueue: sendsTaskQueue(where.taskQueue),
    taskQueueType: ACTIVITY,
    identity: 'agent-followup',
    updateFairnessKeyRateLimitDefault: {
      rateLimit: { requestsPerSecond: toRps(budget.sendsPerProjectPerHour) },
      reason: `agent-followup: ${budget.sendsPerProjectPerHour} sends per project per hour`,
    },
    // Weight 1 is every project's default, so it is stored as no override at all.
    setFairnessWeightOverrides: Object.fromEntries(Object.entries(budget.weights).filter(([, weight]) => weight !== 1)),
    unsetFairnessWeightOverrides: Object.entries(budget.weights).filter(([, weight]) => weight === 1).map(([project]) => project),
  });
}

/** The budget the sends queue has now: null when no per-project limit is set. */
export async function readSendBudget(service: TaskQueueConfigService, where: { namespace: string; taskQueue: string }): Promise<SendBudget | null> {
  const response = await service.describeTaskQueue({
    namespace: where.namespace,
    taskQueue: { name: sendsTaskQueue(where.taskQueue), kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: ACTIVITY,
    reportConfig: true,
  });
  const rps = response.config?.fairnessKeysRateLimitDefault?.rateLimit?.requestsPerSecond;
  if (rps === undefined || rps === null) return null;
  return { sendsPerProjectPerHour: Math.round(rps * 3600 * 1000) / 1000, weights: { ...(response.config?.fairnessWeightOverrides ?? {}) } };
}

export type SendBudgetCheck = { ok: true; budget: SendBudget } | { ok: false; problem: string } | { ok: 'unknown'; reason: string };

/** gRPC codes meaning "you may not ask", not "something is wrong": PERMISSION_DENIED, UNIMPLEMENTED, UNAUTHENTICATED. */
const NOT_ALLOWED_TO_ASK = new Set([7, 12, 16]);

/** Compares the sends queue's budget with the one the worker expects; says what is missing and how to set it. */
export async function checkSendBudget(
  service: TaskQueueConfigService,
  where: { namespace: string; taskQueue: string },
  expectedPerHour: number,
): Promise<SendBudgetCheck> {
  let budget: SendBudget | null;
  try {
    budget = await readSendBudget(service, where);
  } catch (error) {
    const code = (error as { code?: number }).code;
    if (code !== undefined && NOT_ALLOWED_TO_ASK.has(code)) return { ok: 'unknown', reason: (error as Error).message };
    throw error;
  }
  const fix =
    `set it once per task queue with \`agent-followup budget set --sends-per-hour ${expectedPerHour}\`, or ` +
    `\`temporal task-queue config set --namespace ${where.namespace} --task-queue ${sendsTaskQueue(where.taskQueue)} ` +
    `--task-queue-type activity --fairness-key-rps-limit-default ${toRps(expectedPerHour)}\` (the server needs task queue fairness: ` +
    'matching.enableFairness=true; on Temporal Cloud, fairness enabled on the namespace)';
  if (budget === null) {
    return { ok: false, problem: `the sends queue '${sendsTaskQueue(where.taskQueue)}' has no per-project send budget: ${fix}` };
  }
  if (Math.abs(budget.sendsPerProjectPerHour - expectedPerHour) > 0.01) {
    return {
      ok: false,
      problem:
        `the sends queue '${sendsTaskQueue(where.taskQueue)}' allows ${budget.sendsPerProjectPerHour} sends per project per hour, ` +
        `not the ${expectedPerHour} of AGENT_SENDS_PER_PROJECT_PER_HOUR: change one of them; to change the queue, ${fix}`,
    };
  }
  return { ok: true, budget };
}
