/**
 * The worker process's Temporal Runtime: our logger for every log line (Core's own lines forwarded to it, so JSON
 * output has no stray plain-text lines) and, when an address is configured, the Prometheus endpoint.
 *
 * Metric naming is deliberately the SDK's default: Core's metrics keep the `temporal_` prefix, histograms in
 * milliseconds, no `_total` or unit suffixes, which is what Temporal's own "Core SDKs" Grafana dashboard queries
 * (temporalio/dashboards, sdk/temporal-core-sdks-otel.json). Our own metrics get no prefix and no suffix from Core,
 * so we name them in Prometheus style ourselves (`agent_followup_*_total`, `agent_followup_*_seconds`).
 * docs/OBSERVABILITY.md lists them as they appear.
 */
import type { LogLevel, Logger, RuntimeOptions } from '@temporalio/worker';
import { FollowUpMetric } from '../workflows/follow-up/metrics';
import type { ObservabilitySettings } from '../config';

/**
 * Buckets (seconds) for `agent_followup_time_to_terminal_seconds`. Core's default buckets (50…10000) are meant for
 * milliseconds; an agent's follow-up takes from seconds to hours.
 */
export const TIME_TO_TERMINAL_BUCKETS_S = [
  5, 15, 30, 60, 120, 300, 600, 1_200, 1_800, 3_600, 7_200, 14_400, 43_200, 86_400,
];

const SEVERITY: readonly LogLevel[] = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'];

/** Core's own lines: WARN and above, or fewer if LOG_LEVEL asks for fewer. Core's INFO and DEBUG are a torrent. */
export function coreLogLevel(level: LogLevel): LogLevel {
  return SEVERITY.indexOf(level) > SEVERITY.indexOf('WARN') ? level : 'WARN';
}

/** The options for `Runtime.install` in the worker process (call it once, before any connection). */
export function workerRuntimeOptions(settings: ObservabilitySettings, logger: Logger): RuntimeOptions {
  return {
    logger,
    telemetryOptions: {
      logging: { filter: { core: coreLogLevel(settings.logLevel), other: 'ERROR' }, forward: {} },
      ...(settings.metricsAddress !== null
        ? {
            metrics: {
              prometheus: {
                bindAddress: settings.metricsAddress,
                histogramBucketOverrides: { [FollowUpMetric.timeToTerminal]: TIME_TO_TERMINAL_BUCKETS_S },
              },
            },
          }
        : {}),
    },
  };
}
