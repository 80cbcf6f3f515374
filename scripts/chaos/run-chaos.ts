/**
 * The chaos runner behind `npm run chaos` and test/integration/chaos.test.ts. It runs many follow-ups through the
 * real worker process while everything around them misbehaves: the agent API simulator injects faults, the worker is
 * killed with SIGKILL at random moments and restarted, and the Temporal dev server is torn down and started again on
 * the same port and SQLite file. Then it checks what docs/RELIABILITY.md promises: every follow-up ends with its job's real
 * result, no message is delivered twice and none is lost. Not used in production.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { AgentJob, KnownJobStatus, TerminalJobStatus } from '../../src/agent-api/schemas';
import { FollowUpClient, followUpWorkflowId, type FollowUpResult } from '../../src/client';
import { AgentApiSimulator, type FaultRule, type SimulatedOutcome } from '../../src/simulator/simulator';
import { mulberry32 } from '../../src/simulator/prng';
import { findTemporalCli } from '../stack/temporal-cli';
import { FOLLOW_UP_SEARCH_ATTRIBUTES } from '../../src/kernel/search-attributes';

/** Obviously fake, and only ever sent to the in-process simulator. */
export const CHAOS_API_KEY = 'mint_chaos_test_key_0001';
/** Every chaos follow-up is in one project: a budget of 100 sends a second never paces them. */
const CHAOS_SENDS_PER_HOUR = 360_000;

/** The default faults: each one is a way the decision tables of docs/RELIABILITY.md say a real API or network can go wrong. */
export const DEFAULT_CHAOS_FAULTS: FaultRule[] = [
  { operation: 'any', kind: 'latency', rate: 0.1, latencyMs: 1_500 },
  { operation: 'get', kind: 'status', status: 503, rate: 0.1 },
  { operation: 'any', kind: 'status', status: 429, retryAfter: '1', rate: 0.05 },
  { operation: 'send', kind: 'drop-after-processing', rate: 0.1 },
  { operation: 'send', kind: 'drop-before-processing', rate: 0.05 },
];

/**
 * Replica lag as docs/RELIABILITY.md describes it: right after a follow-up is accepted, the next read of the job still shows
 * its previous result. Set on every job (so it hits polls and reconciliation reads alike).
 */
export const LAGGING_READ_AFTER_SEND: FaultRule = { operation: 'get', kind: 'stale-terminal', times: 1 };

/**
 * How long the simulated agent works on a follow-up: longer than the workflow's reconcile trust window (30s), as real
 * agent runs are (minutes). Shorter runs can finish before a late reconciliation read and look undelivered.
 */
export const CHAOS_WORK_MS = 40_000;

/**
 * Every third job is still busy with earlier work for this long when its follow-up starts: the follow-up must wait
 * (through the kills and the restart) and send only once the job is idle, and its result is its own run's, not the
 * earlier work's ending. Chosen by index, not by the seed, so the other jobs' rolls stay as they were.
 */
export const CHAOS_BUSY_FOR_MS = 8_000;

export interface ChaosOptions {
  /** Follow-ups to run (default 40). */
  followUps?: number;
  /** SIGKILLs of the worker process (default 8). */
  kills?: number;
  /** Tear the dev server down once mid-run and start it again on the same port and file (default true). */
  restartServer?: boolean;
  /** Seeds the simulator's fault rolls, the job mix and the chaos timing (default 1). */
  seed?: number;
  /** How long the simulated agent works on each follow-up (default 3 s). */
  workMs?: number;
  faults?: FaultRule[];
  /** Each follow-up's polling timeout (default 4 minutes); the run gives up waiting a minute after it. */
  followUpTimeoutMs?: number;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
}

/** One follow-up's fate, with enough detail to chase a finding. */
export interface ChaosFollowUpRecord {
  workflowId: string;
  jobId: string;
  /** The job before the follow-up, and what the simulated agent was scripted to do. */
  initial: { status: KnownJobStatus; prLink: string | null };
  scenario: SimulatedOutcome;
  verdict: 'correct' | 'wrong' | 'failed' | 'lost';
  /** The job as the simulator holds it at the end: the truth the result must match. */
  expected: { status: string; prLink: string | null };
  actual?: {
    outcome: TerminalJobStatus;
    prLink: string | null;
    sendAttempts?: number;
    delivery?: string;
    polls: number;
  };
  failureType?: string;
  failureMessage?: string;
  messagesAccepted: number;
  /** Set for anything but `correct`: the workflow's history, one line per activity, timer and failure. */
  history?: string[];
}

