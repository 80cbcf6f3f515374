/**
 * The two task queues of one deployment. Sends run on a queue of their own because the per-project send budget is a
 * per-fairness-key rate limit on an activity task queue (README, "The send budget"): every activity on that queue
 * counts against it, and reads (which the vendor does not count) must not. Pure: workflow code imports it.
 */

/** The activity task queue of sends for a deployment whose workflows run on `taskQueue`. */
export function sendsTaskQueue(taskQueue: string): string {
  return `${taskQueue}-sends`;
}
