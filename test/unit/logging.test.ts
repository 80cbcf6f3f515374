import { ApplicationFailure } from '@temporalio/common';
import { LogTimestamp, type LogEntry } from '@temporalio/worker';
import {
  REDACTED,
  apiKeySecrets,
  collapseRetryLines,
  createLineLogger,
  formatJsonLine,
  formatTextLine,
  secretRedactor,
  type LineLoggerOptions,
} from '../../src/observability/logging';
import { TIME_TO_TERMINAL_BUCKETS_S, coreLogLevel, workerRuntimeOptions } from '../../src/observability/runtime';

const KEY = 'mint_logging_test_secret_0001';
const SECRET = 'logging_test_secret_0001';
// 2024-05-06T07:08:09.123Z, in nanoseconds, as Core and the SDK pass it.
const NANOS = 1_714_979_289_123_000_000n;

function entry(message: string, meta?: Record<string, unknown>, level: LogEntry['level'] = 'INFO'): LogEntry {
  return { level, message, timestampNanos: NANOS, ...(meta ? { meta } : {}) };
}

/** A logger whose lines are collected instead of written. */
function capture(options: Omit<LineLoggerOptions, 'write'>) {
  const lines: string[] = [];
  const logger = createLineLogger({ ...options, write: (line) => lines.push(line) });
  return { logger, lines };
}

describe('formatJsonLine', () => {
  test('puts time, level and message first and the SDK metadata flattened beside them', () => {
    const line = formatJsonLine(
      entry('Follow-up message accepted', {
        sdkComponent: 'workflow',
        workflowId: 'followup-p-j-0123',
        runId: 'run-1',
        taskQueue: 'agent-followup',
        namespace: 'default',
        projectId: 'p',
        jobId: 'j',
      }),
    );
    expect(JSON.parse(line)).toEqual({
      time: '2024-05-06T07:08:09.123Z',
      level: 'INFO',
      message: 'Follow-up message accepted',
      sdkComponent: 'workflow',
      workflowId: 'followup-p-j-0123',
      runId: 'run-1',
      taskQueue: 'agent-followup',
      namespace: 'default',
      projectId: 'p',
      jobId: 'j',
    });
    expect(Object.keys(JSON.parse(line) as object).slice(0, 3)).toEqual(['time', 'level', 'message']);
  });

  test('a multi-line message stays one line', () => {
    const line = formatJsonLine(entry('first\nsecond', { detail: 'a\nb' }));
    expect(line).not.toContain('\n');
    expect(JSON.parse(line)).toMatchObject({ message: 'first\nsecond', detail: 'a\nb' });
  });

  test('metadata named like a reserved field is kept under meta_<name> instead of replacing it', () => {
    expect(JSON.parse(formatJsonLine(entry('real', { message: 'from meta', level: 'x', time: 1 })))).toEqual({
      time: '2024-05-06T07:08:09.123Z',
      level: 'INFO',
      message: 'real',
      meta_message: 'from meta',
      meta_level: 'x',
      meta_time: 1,
    });
  });

  test('an ApplicationFailure keeps its type, retryability, details and cause chain', () => {
    const cause = new Error('socket hang up');
    const failure = ApplicationFailure.create({
      type: 'AgentApiServerError',
      message: 'HTTP 503 on get job',
      details: [{ status: 503, operation: 'get job' }],
      cause,
    });
    const logged = JSON.parse(formatJsonLine(entry('Activity failed', { error: failure }, 'WARN'))) as {
      error: Record<string, unknown>;
    };
    expect(logged.error).toMatchObject({
      name: 'ApplicationFailure',
      message: 'HTTP 503 on get job',
      type: 'AgentApiServerError',
      nonRetryable: false,
      details: [{ status: 503, operation: 'get job' }],
      cause: { name: 'Error', message: 'socket hang up' },
    });
    expect(logged.error.stack).toContain('HTTP 503 on get job');
  });

  test('bigints, bytes, dates, cycles and functions become JSON without throwing', () => {
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const logged = JSON.parse(
      formatJsonLine(
        entry('odd values', {
          big: 12345678901234567890n,
          bytes: new Uint8Array([1, 2, 3]),
          at: new Date('2024-01-02T03:04:05.000Z'),
          cyclic,
          fn: () => 1,
          infinite: Number.POSITIVE_INFINITY,
          missing: undefined,
        }),
      ),
    ) as Record<string, unknown>;
    expect(logged).toMatchObject({
      big: '12345678901234567890',
      bytes: '<3 bytes>',
      at: '2024-01-02T03:04:05.000Z',
      cyclic: { name: 'loop', self: '[Circular]' },
      infinite: 'Infinity',
    });
    expect(logged).not.toHaveProperty('fn');
    expect(logged).not.toHaveProperty('missing');
  });

  test('the same object twice is not mistaken for a cycle', () => {
    const shared = { id: 1 };
    expect(JSON.parse(formatJsonLine(entry('twice', { a: shared, b: shared })))).toMatchObject({
      a: { id: 1 },
      b: { id: 1 },
    });
  });
});