export interface ChaosReport {
  seed: number;
  followUps: number;
  completedCorrectly: number;
  wrongOutcome: number;
  failed: number;
  /** Failure types of failed follow-ups, with how often each occurred. */
  failureTypes: Record<string, number>;
  lost: number;
  /** Sum over jobs of max(0, messagesAccepted - 1): the simulator does not honour Idempotency-Key here. */
  duplicateDeliveries: number;
  /** Jobs still busy with earlier work when their follow-up started (every third). */
  busyJobs: number;
  /** Messages the API accepted while their job was still busy (`active`): each is a follow-up that did not wait. */
  sentWhileBusy: number;
  /** Jobs that never accepted the follow-up's message. */
  undelivered: number;
  kills: number;
  /** Worker exits we did not cause (each was restarted). */
  unexpectedWorkerExits: number;
  serverRestarts: number;
  /** Times the runner replaced its own client connection because the old one did not recover. */
  clientReconnects: number;
  /** Requests the simulator answered by dropping the connection, and sends it refused (faults, 429). */
  requestsDropped: number;
  sendsRejected: number;
  getRequests: number;
  faults: FaultRule[];
  wallTimeMs: number;
  /** True when nothing was lost, duplicated, undelivered, wrong or failed. */
  ok: boolean;
  records: ChaosFollowUpRecord[];
}

const OUTCOME_STATUS: Record<SimulatedOutcome, TerminalJobStatus> = {
  completed: 'completed',
  'no-changes': 'completed',
  failed: 'failed',
  archived: 'archived',
};

type Answer = { plan: JobPlan; workflowId: string } & ({ result: FollowUpResult } | { error: unknown });

interface JobPlan {
  jobId: string;
  scenario: SimulatedOutcome;
  initial: { status: KnownJobStatus; prLink: string | null };
  /** Busy with earlier work for this long at the start (then it ends as its scenario says, before the message). */
  busyForMs?: number;
}

