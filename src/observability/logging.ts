/**
 * The worker's log lines. The SDK's runtime logger receives everything: workflow `log` calls (with workflowId, runId,
 * workflowType), activity `log` calls and the SDK's activity lines (with workflowId, activityType, and the projectId
 * and jobId our activity interceptor adds), worker lifecycle lines, and Core's own lines once they are forwarded.
 * This module turns each into one line of text or one JSON object, and cuts every configured secret out of the
 * finished line: the API client already keeps the key out of its messages, but a log line can carry anything (an
 * error's cause, a stack, a third party's message), so the last step before stderr is a plain search and replace.
 */
import { DefaultLogger, type LogEntry, type LogLevel, type Logger } from '@temporalio/worker';
import { secretDetector, secretRedactor } from '../secrets';
import type { LogFormat } from '../config/log-settings';

export { apiKeySecrets, REDACTED, secretRedactor } from '../secrets';

export { LOG_FORMATS, LOG_LEVELS, type LogFormat } from '../config/log-settings';
/** What is logged instead of a line that held the API key in an encoded form. */
export const WITHHELD_LINE = 'A log line was withheld: it held the API key in an encoded form';

/** Objects nested deeper than this are cut (a failure's cause chain is far shallower). */
const MAX_DEPTH = 8;
/** Longer arrays are cut with a marker, so one huge value cannot produce a megabyte line. */
const MAX_ARRAY_ITEMS = 50;

/** Fields every JSON line starts with; a metadata key of the same name is kept as `meta_<key>`. */
const RESERVED_FIELDS = new Set(['time', 'level', 'message']);

export interface LineLoggerOptions {
  format: LogFormat;
  level: LogLevel;
  /** Values that must never reach a log line, e.g. the API key and its secret part. */
  secrets?: readonly string[];
  /** Where finished lines go (without the newline); stderr by default. */
  write?: (line: string) => void;
}

/** A logger for `Runtime.install({ logger })` that writes one redacted line per message, as text or JSON. */
export function createLineLogger(options: LineLoggerOptions): Logger {
  const format = options.format === 'json' ? formatJsonLine : formatTextLine;
  const redact = secretRedactor(options.secrets ?? []);
  const holdsSecret = secretDetector(options.secrets ?? []);
  const write = options.write ?? ((line: string) => void process.stderr.write(`${line}\n`));
  // DefaultLogger filters by level and takes Core's timestamp for forwarded lines; only the output is ours.
  return collapseRetryLines(
    demoteRoutineLines(
      new DefaultLogger(options.level, (entry) => {
        const line = redact(format(entry));
        // A key left in an encoded form cannot be cut out exactly: the line goes, its time and level stay.
        write(holdsSecret(line) ? format({ ...entry, message: WITHHELD_LINE, meta: undefined }) : line);
      }),
    ),
  );
}

/**
 * The SDK's routine lines that say nothing an operator acts on: every worker state change, "no Nexus services", the
 * sends worker's "No workflows registered" (it polls activities only, on purpose: a WARN there reads as a fault),
 * and the bundler's output when a worker bundles at start-up. They are logged at DEBUG instead of INFO/WARN.
 */
const ROUTINE_SDK_LINES = [
  /^Worker state changed$/,
  /^No Nexus services registered/,
  /^No workflows registered/,
  /^(Workflow bundle created|webpack|asset |orphan modules|runtime modules|cacheable modules|modules by path)/,
];

/** Wraps a logger so the routine SDK lines above go out at DEBUG. */
export function demoteRoutineLines(logger: Logger): Logger {
  return relevel(logger, (level, message) =>
    ROUTINE_SDK_LINES.some((pattern) => pattern.test(message)) ? 'DEBUG' : level,
  );
}

/** Wraps a logger so each line goes out at the level `levelOf` gives it, or not at all (null). */
export function relevel(logger: Logger, levelOf: (level: LogLevel, message: string) => LogLevel | null): Logger {
  return rewriting(logger, (level, message) => {
    const to = levelOf(level, message);
    return to === null ? null : { level: to, message };
  });
}

/** Wraps a logger so each line goes out as `rewrite` makes it (a level and a message), or not at all (null). */
function rewriting(
  logger: Logger,
  rewrite: (level: LogLevel, message: string) => { level: LogLevel; message: string } | null,
): Logger {
  const logAt = (level: LogLevel, message: string, meta?: Record<string, unknown>) => {
    const line = rewrite(level, message);
    if (line !== null) logger.log(line.level, line.message, meta);
  };
  return {
    log: logAt,
    trace: (message, meta) => logAt('TRACE', message, meta),
    debug: (message, meta) => logAt('DEBUG', message, meta),
    info: (message, meta) => logAt('INFO', message, meta),
    warn: (message, meta) => logAt('WARN', message, meta),
    error: (message, meta) => logAt('ERROR', message, meta),
  };
}