describe('formatTextLine', () => {
  test('reads like the SDK default line, with the metadata as JSON', () => {
    expect(formatTextLine(entry('Worker state changed', { state: 'RUNNING' }))).toBe(
      '2024-05-06T07:08:09.123Z [INFO] Worker state changed {"state":"RUNNING"}',
    );
  });

  test('a line without metadata has no trailing object', () => {
    expect(formatTextLine(entry('hello'))).toBe('2024-05-06T07:08:09.123Z [INFO] hello');
  });
});

describe('createLineLogger', () => {
  test("the SDK's routine lines (state changes, no Nexus, the sends worker's no workflows) go out at DEBUG only", () => {
    const quiet = capture({ format: 'json', level: 'INFO' });
    quiet.logger.log('INFO', 'Worker state changed', { state: 'RUNNING' });
    quiet.logger.warn('No workflows registered, not polling for workflow tasks');
    quiet.logger.info('No Nexus services registered, not polling for Nexus tasks');
    quiet.logger.warn('Reading the agent job failed');
    expect(quiet.lines.map((line) => (JSON.parse(line) as { message: string }).message)).toEqual([
      'Reading the agent job failed',
    ]);
    const verbose = capture({ format: 'json', level: 'DEBUG' });
    verbose.logger.log('INFO', 'Worker state changed', { state: 'RUNNING' });
    expect(JSON.parse(verbose.lines[0] as string)).toMatchObject({ level: 'DEBUG', message: 'Worker state changed' });
  });

  test('writes one JSON object per message at or above the level, and nothing below it', () => {
    const { logger, lines } = capture({ format: 'json', level: 'INFO' });
    logger.debug('hidden');
    logger.info('shown', { workflowId: 'wf-1' });
    logger.error('also shown');
    expect(lines.map((line) => JSON.parse(line) as Record<string, unknown>)).toEqual([
      expect.objectContaining({ level: 'INFO', message: 'shown', workflowId: 'wf-1' }),
      expect.objectContaining({ level: 'ERROR', message: 'also shown' }),
    ]);
  });

  test("uses a forwarded line's own timestamp (Core's) rather than the time it was written", () => {
    const { logger, lines } = capture({ format: 'json', level: 'INFO' });
    logger.warn('from core', { [LogTimestamp]: NANOS, sdkComponent: 'core' });
    expect(JSON.parse(lines[0] ?? '{}')).toEqual({
      time: '2024-05-06T07:08:09.123Z',
      level: 'WARN',
      message: 'from core',
      sdkComponent: 'core',
    });
  });

  test.each(['json', 'text'] as const)(
    'in %s lines, the key and its secret part are redacted wherever they appear',
    (format) => {
      const { logger, lines } = capture({ format, level: 'TRACE', secrets: apiKeySecrets(KEY) });
      const failure = ApplicationFailure.create({
        type: 'AgentApiUnauthorized',
        message: `key ${KEY} refused`,
        details: [{ echoed: SECRET }],
      });
      logger.warn(`Authorization: Bearer ${KEY}`, {
        header: `Bearer ${KEY}`,
        nested: { deeper: [SECRET] },
        error: failure,
      });
      logger.info('the secret alone', { value: `x${SECRET}y` });
      expect(lines).toHaveLength(2);
      for (const line of lines) {
        expect(line).not.toContain(KEY);
        expect(line).not.toContain(SECRET);
        expect(line).toContain(REDACTED);
      }
      // The stack repeats the message; it is redacted as well, and the line still parses.
      if (format === 'json') {
        const first = JSON.parse(lines[0] ?? '{}') as { header: string; error: { stack: string } };
        expect(first.header).toBe(`Bearer ${REDACTED}`);
        expect(first.error.stack).toContain(`key ${REDACTED} refused`);
        expect(JSON.parse(lines[1] ?? '{}')).toMatchObject({ value: `x${REDACTED}y` });
      }
    },
  );

  test('a key with characters JSON escapes is redacted in its escaped form too', () => {
    const oddKey = 'mint_quote"back\\slash_0001';
    const { logger, lines } = capture({ format: 'json', level: 'INFO', secrets: apiKeySecrets(oddKey) });
    logger.info('echo', { body: `{"auth":"${oddKey}"}` });
    const line = lines[0] ?? '';
    expect(line).not.toContain(JSON.stringify(oddKey).slice(1, -1));
    expect((JSON.parse(line) as { body: string }).body).toBe(`{"auth":"${REDACTED}"}`);
  });

  test('without secrets nothing is redacted (a control for the tests above)', () => {
    const { logger, lines } = capture({ format: 'json', level: 'INFO' });
    logger.info(`Bearer ${KEY}`);
    expect(lines[0]).toContain(KEY);
  });
});

