/**
 * `npm run screenshots`: what a person sees in the Temporal Web UI, taken in a real browser (Debian's headless
 * Chromium) on a local stack where follow-ups ended every way — a PR, no changes, the job failed or archived, the API
 * rejected it, it timed out, it timed out while the API answered HTTP 500 — and others are still waiting: one behind
 * another in its job's lane, one for its project's send budget, one while the API fails. A schedule has run twice: its
 * page, and its runs in the list with their outcomes. The list uses the saved view of docs/WEB-UI.md (query and
 * columns). Three more follow-ups wait with shared watching on (AGENT_WATCH_SHARDS): one healthy, one whose reads answer
 * HTTP 500, one whose job is still busy with earlier work (its message not sent yet). Writes PNGs to docs/screenshots/ (or --out).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { chromium, type Page } from 'playwright-core';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { AesGcmPayloadCodec, startCodecServer } from '../../src/encryption';
import { AgentApiClient } from '../../src/agent-api/http-client';
import { FollowUpClient } from '../../src/client';
import { FollowUpSchedules } from '../../src/schedules';
import { createFollowUpWorker, type FollowUpWorkerOptions } from '../../src/worker/follow-up-worker';
import { COLUMNS_ON_SCREEN, columnsInitScript, followUpListUrl } from './web-ui-view';
import { ensureTemporalCli } from './temporal-cli';
import { LOCAL_API_KEY, startLocalStack } from './local-stack';
import { watcherWorkflowId } from '../../src/kernel/workflow-ids';

const PROJECT = 'acme-web';
/** A project with a budget of one send an hour. */
const BUDGET_PROJECT = 'acme-docs';
/** A project whose hour someone else used up: the agent API answers 429, and its coordinator pauses its sends. */
const REFUSED_PROJECT = 'acme-api';
const POLLING = { initialInterval: '500ms', maxInterval: '2s', settleWindow: '2s', timeout: '10m' };
/** A task queue whose worker waits through shared job watchers (AGENT_WATCH_SHARDS=2). */
const SHARED_TASK_QUEUE = 'agent-followup-shared';
/** A task queue whose one watcher reads by its long reader from two waits (200 by default), for that reader's page. */
const LONG_READER_TASK_QUEUE = 'agent-followup-long-reader';
/** A task queue whose worker and client encrypt payloads (AGENT_PAYLOAD_KEYS); its coordinators run apart, with the key. */
const ENCRYPTED_TASK_QUEUE = 'agent-followup-encrypted';
const ENCRYPTED_PROMPT = 'Reply to the ticket of Jane Roe (card ending 4242): refund approved';

const program = new Command('npm run screenshots --')
  .option('--out <dir>', 'where the PNGs go', join(__dirname, '..', '..', '..', 'docs', 'screenshots'))
  .option(
    '--chromium <path>',
    "the Chromium binary (Debian's package: apt-get install chromium)",
    process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  )
  .option('--ui-port <port>', 'the Web UI port of the stack it starts', (value) => Number(value), 8299);

