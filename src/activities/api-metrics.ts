/** The activities' own metrics; the SDK adds `namespace`, `task_queue` and `activity_type` labels. */
import { Context } from '@temporalio/activity';
import { ApplicationFailure, type MetricCounter } from '@temporalio/common';
import { AgentApiErrorType } from '../agent-api/errors';

export const ApiMetric = {
  requests: 'agent_followup_api_requests_total',
  errors: 'agent_followup_api_errors_total',
  polls: 'agent_followup_polls_total',
} as const;

/** The `operation` label: which agent API call. */
export type ApiOperation = 'send' | 'get_job';

/** A failure type outside AgentApiErrorType (a bug, not an API answer) is counted under this `type`. */
export const UNEXPECTED_API_ERROR = 'Unexpected';

const KNOWN_API_ERROR_TYPES = new Set<string>(Object.values(AgentApiErrorType));

export interface ApiCounters {
  requests: MetricCounter;
  errors: MetricCounter;
  polls: MetricCounter;
}

const countersByActivity = new WeakMap<Context, ApiCounters>();

/** The counters of one activity attempt, made once: each `createCounter` makes a native metric, too much per poll. */
export function apiCounters(context: Context): ApiCounters {
  let counters = countersByActivity.get(context);
  if (!counters) {
    counters = {
      requests: context.metricMeter.createCounter(
        ApiMetric.requests,
        '1',
        'Agent API requests, by operation and outcome',
      ),
      errors: context.metricMeter.createCounter(
        ApiMetric.errors,
        '1',
        'Agent API errors, by operation and failure type',
      ),
      polls: context.metricMeter.createCounter(ApiMetric.polls, '1', 'Get-job reads that returned a job, by status'),
    };
    countersByActivity.set(context, counters);
  }
  return counters;
}

/**
 * Counts one agent API call: `agent_followup_api_requests_total{operation,outcome}` with outcome ok, error or cancelled
 * (the activity was cancelled or the worker shut down mid-request: not the API's doing), and for errors
 * `agent_followup_api_errors_total{operation,type}` with the stable failure type. Every request counts, because each one is
 * a real request the API saw (or could not be reached for).
 */
export async function countedApiCall<T>(operation: ApiOperation, call: () => Promise<T>): Promise<T> {
  const context = Context.current();
  const { requests, errors } = apiCounters(context);
  try {
    const result = await call();
    requests.add(1, { operation, outcome: 'ok' });
    return result;
  } catch (error) {
    if (context.cancellationSignal.aborted) {
      requests.add(1, { operation, outcome: 'cancelled' });
    } else {
      requests.add(1, { operation, outcome: 'error' });
      const type =
        error instanceof ApplicationFailure && error.type && KNOWN_API_ERROR_TYPES.has(error.type)
          ? error.type
          : UNEXPECTED_API_ERROR;
      errors.add(1, { operation, type });
    }
    throw error;
  }
}