describe('secretRedactor and apiKeySecrets', () => {
  test('the whole key is replaced as one, not split around its secret part', () => {
    expect(secretRedactor(apiKeySecrets(KEY))(`a ${KEY} b ${SECRET} c`)).toBe(`a ${REDACTED} b ${REDACTED} c`);
  });

  test('secrets under 4 characters are ignored so ordinary words survive', () => {
    expect(secretRedactor(['abc'])('abc abcd')).toBe('abc abcd');
  });

  test('a key is redacted whole and by its part after the prefix', () => {
    expect(apiKeySecrets(KEY)).toEqual([KEY, SECRET]);
    expect(apiKeySecrets('nounderscore')).toEqual(['nounderscore']);
    expect(apiKeySecrets(undefined)).toEqual([]);
  });
});

describe('workerRuntimeOptions', () => {
  const logger = createLineLogger({ format: 'json', level: 'INFO', write: () => undefined });

  test('forwards Core lines to our logger and serves metrics only when an address is set', () => {
    expect(workerRuntimeOptions({ logFormat: 'json', logLevel: 'INFO', metricsAddress: null }, logger)).toEqual({
      logger,
      telemetryOptions: { logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} } },
    });
    const withMetrics = workerRuntimeOptions(
      { logFormat: 'text', logLevel: 'ERROR', metricsAddress: '127.0.0.1:9464' },
      logger,
    );
    expect(withMetrics.telemetryOptions).toEqual({
      logging: { filter: { core: 'ERROR', other: 'ERROR' }, forward: {} },
      metrics: {
        prometheus: {
          bindAddress: '127.0.0.1:9464',
          histogramBucketOverrides: { agent_followup_time_to_terminal_seconds: TIME_TO_TERMINAL_BUCKETS_S },
        },
      },
    });
  });

  test.each([
    ['TRACE', 'WARN'],
    ['DEBUG', 'WARN'],
    ['INFO', 'WARN'],
    ['WARN', 'WARN'],
    ['ERROR', 'ERROR'],
  ] as const)("LOG_LEVEL %s lets Core's own lines through from %s", (level, core) => {
    expect(coreLogLevel(level)).toBe(core);
  });

  test('time-to-terminal buckets are seconds in increasing order, from seconds to a day', () => {
    expect([...TIME_TO_TERMINAL_BUCKETS_S].sort((a, b) => a - b)).toEqual(TIME_TO_TERMINAL_BUCKETS_S);
    expect(TIME_TO_TERMINAL_BUCKETS_S[0]).toBe(5);
    expect(TIME_TO_TERMINAL_BUCKETS_S.at(-1)).toBe(86_400);
  });
});

describe('an outage of Temporal in the log', () => {
  test('a few lines, not one per retried call: the first says so, one a minute says it still lasts, the rest at DEBUG', () => {
    const seen: Array<{ level: string; message: string }> = [];
    let nowMs = 0;
    const logger = collapseRetryLines(
      {
        log: (level, message) => seen.push({ level, message }),
        trace: () => {},
        debug: () => {},
        info: () => {},
        warn: () => {},
        error: () => {},
      },
      () => nowMs,
    );
    // A 40 s outage as measured: four pollers, a retry line each every 150 ms or so.
    for (nowMs = 0; nowMs < 40_000; nowMs += 150)
      logger.warn(`gRPC call poll_workflow_task_queue retried ${(nowMs / 150) % 10} times`, { sdkComponent: 'core' });
    logger.info('Follow-up message accepted');
    const loud = seen.filter(({ level }) => level !== 'DEBUG');
    expect(loud).toEqual([
      {
        level: 'WARN',
        message: expect.stringMatching(
          /^Temporal is not answering: the worker retries its calls .*\. Last: gRPC call poll_workflow_task_queue retried 0 times$/,
        ),
      },
      { level: 'INFO', message: 'Follow-up message accepted' },
    ]);
    expect(seen.filter(({ level }) => level === 'DEBUG')).toHaveLength(Math.ceil(40_000 / 150) - 1);
    // Longer: once a minute, with what was held back; after a quiet spell, a new outage is said afresh.
    for (; nowMs < 130_000; nowMs += 150) logger.error('gRPC call poll_activity_task_queue retried 3 times');
    nowMs += 31_000;
    logger.warn('gRPC call describe_workflow_execution retried 5 times');
    expect(
      seen.filter(({ level }) => level === 'WARN' || level === 'ERROR').map(({ message }) => message.split('.')[0]),
    ).toEqual([
      'Temporal is not answering: the worker retries its calls until it does (its follow-ups are safe in Temporal); the retries are logged at DEBUG, and this again each minute it lasts',
      'Temporal is still not answering: 399 more retried call(s) in the last 60s',
      'Temporal is still not answering: 399 more retried call(s) in the last 60s',
      'Temporal is not answering: the worker retries its calls until it does (its follow-ups are safe in Temporal); the retries are logged at DEBUG, and this again each minute it lasts',
    ]);
  });
});
