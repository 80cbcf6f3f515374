/** The `npm run simulator` command line: the `--fault` flag and the other flags, parsed strictly. */
import { parseFaultFlag } from '../../src/simulator/fault-flags';
import { UsageError, parseSimulatorArgs } from '../../src/simulator/simulator-args';

describe('parseFaultFlag', () => {
  test.each([
    ['get:status:0.2:503', { operation: 'get', kind: 'status', rate: 0.2, status: 503 }],
    ['any:latency:0.1:2000', { operation: 'any', kind: 'latency', rate: 0.1, latencyMs: 2000 }],
    ['send:drop-after-processing:0.3', { operation: 'send', kind: 'drop-after-processing', rate: 0.3 }],
    ['send:drop-before-processing', { operation: 'send', kind: 'drop-before-processing' }],
    ['get:stale-terminal:1', { operation: 'get', kind: 'stale-terminal', rate: 1 }],
    ['any:malformed-body:0', { operation: 'any', kind: 'malformed-body', rate: 0 }],
    ['get:invalid-schema:.5', { operation: 'get', kind: 'invalid-schema', rate: 0.5 }],
  ])('%s becomes the matching rule', (text, rule) => {
    expect(parseFaultFlag(text)).toEqual(rule);
  });

  test.each([
    ['get', /expected 2 to 4 parts/],
    ['get:status:0.2:503:extra', /expected 2 to 4 parts/],
    ['put:status:1:503', /OPERATION must be one of send, get, any, got "put"/],
    ['get:explode', /KIND must be one of status, latency/],
    ['get:status', /KIND 'status' needs PARAM, an HTTP status code/],
    ['get:status:1:abc', /PARAM must be an HTTP status code/],
    ['get:status:1:200', /status.*>=400|status/],
    ['any:latency:0.5', /KIND 'latency' needs PARAM, a number of milliseconds/],
    ['any:latency:0.5:-1', /PARAM must be a number of milliseconds/],
    ['get:status:1.5:503', /RATE must be a probability from 0 to 1/],
    ['get:status::503', /RATE must be a probability/],
    ['get:status:1e-1:503', /RATE must be a probability/],
    ['send:drop-after-processing:0.3:5', /takes no PARAM/],
    ['send:stale-terminal', /only changes reads/],
  ])('%s is refused with a message that says what is wrong', (text, message) => {
    expect(() => parseFaultFlag(text)).toThrow(message);
  });

  test('every refusal quotes the flag and the expected form', () => {
    expect(() => parseFaultFlag('get:nope')).toThrow('--fault "get:nope": KIND must be one of');
    expect(() => parseFaultFlag('get:nope')).toThrow('(expected OPERATION:KIND[:RATE[:PARAM]])');
  });
});

describe('parseSimulatorArgs', () => {
  test('without flags the defaults of the demo are used and idempotency keys are honoured', () => {
    expect(parseSimulatorArgs([])).toEqual({
      help: false,
      host: '127.0.0.1',
      port: 8787,
      workMs: 3000,
      sendsPerProjectPerHour: undefined,
      jobs: [{ projectId: 'demo-project', jobId: 'demo-job', outcome: 'completed' }],
      faults: [],
      seed: undefined,
      honourIdempotencyKey: false,
    });
  });

  test('repeated --fault flags, --seed and --honour-idempotency-key are all taken', () => {
    const args = parseSimulatorArgs([
      '--fault',
      'get:status:0.2:503',
      '--fault',
      'send:drop-after-processing:0.3',
      '--seed',
      '1234',
      '--honour-idempotency-key',
      '--job',
      'p/j=failed',
      '--rate-limit',
      '100',
    ]);
    expect(args.faults).toEqual([
      { operation: 'get', kind: 'status', rate: 0.2, status: 503 },
      { operation: 'send', kind: 'drop-after-processing', rate: 0.3 },
    ]);
    expect(args).toMatchObject({ seed: 1234, honourIdempotencyKey: true, sendsPerProjectPerHour: 100 });
    expect(args.jobs).toEqual([{ projectId: 'p', jobId: 'j', outcome: 'failed' }]);
  });

  test('every bad flag is listed in one UsageError', () => {
    let error: unknown;
    try {
      parseSimulatorArgs([
        '--port',
        '70000',
        '--seed=-1',
        '--fault',
        'get:status',
        '--job',
        'nojob',
        '--work-ms',
        '1.5',
      ]);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UsageError);
    const lines = (error as UsageError).message.split('\n');
    expect(lines).toEqual([
      '--port must be a whole number from 0 to 65535, got "70000"',
      '--work-ms must be a whole number from 0 to 86400000, got "1.5"',
      '--seed must be a whole number from 0 to 4294967295, got "-1"',
      expect.stringContaining('--job must be PROJECT/JOB'),
      expect.stringContaining(`--fault "get:status": KIND 'status' needs PARAM`),
    ]);
  });

  test('an unknown flag, a positional argument or a missing value is a UsageError', () => {
    expect(() => parseSimulatorArgs(['--chaos'])).toThrow(UsageError);
    expect(() => parseSimulatorArgs(['extra'])).toThrow(UsageError);
    expect(() => parseSimulatorArgs(['--seed'])).toThrow(UsageError);
    expect(() => parseSimulatorArgs(['--chaos'])).toThrow("Unknown option '--chaos'");
  });

  test('a seed beyond 32 bits is refused rather than silently wrapped', () => {
    expect(() => parseSimulatorArgs(['--seed', '4294967296'])).toThrow(
      '--seed must be a whole number from 0 to 4294967295',
    );
  });
});