/** Runs the chaos scenario and reports what happened; always stops everything it started. */
export async function runChaos(options: ChaosOptions = {}): Promise<ChaosReport> {
  const followUpCount = options.followUps ?? 40;
  const kills = options.kills ?? 8;
  const restartServer = options.restartServer ?? true;
  const seed = options.seed ?? 1;
  const faults = options.faults ?? DEFAULT_CHAOS_FAULTS;
  const followUpTimeoutMs = options.followUpTimeoutMs ?? 240_000;
  const log = options.log ?? (() => undefined);
  // Its own generator, so the chaos timing does not shift the simulator's fault rolls (which have their own).
  const random = mulberry32(seed ^ 0x0c4a05);
  const between = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));

  const cli = findTemporalCli();
  if (!cli)
    throw new Error('No Temporal CLI found: run scripts/install/install-temporal-cli.sh or set TEMPORAL_CLI_PATH.');
  const startedAt = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'agent-followup-chaos-'));
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const taskQueue = `chaos-${seed}-${startedAt}`;

  let env: TestWorkflowEnvironment | undefined;
  let simulator: AgentApiSimulator | undefined;
  let worker: WorkerProcess | undefined;
  let connection: Connection | undefined;
  const counters = { kills: 0, unexpectedWorkerExits: 0, serverRestarts: 0, clientReconnects: 0 };
  // Set once every follow-up has an answer (or the run gave up), so the chaos loop stops.
  let finished = false;
  try {
    // A fixed port and a file: the same server can be started again after a teardown, with its history intact.
    const startServer = () =>
      TestWorkflowEnvironment.createLocal({
        server: {
          executable: { type: 'existing-path', path: cli },
          ip: '127.0.0.1',
          port,
          dbFilename: join(dir, 'temporal.sqlite'),
          extraArgs: ['--log-level', 'error'],
          searchAttributes: [...FOLLOW_UP_SEARCH_ATTRIBUTES],
        },
      });
    env = await startServer();
    simulator = await AgentApiSimulator.start({
      // Many sends to one project on purpose: the vendor's hourly limit is not what this measures.
      sendsPerProjectPerHour: null,
      apiKey: CHAOS_API_KEY,
      seed,
      // So a second delivery of the same message is counted, not hidden behind the Idempotency-Key.
      honourIdempotencyKey: false,
      defaultWorkMs: options.workMs ?? CHAOS_WORK_MS,
    });
    simulator.setGlobalFaults(faults);
    const sim = simulator;

    const plans = planJobs(followUpCount, random);
    for (const plan of plans) {
      sim.addJob({
        projectId: 'chaos',
        jobId: plan.jobId,
        outcome: plan.scenario,
        ...plan.initial,
        ...(plan.busyForMs !== undefined ? { busyForMs: plan.busyForMs } : {}),
        faults: [LAGGING_READ_AFTER_SEND],
      });
    }

    const startWorker = () => {
      const next = new WorkerProcess({
        AGENT_API_KEY: CHAOS_API_KEY,
        AGENT_API_BASE_URL: sim.baseUrl,
        AGENT_API_ALLOW_LOOPBACK: 'true',
        TEMPORAL_ADDRESS: address,
        TEMPORAL_TASK_QUEUE: taskQueue,
        WORKER_SHUTDOWN_GRACE_TIME: '5s',
        AGENT_API_REQUEST_TIMEOUT: '5s',
        AGENT_SENDS_PER_PROJECT_PER_HOUR: String(CHAOS_SENDS_PER_HOUR),
        AGENT_SENDS_ABOVE_VENDOR_LIMIT: 'true',
      });
      next.onUnexpectedExit = (why) => {
        // A worker that dies on its own is a finding worth counting, and the follow-ups still need a worker.
        counters.unexpectedWorkerExits += 1;
        log(`worker exited unexpectedly (${why}); restarting it. Last output:\n${next.tail()}`);
        if (!finished && worker === next) worker = startWorker();
      };
      return next;
    };
    connection = await Connection.connect({ address });
    worker = startWorker();

    let clientGeneration = 0;
    let followUps = new FollowUpClient(new Client({ connection, namespace: 'default' }), { taskQueue });
    /** Replaces the client connection when the one a caller used keeps failing (once per generation). */
    const reconnect = async (generation: number) => {
      if (generation !== clientGeneration) return;
      clientGeneration += 1;
      counters.clientReconnects += 1;
      const old = connection;
      connection = await Connection.connect({ address });
      followUps = new FollowUpClient(new Client({ connection, namespace: 'default' }), { taskQueue });
      await old?.close().catch(() => undefined);
    };
    /** Retries a client call through server restarts; a workflow failure is an answer, not a connection problem. */
    const withClient = async <T>(
      what: string,
      call: (client: FollowUpClient) => Promise<T>,
      deadline: number,
    ): Promise<T> => {
      let failures = 0;
      for (;;) {
        const generation = clientGeneration;
        try {
          return await call(followUps);
        } catch (error) {
          if (error instanceof WorkflowFailedError || Date.now() > deadline) throw error;
          failures += 1;
          if (failures % 10 === 0) await reconnect(generation);
          log(`${what}: ${error instanceof Error ? error.message : String(error)}; retrying`);
          await pause(1_000);
        }
      }
    };

    const polling = {
      initialInterval: 200,
      backoffCoefficient: 1.5,
      maxInterval: 1_000,
      timeout: followUpTimeoutMs,
      settleWindow: '3s',
    } as const;
    const giveUpAt = startedAt + followUpTimeoutMs + 60_000;

    // The chaos sequence's middle event (the server restart, or the middle kill): the second half of the follow-ups
    // starts after it, so there is always work under way on both sides of it and no event is skipped for lack of work.
    let markMidpoint: () => void = () => undefined;
    const midpoint = new Promise<void>((resolve) => (markMidpoint = resolve));
    const secondHalf = Math.ceil(followUpCount / 2);
    let offsetMs = 0;
    // Staggered starts, so that at any moment some follow-ups are reading, sending, reconciling, polling or sleeping.
    const offsets = plans.map((_, index) => (offsetMs = (index === secondHalf ? 0 : offsetMs) + between(100, 600)));
    const answers = plans.map(async (plan, index): Promise<Answer> => {
      const input = {
        projectId: 'chaos',
        jobId: plan.jobId,
        prompt: `Chaos follow-up ${index} (seed ${seed})`,
        polling,
      };
      const workflowId = followUpWorkflowId(input);
      try {
        if (index >= secondHalf) await midpoint;
        await pause(offsets[index] ?? 0);
        await withClient(`start ${plan.jobId}`, (client) => client.start(input), giveUpAt);
        return {
          plan,
          workflowId,
          result: await withClient(`result ${plan.jobId}`, (client) => client.result(workflowId), giveUpAt),
        };
      } catch (error) {
        return { plan, workflowId, error };
      }
    });
    const allAnswered = Promise.all(answers).finally(() => {
      finished = true;
    });

    const chaos = (async () => {
      // The server restart takes the place of one kill in the middle of the sequence, while a worker is running.
      const events: Array<'kill' | 'restart-server'> = Array.from({ length: kills }, () => 'kill' as const);
      const middle = Math.floor(kills / 2);
      if (restartServer) events.splice(middle, 0, 'restart-server');
      for (const [index, event] of events.entries()) {
        if (index > middle) markMidpoint();
        const current = worker;
        if (!current) return;
        await Promise.race([current.ready, allAnswered]);
        // A kill before any work has happened proves little: let the worker run a few seconds first.
        await Promise.race([pause(between(1_000, 6_000)), allAnswered]);
        if (finished) return;
        if (event === 'kill') {
          await worker?.kill();
          counters.kills += 1;
          log(`killed the worker (${counters.kills}/${kills})`);
          await pause(between(300, 2_000));
          if (finished) return;
          worker = startWorker();
        } else {
          log('tearing the dev server down');
          const old = env;
          env = undefined;
          await old?.teardown();
          await pause(between(1_000, 3_000));
          env = await startServer();
          counters.serverRestarts += 1;
          log('dev server started again on the same port and database file');
        }
      }
    })().finally(markMidpoint);

    const outcomes = await allAnswered;
    await chaos;

    const records: ChaosFollowUpRecord[] = [];
    for (const { plan, workflowId, ...answer } of outcomes) {
      const truth: AgentJob = sim.job('chaos', plan.jobId);
      const counts = sim.counts('chaos', plan.jobId);
      const record: ChaosFollowUpRecord = {
        workflowId,
        jobId: plan.jobId,
        initial: plan.initial,
        scenario: plan.scenario,
        verdict: 'correct',
        expected: { status: truth.status, prLink: truth.prLink ?? null },
        messagesAccepted: counts.messagesAccepted,
      };
      if ('result' in answer) {
        const result = answer.result;
        record.actual = {
          outcome: result.outcome,
          prLink: result.prLink,
          polls: result.polls,
          ...(result.sendAttempts !== undefined ? { sendAttempts: result.sendAttempts } : {}),
          ...(result.delivery !== undefined ? { delivery: result.delivery } : {}),
        };
        const right =
          result.outcome === OUTCOME_STATUS[plan.scenario] &&
          result.outcome === truth.status &&
          result.prLink === (truth.prLink ?? null) &&
          (plan.scenario === 'completed') === (result.prLink !== null);
        record.verdict = right ? 'correct' : 'wrong';
      } else if (answer.error instanceof WorkflowFailedError) {
        record.verdict = 'failed';
        const cause = innermostFailure(answer.error.cause);
        record.failureType =
          cause instanceof ApplicationFailure ? (cause.type ?? 'ApplicationFailure') : (cause?.name ?? 'unknown');
        record.failureMessage = cause?.message ?? answer.error.message;
      } else {
        record.verdict = 'lost';
        record.failureMessage = String(answer.error);
      }
      if (record.verdict !== 'correct' || record.messagesAccepted !== 1) {
        record.history = await summarizeHistory(followUps.client, workflowId).catch((error: unknown) => [
          `history unavailable: ${String(error)}`,
        ]);
      }
      records.push(record);
    }

    const stats = sim.stats().jobs;
    const failureTypes: Record<string, number> = {};
    for (const record of records) {
      if (record.failureType) failureTypes[record.failureType] = (failureTypes[record.failureType] ?? 0) + 1;
    }
    const count = (verdict: ChaosFollowUpRecord['verdict']) =>
      records.filter((record) => record.verdict === verdict).length;
    const report: ChaosReport = {
      seed,
      followUps: followUpCount,
      completedCorrectly: count('correct'),
      wrongOutcome: count('wrong'),
      failed: count('failed'),
      failureTypes,
      lost: count('lost'),
      duplicateDeliveries: records.reduce((sum, record) => sum + Math.max(0, record.messagesAccepted - 1), 0),
      undelivered: records.filter((record) => record.messagesAccepted === 0).length,
      busyJobs: plans.filter((plan) => plan.busyForMs !== undefined).length,
      sentWhileBusy: plans.reduce(
        (sum, plan) =>
          sum + sim.counts('chaos', plan.jobId).statusesAtSend.filter((status) => status === 'active').length,
        0,
      ),
      kills: counters.kills,
      unexpectedWorkerExits: counters.unexpectedWorkerExits,
      serverRestarts: counters.serverRestarts,
      clientReconnects: counters.clientReconnects,
      requestsDropped: stats.reduce((sum, job) => sum + job.counts.dropped, 0),
      sendsRejected: stats.reduce((sum, job) => sum + job.counts.messagesRejected, 0),
      getRequests: stats.reduce((sum, job) => sum + job.counts.gets, 0),
      faults,
      wallTimeMs: Date.now() - startedAt,
      ok: false,
      records,
    };
    report.ok =
      report.completedCorrectly === report.followUps &&
      report.duplicateDeliveries === 0 &&
      report.undelivered === 0 &&
      report.sentWhileBusy === 0 &&
      report.lost === 0;
    return report;
  } finally {
    finished = true;
    // Each step on its own, so one failure does not leave the others running.
    await worker?.kill().catch(() => undefined);
    await connection?.close().catch(() => undefined);
    await env?.teardown().catch(() => undefined);
    await simulator?.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The job mix: every scenario, each from a job that already ended. Half of the completed jobs start with an old pull
 * request, so a stale read (the job before the follow-up) is told apart from the new result by its link.
 */
function planJobs(count: number, random: () => number): JobPlan[] {
  const scenarios: SimulatedOutcome[] = ['completed', 'no-changes', 'failed', 'archived'];
  return Array.from({ length: count }, (_, index) => {
    const scenario = scenarios[index % scenarios.length] as SimulatedOutcome;
    const roll = random();
    const jobId = `job-${String(index).padStart(3, '0')}`;
    const idle: JobPlan['initial'] =
      roll < 0.4
        ? { status: 'completed', prLink: `https://github.com/acme/chaos/pull/${index + 1}` }
        : roll < 0.8
          ? { status: 'completed', prLink: null }
          : { status: 'failed', prLink: null };
    if (index % 3 !== 2) return { jobId, scenario, initial: idle };
    return { jobId, scenario, initial: { status: 'active', prLink: null }, busyForMs: CHAOS_BUSY_FOR_MS };
  });
}

/** The deepest cause of a workflow failure: the ApplicationFailure with the stable `type`, where there is one. */
function innermostFailure(failure: Error | undefined): Error | undefined {
  let current: Error | undefined = failure;
  while (current && (current as { cause?: unknown }).cause instanceof Error)
    current = (current as { cause: Error }).cause;
  return current;
}

/** One line per activity, timer and failure of the workflow's latest run: enough to see why it went where it did. */
async function summarizeHistory(client: Client, workflowId: string): Promise<string[]> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const lines: string[] = [];
  const scheduled = new Map<string, string>();
  const seconds = (time: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
    Number(time?.seconds ?? 0) + (time?.nanos ?? 0) / 1e9;
  const firstAt = seconds(history.events?.[0]?.eventTime);
  for (const event of history.events ?? []) {
    // The event id and its time since the start: gaps show where a kill or a restart held the workflow up.
    const id = `${String(event.eventId ?? '')} +${(seconds(event.eventTime) - firstAt).toFixed(1)}s`;
    const a = event.activityTaskScheduledEventAttributes;
    if (a) {
      const summary = event.userMetadata?.summary?.data
        ? Buffer.from(event.userMetadata.summary.data).toString('utf8')
        : '';
      scheduled.set(String(event.eventId ?? ''), `${a.activityType?.name ?? 'activity'} ${summary}`.trim());
      continue;
    }
    const name = (scheduledId: unknown) => scheduled.get(String(scheduledId ?? '')) ?? 'activity';
    if (event.activityTaskCompletedEventAttributes) {
      lines.push(`#${id} ${name(event.activityTaskCompletedEventAttributes.scheduledEventId)}: completed`);
    } else if (event.activityTaskFailedEventAttributes) {
      const failure = event.activityTaskFailedEventAttributes.failure;
      const type = failure?.cause?.applicationFailureInfo?.type ?? failure?.applicationFailureInfo?.type ?? '';
      lines.push(
        `#${id} ${name(event.activityTaskFailedEventAttributes.scheduledEventId)}: failed ${type} ${failure?.cause?.message ?? failure?.message ?? ''}`.trim(),
      );
    } else if (event.activityTaskTimedOutEventAttributes) {
      lines.push(`#${id} ${name(event.activityTaskTimedOutEventAttributes.scheduledEventId)}: timed out`);
    } else if (event.timerStartedEventAttributes) {
      lines.push(`#${id} timer ${Math.round(seconds(event.timerStartedEventAttributes.startToFireTimeout) * 1000)} ms`);
    } else if (event.workflowTaskTimedOutEventAttributes) {
      lines.push(`#${id} workflow task timed out`);
    } else if (event.workflowExecutionFailedEventAttributes) {
      lines.push(`#${id} workflow failed: ${event.workflowExecutionFailedEventAttributes.failure?.message ?? ''}`);
    } else if (event.workflowExecutionCompletedEventAttributes) {
      lines.push(`#${id} workflow completed`);
    } else if (event.workflowExecutionContinuedAsNewEventAttributes) {
      lines.push(`#${id} continued as new`);
    }
  }
  return lines;
}

/** The real worker (`node dist/src/worker.js`) as a child process we can kill without warning. */
class WorkerProcess {
  private readonly child: ChildProcess;
  private readonly output: string[] = [];
  private killedByUs = false;
  private readonly exited: Promise<void>;
  /** Resolves once the worker has bundled its workflows and polls the task queue. */
  readonly ready: Promise<void>;
  onUnexpectedExit: ((why: string) => void) | undefined;

  constructor(env: Record<string, string>) {
    // Only what the worker needs: a TEMPORAL_* variable of the caller's shell must not point it elsewhere.
    this.child = spawn(process.execPath, [workerScriptPath()], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let markReady: () => void = () => undefined;
    this.ready = new Promise((resolve) => (markReady = resolve));
    const collect = (chunk: Buffer) => {
      const text = chunk.toString();
      if (text.includes('worker polling task queue')) markReady();
      this.output.push(text);
      if (this.output.length > 50) this.output.shift();
    };
    this.child.stdout?.on('data', collect);
    this.child.stderr?.on('data', collect);
    this.exited = new Promise((resolve) =>
      this.child.once('exit', (code, signal) => {
        // An exit also ends the wait for readiness, so the chaos loop never waits on a dead worker.
        markReady();
        if (!this.killedByUs) this.onUnexpectedExit?.(`code ${String(code)}, signal ${String(signal)}`);
        resolve();
      }),
    );
  }

  /** SIGKILL: no graceful shutdown, in-flight activities are simply gone, as when a machine dies. */
  async kill(): Promise<void> {
    this.killedByUs = true;
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }

  /** The last lines the worker printed. */
  tail(): string {
    return this.output.join('').split('\n').slice(-20).join('\n');
  }
}

/** dist/src/worker.js, from dist/src/dev (compiled) or src/dev (ts-jest, which needs `npm run build` first). */
function workerScriptPath(): string {
  const candidates = [
    join(__dirname, '..', '..', 'src', 'worker.js'),
    join(__dirname, '..', '..', 'dist', 'src', 'worker.js'),
  ];
  const found = candidates.find((candidate) => existsSync(candidate));
  if (!found) throw new Error('dist/src/worker.js not found: run `npm run build` first');
  return found;
}

/** A port that was free a moment ago; the dev server keeps it for every restart of the run. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
