/**
 * The command line of `npm run simulator`, parsed strictly into options. Pure (no process access) so that every flag
 * and every error message is unit-tested; main.ts only wires the result to a running simulator.
 */
import { parseArgs } from 'node:util';
import { SIMULATED_OUTCOMES } from './control-schemas';
import { parseFaultFlag } from './fault-flags';
import type { FaultRule } from './faults';
import type { SimulatedOutcome } from './simulator';

export const SIMULATOR_USAGE = `Usage: npm run simulator -- [options]
  --port N                  port to listen on (default 8787; 0 picks a free one)
  --host HOST               address to listen on (default 127.0.0.1)
  --work-ms N               how long the agent works on each follow-up (default 3000)
  --rate-limit N|none       sends allowed per project per rolling hour (default: the vendor's 100)
  --job PROJECT/JOB[=OUTCOME]   seed a job (repeatable; default demo-project/demo-job); OUTCOME is one of
                            ${SIMULATED_OUTCOMES.join(', ')}
  --fault OPERATION:KIND[:RATE[:PARAM]]   a global fault rule (repeatable); OPERATION send|get|any, RATE 0..1
                            (default 1), PARAM the status code for 'status' or milliseconds for 'latency'
  --seed N                  seed of the fault-rate generator (0 to 4294967295), to repeat a run exactly
  --honour-idempotency-key  answer a send whose Idempotency-Key was seen before from that first send, without
                            processing it again (default: processed again, as the vendor documents no such key)
  --help                    show this help`;

/** A bad command line: main.ts prints it with the usage and exits with code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface SeededJob {
  projectId: string;
  jobId: string;
  outcome: SimulatedOutcome;
}

export interface SimulatorArgs {
  help: boolean;
  host: string;
  port: number;
  workMs: number;
  /** undefined: the vendor's 100; null: no limit. */
  sendsPerProjectPerHour: number | null | undefined;
  jobs: SeededJob[];
  faults: FaultRule[];
  seed: number | undefined;
  honourIdempotencyKey: boolean;
}

const DIGITS = /^\d+$/;
const MAX_SEED = 0xffff_ffff;

/** Parses the simulator's flags (without the leading `node main.js`); throws a UsageError listing every problem. */
export function parseSimulatorArgs(argv: string[]): SimulatorArgs {
  const values = readFlags(argv);

  const problems: string[] = [];
  const integer = (flag: string, text: string, min: number, max: number): number => {
    const value = Number(text);
    if (!DIGITS.test(text) || value < min || value > max) {
      problems.push(`--${flag} must be a whole number from ${min} to ${max}, got ${JSON.stringify(text)}`);
    }
    return value;
  };

  const port = integer('port', values.port, 0, 65_535);
  const workMs = integer('work-ms', values['work-ms'], 0, 24 * 3_600_000);
  const rateLimit = values['rate-limit'];
  const sendsPerProjectPerHour =
    rateLimit === undefined
      ? undefined
      : rateLimit.trim().toLowerCase() === 'none'
        ? null
        : integer('rate-limit', rateLimit, 1, 1_000_000);
  const seed = values.seed === undefined ? undefined : integer('seed', values.seed, 0, MAX_SEED);

  const jobs: SeededJob[] = [];
  for (const spec of values.job) {
    const match = /^([^/=]+)\/([^=]+)(?:=(.+))?$/.exec(spec);
    const outcome = match?.[3] ?? 'completed';
    if (!match?.[1] || !match[2] || !(SIMULATED_OUTCOMES as readonly string[]).includes(outcome)) {
      problems.push(
        `--job must be PROJECT/JOB or PROJECT/JOB=OUTCOME with OUTCOME one of ${SIMULATED_OUTCOMES.join(', ')}, got ${JSON.stringify(spec)}`,
      );
      continue;
    }
    jobs.push({ projectId: match[1], jobId: match[2], outcome: outcome as SimulatedOutcome });
  }

  const faults: FaultRule[] = [];
  for (const text of values.fault) {
    try {
      faults.push(parseFaultFlag(text));
    } catch (error) {
      problems.push(error instanceof Error ? error.message : String(error));
    }
  }

  if (problems.length > 0) throw new UsageError(problems.join('\n'));
  return {
    help: values.help,
    host: values.host,
    port,
    workMs,
    sendsPerProjectPerHour,
    jobs,
    faults,
    seed,
    honourIdempotencyKey: values['honour-idempotency-key'],
  };
}

function readFlags(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: 'string', default: '8787' },
        host: { type: 'string', default: '127.0.0.1' },
        'work-ms': { type: 'string', default: '3000' },
        'rate-limit': { type: 'string' },
        job: { type: 'string', multiple: true, default: ['demo-project/demo-job'] },
        fault: { type: 'string', multiple: true, default: [] },
        seed: { type: 'string' },
        'honour-idempotency-key': { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
    }).values;
  } catch (error) {
    // node:util's messages name the flag ("Unknown option '--x'", "Option '--port <value>' argument missing").
    // Read `message` structurally: under jest the error comes from another realm and fails `instanceof Error`.
    const message = (error as { message?: unknown } | null)?.message;
    throw new UsageError(typeof message === 'string' ? message : String(error));
  }
}