async function main(): Promise<void> {
  program.parse();
  const options = program.opts<{ out: string; chromium: string; uiPort: number }>();
  if (!existsSync(options.chromium)) {
    throw new Error(
      `no Chromium at ${options.chromium}: install Debian's (apt-get install -y chromium) or pass --chromium PATH`,
    );
  }
  mkdirSync(options.out, { recursive: true });
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const cli = ensureTemporalCli();
  if (!cli) throw new Error('could not install the Temporal CLI; set TEMPORAL_CLI_PATH');
  process.env.TEMPORAL_CLI_PATH = cli;

  // The Web UI decodes through a codec server (docs/ENCRYPTION.md); payloads in clear pass through it unchanged.
  const codec = new AesGcmPayloadCodec([{ id: 'screenshots', key: randomBytes(32) }]);
  const codecServer = await startCodecServer({
    codec,
    port: 0,
    allowedOrigins: [`http://localhost:${options.uiPort}`],
  });
  // A budget of one send a second, so the sends are not spread over minutes the way 80 an hour would spread them.
  const stack = await startLocalStack({
    ui: true,
    uiPort: options.uiPort,
    sendsPerProjectPerHour: 3_600,
    // Its follow-ups poll their own jobs (AGENT_WATCH_SHARDS=0), for the pages of that way of waiting.
    watchShards: 0,
    simulator: { defaultWorkMs: 1_500 },
    serverArgs: ['--ui-codec-endpoint', codecServer.url],
  });
  // Beside the stack's own worker, on task queues of their own, against the same server and simulator.
  const sideWorker = (
    taskQueue: string,
    options: Omit<FollowUpWorkerOptions, 'connection' | 'namespace' | 'taskQueue' | 'api'>,
  ) =>
    createFollowUpWorker({
      connection: stack.env.nativeConnection,
      namespace: 'default',
      taskQueue,
      api: new AgentApiClient({ baseUrl: stack.simulator.baseUrl, apiKey: LOCAL_API_KEY, requestTimeoutMs: 5_000 }),
      shutdownGraceTimeMs: 2_000,
      ...options,
    });
  // A second worker, as a deployment runs by default (AGENT_WATCH_SHARDS=2): its follow-ups wait through job watchers.
  // The stack's own worker takes the others, each polling its own job.
  const sharedWorker = await sideWorker(SHARED_TASK_QUEUE, {
    coordination: { sendsPerHour: 3_600, watchShards: 2 },
    notify: { secret: randomBytes(16).toString('hex'), allowLoopback: true },
  });
  // A callback receiver that is down (503): the callback's page shows its attempts and the last error.
  const receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(503).end('down for maintenance'));
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
  const sharedRunning = sharedWorker.run();
  // The Web UI encodes what a person sends (an Update's data) through the namespace's codec server: this worker reads
  // such payloads, and writes in clear as the others here do.
  const longReaderWorker = await sideWorker(LONG_READER_TASK_QUEUE, {
    dataConverter: {
      payloadCodecs: [{ encode: async (payloads) => payloads, decode: (payloads) => codec.decode(payloads) }],
    },
    coordination: { sendsPerHour: 3_600, watchShards: 1, watchLongReaderFrom: 2 },
  });
  const longReaderRunning = longReaderWorker.run();
  const encryptedWorker = await sideWorker(ENCRYPTED_TASK_QUEUE, {
    dataConverter: { payloadCodecs: [codec] },
    coordination: { taskQueue: `${ENCRYPTED_TASK_QUEUE}-coordinators`, sendsPerHour: 3_600, watchShards: 0 },
  });
  const encryptedRunning = encryptedWorker.run();
  try {
    const shared = new FollowUpClient(stack.env.client, { taskQueue: SHARED_TASK_QUEUE });
    const longReading = new FollowUpClient(stack.env.client, { taskQueue: LONG_READER_TASK_QUEUE });
    const [{ ids, scheduleId }, sharedIds, longReader] = await stack.run(
      Promise.all([
        startFollowUps(stack.followUps, stack.simulator),
        startSharedFollowUps(shared, stack.simulator),
        startLongReader(longReading, stack.simulator),
      ]),
    );
    Object.assign(ids, sharedIds);
    const encrypted = new FollowUpClient(
      new Client({ connection: stack.env.client.connection, dataConverter: { payloadCodecs: [codec] } }),
      { taskQueue: ENCRYPTED_TASK_QUEUE, coordinatorTaskQueue: `${ENCRYPTED_TASK_QUEUE}-coordinators` },
    );
    // A project of its own: a project's coordinator is one per namespace, and this one runs with the key.
    stack.simulator.addJob({ projectId: 'acme-support', jobId: 'support-7', outcome: 'completed' });
    const { workflowId: encryptedId } = await encrypted.start({
      projectId: 'acme-support',
      jobId: 'support-7',
      prompt: ENCRYPTED_PROMPT,
      polling: POLLING,
    });
    const ending = await stack.run(encrypted.outcome(encryptedId));
    if (ending.kind !== 'completed') throw new Error(`the encrypted follow-up ended ${ending.kind}, not completed`);
    // A follow-up with a callback to the receiver that is down: it ended, its callback goes on retrying.
    stack.simulator.addJob({ projectId: PROJECT, jobId: 'web-113', outcome: 'completed' });
    const { workflowId: calledBackId } = await shared.start({
      projectId: PROJECT,
      jobId: 'web-113',
      prompt: 'Tell the release bot when the changelog is in',
      polling: POLLING,
      notify: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/agent` },
    });
    await stack.run(shared.outcome(calledBackId));
    let callbackId = '';
    await stack.run(
      waitUntilAsync(async () => {
        const callback = (await shared.status(calledBackId, { progress: false })).callback;
        callbackId = callback?.callbackWorkflowId ?? '';
        return callback?.state === 'delivering' && callback.attempts >= 2 && callback.lastError !== null;
      }, 'the callback to fail twice'),
    );
    const browser = await chromium.launch({ executablePath: options.chromium, args: ['--no-sandbox'] });
    try {
      // 1600 px: a common laptop width, where the list's pull-request column must still show.
      const context = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
      // The saved view's columns, as a person sets them once (docs/WEB-UI.md).
      await context.addInitScript({ content: columnsInitScript('default') });
      const page = await context.newPage();
      const ui = stack.uiUrl as string;
      await shoot(
        page,
        followUpListUrl(ui, 'default'),
        ids['follow-up-completed'] as string,
        join(options.out, 'list.png'),
      );
      await expectColumnsOnScreen(page);
      // The default list as an operator first meets it: follow-ups among the coordinators and watchers.
      await shoot(
        page,
        `${ui}/namespaces/default/workflows`,
        `agent-followup-project/${PROJECT}`,
        join(options.out, 'all-workflows.png'),
      );
      for (const [name, workflowId] of Object.entries(ids)) {
        await shoot(
          page,
          `${ui}/namespaces/default/workflows/${encodeURIComponent(workflowId)}`,
          workflowId,
          join(options.out, `${name}.png`),
        );
      }
      // Where a running follow-up says what it is doing: its current details, kept live by the workflow.
      for (const name of [
        'follow-up-waiting',
        'follow-up-queued',
        'follow-up-waiting-for-budget',
        'follow-up-refused',
        'follow-up-failing',
        ...Object.keys(sharedIds),
      ]) {
        await page.goto(`${ui}/namespaces/default/workflows/${encodeURIComponent(ids[name] as string)}`, {
          waitUntil: 'load',
        });
        await page.getByText('User Metadata', { exact: true }).filter({ visible: true }).first().click();
        await capture(page, 'Current Details', join(options.out, `${name}-details.png`));
      }
      // The workflows that serve the follow-ups: what they serve and whether they are healthy, in their own words.
      const watcherId = (await shared.progress(sharedIds['follow-up-shared-waiting'] as string)).watcherId;
      if (!watcherId) throw new Error('the shared follow-up names no watcher');
      for (const [name, workflowId] of [
        ['coordinator', `agent-followup-project/${PROJECT}`],
        ['coordinator-refused', `agent-followup-project/${REFUSED_PROJECT}`],
        ['watcher', watcherId],
      ] as const) {
        await page.goto(`${ui}/namespaces/default/workflows/${encodeURIComponent(workflowId)}`, { waitUntil: 'load' });
        await page.getByText('User Metadata', { exact: true }).filter({ visible: true }).first().click();
        await capture(page, 'Current Details', join(options.out, `${name}-details.png`));
      }
      // A long reader's figures: its pending activity's heartbeat details (reads, the last one, the next due).
      await shoot(
        page,
        `${ui}/namespaces/default/workflows/${encodeURIComponent(longReader.workflowId)}/${longReader.runId}/pending-activities`,
        'lastReadAt',
        join(options.out, 'watcher-long-reader-pending.png'),
      );
      // One follow-up's reads, asked for from the Web UI: the watcher's Update, then its current details.
      await askLiveFigures(
        page,
        `${ui}/namespaces/default/workflows/${encodeURIComponent(longReader.workflowId)}`,
        longReader.followUpId,
        join(options.out, 'watcher-live-figures.png'),
      );
      // An encrypted follow-up: the server holds ciphertext, the Web UI shows the prompt through the codec server.
      await shoot(
        page,
        `${ui}/namespaces/default/workflows/${encodeURIComponent(encryptedId)}`,
        'card ending 4242',
        join(options.out, 'follow-up-encrypted.png'),
      );
      // A callback whose receiver is down: retried (attempts, last error, next attempt), the follow-up's outcome kept.
      await shoot(
        page,
        `${ui}/namespaces/default/workflows/${encodeURIComponent(callbackId)}`,
        'followUpNotifyWorkflow',
        join(options.out, 'callback-delivering.png'),
      );
      // A schedule: its own page, and its runs in the follow-up list, each with its outcome and pull request.
      await shoot(
        page,
        `${ui}/namespaces/default/schedules/${encodeURIComponent(scheduleId)}`,
        scheduleId,
        join(options.out, 'schedule.png'),
      );
      await shoot(
        page,
        followUpListUrl(ui, 'default', `TemporalScheduledById="${scheduleId}"`),
        'completed',
        join(options.out, 'schedule-runs.png'),
      );
    } finally {
      await browser.close();
    }
    console.log(`Screenshots written to ${options.out}`);
  } finally {
    sharedWorker.shutdown();
    longReaderWorker.shutdown();
    encryptedWorker.shutdown();
    await Promise.all(
      [sharedRunning, longReaderRunning, encryptedRunning].map((running) => running.catch(() => undefined)),
    );
    await stack.teardown();
    await codecServer.close();
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
}

/**
 * The saved view's promise (docs/WEB-UI.md): at 1600 px the job status, the outcome and the pull request show whole,
 * with the Saved Views panel open. Checked on the page as rendered, so a UI upgrade that widens a column fails here.
 */
async function expectColumnsOnScreen(page: Page): Promise<void> {
  const table = await page.locator('table').first().boundingBox();
  const headers = await page.locator('th').evaluateAll((cells) =>
    cells.map((cell) => ({
      label: (cell.textContent ?? '').trim(),
      right: cell.getBoundingClientRect().right,
    })),
  );
  const viewport = page.viewportSize();
  const edge = Math.min(viewport?.width ?? Infinity, table ? table.x + table.width : Infinity);
  const cut = COLUMNS_ON_SCREEN.filter((label) => {
    const header = headers.find((cell) => cell.label === label);
    return header === undefined || header.right > edge;
  });
  if (cut.length > 0) {
    throw new Error(`the follow-up list at ${viewport?.width} px does not show ${cut.join(', ')} whole (edge ${edge})`);
  }
}

/** Opens `url`, then captures it once `text` shows. */
async function shoot(page: Page, url: string, text: string, file: string): Promise<void> {
  await page.goto(url, { waitUntil: 'load' });
  await capture(page, text, file);
}

/** Waits until `text` shows on the page as it is, lets it settle, and saves a full-page screenshot (and one on failure). */
async function capture(page: Page, text: string, file: string): Promise<void> {
  try {
    await page.getByText(text, { exact: false }).filter({ visible: true }).first().waitFor({ timeout: 60_000 });
  } catch (error) {
    await page.screenshot({ path: `${file}.failed.png`, fullPage: true });
    throw error;
  }
  await page.waitForTimeout(2_000);
  await page.screenshot({ path: file, fullPage: true });
  console.log(`  ${file}`);
}

/** Follow-ups that end every way, and two still waiting; returns the ids of the ones shown in detail. */
async function startFollowUps(
  followUps: FollowUpClient,
  simulator: Awaited<ReturnType<typeof startLocalStack>>['simulator'],
): Promise<{ ids: Record<string, string>; scheduleId: string }> {
  const send = (jobId: string, prompt: string, polling: object = POLLING) =>
    followUps.start({ projectId: PROJECT, jobId, prompt, polling });
  simulator.addJob({ projectId: PROJECT, jobId: 'web-101', outcome: 'completed' });
  simulator.addJob({ projectId: PROJECT, jobId: 'web-102', outcome: 'no-changes' });
  simulator.addJob({ projectId: PROJECT, jobId: 'web-103', outcome: 'failed' });
  simulator.addJob({ projectId: PROJECT, jobId: 'web-104', status: 'archived' });
  simulator.addJob({ projectId: PROJECT, jobId: 'web-106', workMs: 3_600_000 });
  simulator.addJob({ projectId: PROJECT, jobId: 'web-107', workMs: 3_600_000 });
  simulator.addJob({ projectId: PROJECT, jobId: 'web-108', workMs: 3_600_000 });
  simulator.addJob({ projectId: PROJECT, jobId: 'web-109', workMs: 3_600_000 });
  simulator.addJob({ projectId: PROJECT, jobId: 'web-110' });
  simulator.addJob({ projectId: BUDGET_PROJECT, jobId: 'docs-1', workMs: 3_600_000 });
  simulator.addJob({ projectId: BUDGET_PROJECT, jobId: 'docs-2', workMs: 3_600_000 });
  const completed = await send('web-101', 'Add a unit test for the date parser and update the changelog');
  const noChanges = await send('web-102', 'Check that the README still builds');
  const jobFailed = await send('web-103', 'Upgrade the router to v7');
  const archived = await send('web-104', 'Anything left to do here?');
  const rejected = await send('web-999', 'Fix the flaky login test');
  const timedOut = await send('web-106', 'Rewrite the billing module', { ...POLLING, timeout: '8s' });
  const waiting = await send('web-107', 'Translate the settings page');
  await waitUntil(() => simulator.counts(PROJECT, 'web-107').messagesAccepted === 1);
  const queued = await send('web-107', 'Then add the Spanish strings too');

  // The API fails: reads of web-108 answer HTTP 500 while it waits, and web-109 times out while they do.
  const failing = await send('web-108', 'Bump the lint rules');
  const timedOutAfterErrors = await send('web-109', 'Split the settings page', { ...POLLING, timeout: '12s' });
  await waitUntil(
    () =>
      simulator.counts(PROJECT, 'web-108').messagesAccepted === 1 &&
      simulator.counts(PROJECT, 'web-109').messagesAccepted === 1,
  );
  for (const jobId of ['web-108', 'web-109'])
    simulator.setJobFaults(PROJECT, jobId, [{ operation: 'get', kind: 'status', status: 500 }]);

  // A project allowed one send an hour: the second follow-up waits for the budget.
  await followUps.setProjectBudget(BUDGET_PROJECT, 1);
  await followUps.start({
    projectId: BUDGET_PROJECT,
    jobId: 'docs-1',
    prompt: 'Document the new API',
    polling: POLLING,
  });
  await waitUntil(() => simulator.counts(BUDGET_PROJECT, 'docs-1').messagesAccepted === 1);
  const waitingForBudget = await followUps.start({
    projectId: BUDGET_PROJECT,
    jobId: 'docs-2',
    prompt: 'Add the migration guide',
    polling: POLLING,
  });

  // A project whose hour was used elsewhere: the first send meets a 429 and both follow-ups wait for the probe.
  simulator.setSendLimit(REFUSED_PROJECT, { sends: 1, windowMs: 3_600_000 });
  simulator.useOutside(REFUSED_PROJECT, 1);
  for (const jobId of ['api-1', 'api-2']) simulator.addJob({ projectId: REFUSED_PROJECT, jobId, workMs: 3_600_000 });
  await followUps.start({
    projectId: REFUSED_PROJECT,
    jobId: 'api-1',
    prompt: 'Add rate-limit headers',
    polling: POLLING,
  });
  const refused = await followUps.start({
    projectId: REFUSED_PROJECT,
    jobId: 'api-2',
    prompt: 'Document the 429 answers',
    polling: POLLING,
  });
  await waitUntilAsync(async () => {
    const queue = (await followUps.progress(refused.workflowId)).queue;
    return queue?.reason === 'budget' && queue.refusedSince !== undefined;
  }, 'a follow-up of the refused project to say it waits for the probe');

  // A schedule that ran twice (triggered, rather than waiting for its hour).
  const schedules = FollowUpSchedules.from(followUps);
  const { scheduleId } = await schedules.create({
    input: { projectId: PROJECT, jobId: 'web-110', prompt: 'Update the dependencies', polling: POLLING },
    cron: '0 9 * * 1',
    timezone: 'Europe/Berlin',
    note: 'weekly dependency updates',
  });
  for (let run = 1; run <= 2; run += 1) {
    await schedules.trigger(scheduleId);
    await waitUntil(() => simulator.counts(PROJECT, 'web-110').messagesAccepted === run);
    const started = (await schedules.describe(scheduleId)).recentRuns[0]?.workflowId;
    if (started) await followUps.outcome(started);
  }

  for (const { workflowId } of [completed, noChanges, jobFailed, archived, rejected, timedOut, timedOutAfterErrors]) {
    await followUps.outcome(workflowId);
  }
  return {
    ids: {
      'follow-up-completed': completed.workflowId,
      'follow-up-rejected': rejected.workflowId,
      'follow-up-timed-out': timedOut.workflowId,
      'follow-up-timed-out-after-errors': timedOutAfterErrors.workflowId,
      'follow-up-waiting': waiting.workflowId,
      'follow-up-queued': queued.workflowId,
      'follow-up-waiting-for-budget': waitingForBudget.workflowId,
      'follow-up-refused': refused.workflowId,
      'follow-up-failing': failing.workflowId,
    },
    scheduleId,
  };
}

/**
 * With shared watching on: one follow-up waiting while its job works, one whose reads answer HTTP 500, one waiting by
 * the job's watcher for its job to finish earlier work before it sends. Returned once the watcher has read each a few
 * times, so the failing one has counted failures, and once the third waits by the watcher.
 */
async function startSharedFollowUps(
  followUps: FollowUpClient,
  simulator: Awaited<ReturnType<typeof startLocalStack>>['simulator'],
): Promise<Record<string, string>> {
  simulator.addJob({ projectId: PROJECT, jobId: 'web-111', workMs: 3_600_000 });
  simulator.addJob({ projectId: PROJECT, jobId: 'web-112', workMs: 3_600_000 });
  simulator.addJob({ projectId: PROJECT, jobId: 'web-114', busyForMs: 3_600_000, workMs: 3_600_000 });
  const waiting = await followUps.start({
    projectId: PROJECT,
    jobId: 'web-111',
    prompt: 'Add dark mode to the settings page',
    polling: POLLING,
  });
  const failing = await followUps.start({
    projectId: PROJECT,
    jobId: 'web-112',
    prompt: 'Fix the date picker in Safari',
    polling: POLLING,
  });
  const waitingForIdle = await followUps.start({
    projectId: PROJECT,
    jobId: 'web-114',
    prompt: 'Then add the changelog entry',
    polling: POLLING,
  });
  await waitUntil(
    () =>
      simulator.counts(PROJECT, 'web-111').messagesAccepted === 1 &&
      simulator.counts(PROJECT, 'web-112').messagesAccepted === 1,
  );
  simulator.setJobFaults(PROJECT, 'web-112', [{ operation: 'get', kind: 'status', status: 500 }]);
  const failedReads = simulator.counts(PROJECT, 'web-112').gets + 5;
  await waitUntil(() => simulator.counts(PROJECT, 'web-112').gets >= failedReads);
  // Its first read was the check-in's; the two after it, the watcher's.
  await waitUntilAsync(async () => {
    const progress = await followUps.progress(waitingForIdle.workflowId);
    return (
      progress.phase === 'waiting-for-idle' &&
      typeof progress.watcherId === 'string' &&
      simulator.counts(PROJECT, 'web-114').gets >= 3
    );
  }, 'the follow-up to a busy job to wait by its watcher');
  return {
    'follow-up-shared-waiting': waiting.workflowId,
    'follow-up-shared-failing': failing.workflowId,
    'follow-up-shared-waiting-for-idle': waitingForIdle.workflowId,
  };
}

/**
 * Three follow-ups waiting through one watcher that reads by its long reader (from two waits here). Returned, as the
 * watcher's run, once the reader's heartbeat details show a few of its reads: what its Pending Activities page shows.
 */
async function startLongReader(
  followUps: FollowUpClient,
  simulator: Awaited<ReturnType<typeof startLocalStack>>['simulator'],
): Promise<{ workflowId: string; runId: string; followUpId: string }> {
  const jobs = ['web-121', 'web-122', 'web-123'];
  const followUpIds: string[] = [];
  for (const jobId of jobs) {
    simulator.addJob({ projectId: PROJECT, jobId, workMs: 3_600_000 });
    const started = await followUps.start({
      projectId: PROJECT,
      jobId,
      prompt: `Translate the ${jobId} page`,
      polling: POLLING,
    });
    followUpIds.push(started.workflowId);
  }
  const watcher = followUps.client.workflow.getHandle(watcherWorkflowId(LONG_READER_TASK_QUEUE, 0));
  let runId = '';
  await waitUntilAsync(async () => {
    const description = await watcher.describe().catch(() => null);
    const reader = description?.raw.pendingActivities?.find((activity) => activity.activityType?.name === 'watchJobs');
    const payload = reader?.heartbeatDetails?.payloads?.[0];
    const figures = payload ? (defaultPayloadConverter.fromPayload(payload) as { reads?: number }) : {};
    runId = description?.runId ?? '';
    return (figures.reads ?? 0) >= 3 * jobs.length;
  }, "the long reader's figures in its heartbeat details");
  return { workflowId: watcher.workflowId, runId, followUpId: followUpIds[0] as string };
}

/**
 * What a person does in the Web UI for one follow-up's live figures: on its watcher's page, More Actions, Send an
 * Update, `watchFigures` with the follow-up's id as its data; then the watcher's current details show them.
 */
async function askLiveFigures(page: Page, watcherUrl: string, followUpId: string, file: string): Promise<void> {
  const visible = (locator: ReturnType<Page['getByText']>) => locator.filter({ visible: true }).first();
  await page.goto(watcherUrl, { waitUntil: 'load' });
  await visible(page.getByText('More Actions')).click();
  await visible(page.getByText('Send an Update')).click();
  await visible(page.getByTestId('update-select-button')).click();
  await visible(page.getByRole('option', { name: 'watchFigures' })).click();
  await visible(page.locator('[contenteditable=true]')).click();
  await page.keyboard.type(JSON.stringify(followUpId));
  await visible(page.locator('button[type=submit]')).click();
  // The dialog stays open while the Update runs (it waits up to 4 s for the long reader's report) or if it failed.
  const dialog = page.locator('dialog[open]#update-confirmation-modal');
  await dialog.waitFor({ state: 'hidden', timeout: 30_000 }).catch(async (error: unknown) => {
    await page.screenshot({ path: `${file}.failed.png`, fullPage: true });
    throw error;
  });
  await visible(page.getByText('User Metadata', { exact: true })).click();
  // The details render in a frame of their own, out of the page's text: the Update has answered by now, so they hold
  // the figures.
  await capture(page, 'Current Details', file);
}

async function waitUntil(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 100));
}

async function waitUntilAsync(condition: () => Promise<boolean>, what: string): Promise<void> {
  const giveUpAt = Date.now() + 60_000;
  while (!(await condition())) {
    if (Date.now() > giveUpAt) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

main().catch((error: unknown) => {
  console.error('screenshots failed:', error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