/** Core's line for a call to Temporal it is retrying: every poller logs one per retry while the server is away. */
const CORE_RETRY_LINE = /^gRPC call \S+ retried \d+ times/;
/** Retry lines this far apart are two outages: the second is said afresh. */
const OUTAGE_QUIET_MS = 30_000;
/** While an outage lasts, it is said again this often, with how many retry lines were held back. */
const OUTAGE_REPEAT_MS = 60_000;

/**
 * Wraps a logger so an outage of Temporal is a few lines, not hundreds: Core logs a WARN for every retried call of
 * every poller (266 lines in a 40 s outage, measured). The first says Temporal is not answering, one a minute says it
 * still is not and how many retries were held back, and the held lines go out at DEBUG (LOG_LEVEL=DEBUG shows them).
 */
export function collapseRetryLines(logger: Logger, now: () => number = Date.now): Logger {
  let lastRetryAtMs = Number.NEGATIVE_INFINITY;
  let saidAtMs = Number.NEGATIVE_INFINITY;
  let heldBack = 0;
  return rewriting(logger, (level, message) => {
    if ((level !== 'WARN' && level !== 'ERROR') || !CORE_RETRY_LINE.test(message)) return { level, message };
    const atMs = now();
    const fresh = atMs - lastRetryAtMs > OUTAGE_QUIET_MS;
    lastRetryAtMs = atMs;
    if (!fresh && atMs - saidAtMs < OUTAGE_REPEAT_MS) {
      heldBack += 1;
      return { level: 'DEBUG', message };
    }
    const said = fresh
      ? 'Temporal is not answering: the worker retries its calls until it does (its follow-ups are safe in Temporal); ' +
        'the retries are logged at DEBUG, and this again each minute it lasts'
      : `Temporal is still not answering: ${heldBack} more retried call(s) in the last ${Math.round((atMs - saidAtMs) / 1000)}s`;
    heldBack = 0;
    saidAtMs = atMs;
    return { level, message: `${said}. Last: ${message}` };
  });
}

/** `{"time":…,"level":…,"message":…, …metadata}` on one line; metadata keys stay top-level (flattened). */
export function formatJsonLine(entry: LogEntry): string {
  const record: Record<string, unknown> = {
    time: isoTime(entry.timestampNanos),
    level: entry.level,
    message: entry.message,
  };
  for (const [key, value] of Object.entries(entry.meta ?? {})) {
    if (value === undefined) continue;
    record[RESERVED_FIELDS.has(key) ? `meta_${key}` : key] = toLogValue(value, 0, new WeakSet());
  }
  return JSON.stringify(record);
}

/** `2025-01-01T12:00:00.000Z [INFO] message {"workflowId":…}`: the SDK's layout, with JSON metadata. */
export function formatTextLine(entry: LogEntry): string {
  const meta = Object.entries(entry.meta ?? {}).filter((pair) => pair[1] !== undefined);
  const head = `${isoTime(entry.timestampNanos)} [${entry.level}] ${entry.message}`;
  if (meta.length === 0) return head;
  return `${head} ${JSON.stringify(toLogValue(Object.fromEntries(meta), 0, new WeakSet()))}`;
}

function isoTime(timestampNanos: bigint): string {
  return new Date(Number(timestampNanos / 1_000_000n)).toISOString();
}

/**
 * A JSON-safe copy of a log value. Errors keep their name, message, stack and own fields (an ApplicationFailure's
 * `type`, `nonRetryable`, `details`) and their cause chain; bytes, bigints and cycles become short markers.
 */
function toLogValue(value: unknown, depth: number, seen: WeakSet<object>): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'undefined' || typeof value === 'function' || typeof value === 'symbol') return undefined;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString();
  if (value instanceof Uint8Array) return `<${value.byteLength} bytes>`;
  if (seen.has(value)) return '[Circular]';
  if (depth >= MAX_DEPTH) return Array.isArray(value) ? '[Array]' : '[Object]';
  seen.add(value);
  try {
    if (Array.isArray(value)) {
      const items = value.slice(0, MAX_ARRAY_ITEMS).map((item) => toLogValue(item, depth + 1, seen) ?? null);
      if (value.length > MAX_ARRAY_ITEMS) items.push(`… ${value.length - MAX_ARRAY_ITEMS} more`);
      return items;
    }
    if (value instanceof Map) return toLogValue(Object.fromEntries(value), depth, seen);
    if (value instanceof Set) return toLogValue([...value], depth, seen);
    const out: Record<string, unknown> = {};
    if (value instanceof Error) {
      out.name = value.name;
      out.message = value.message;
    }
    for (const [key, child] of Object.entries(value)) {
      // A TemporalFailure's raw `failure` proto repeats the message and may hold encoded payloads: leave it out.
      if (value instanceof Error && key === 'failure') continue;
      const converted = toLogValue(child, depth + 1, seen);
      if (converted !== undefined) out[key] = converted;
    }
    if (value instanceof Error) {
      if (value.stack !== undefined) out.stack = value.stack;
      if (value.cause !== undefined) out.cause = toLogValue(value.cause, depth + 1, seen);
    }
    return out;
  } finally {
    seen.delete(value);
  }
}
