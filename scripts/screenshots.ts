/**
 * `npm run screenshots`: what a person sees in the Temporal Web UI, taken in a real browser (Debian's headless
 * Chromium) on a local stack where follow-ups ended every way — a PR, no changes, the job failed or archived, the API
 * rejected it, it timed out — and two are still waiting, one of them behind the other in its job's lane. The list
 * uses the saved view of docs/WEB-UI.md (query and columns). Writes PNGs to docs/screenshots/ (or --out).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { chromium, type Page } from 'playwright-core';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import type { FollowUpClient } from '../src/client';
import { columnsInitScript, followUpListUrl } from '../src/web-ui-view';
import { ensureTemporalCli } from './dev/temporal-cli';
import { startLocalStack } from './dev/local-stack';

const PROJECT = 'acme-web';
const POLLING = { initialInterval: '500ms', maxInterval: '2s', settleWindow: '2s', timeout: '10m' };

const program = new Command('npm run screenshots --')
  .option('--out <dir>', 'where the PNGs go', join(__dirname, '..', '..', 'docs', 'screenshots'))
  .option('--chromium <path>', "the Chromium binary (Debian's package: apt-get install chromium)", process.env.CHROMIUM_PATH ?? '/usr/bin/chromium')
  .option('--ui-port <port>', 'the Web UI port of the stack it starts', (value) => Number(value), 8299);

async function main(): Promise<void> {
  program.parse();
  const options = program.opts<{ out: string; chromium: string; uiPort: number }>();
  if (!existsSync(options.chromium)) {
    throw new Error(`no Chromium at ${options.chromium}: install Debian's (apt-get install -y chromium) or pass --chromium PATH`);
  }
  mkdirSync(options.out, { recursive: true });
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const cli = ensureTemporalCli();
  if (!cli) throw new Error('could not install the Temporal CLI; set TEMPORAL_CLI_PATH');
  process.env.TEMPORAL_CLI_PATH = cli;

  // A budget of one send a second, so the sends are not spread over minutes the way 80 an hour would spread them.
  const stack = await startLocalStack({ ui: true, uiPort: options.uiPort, sendsPerProjectPerHour: 3_600, simulator: { defaultWorkMs: 1_500 } });
  try {
    const ids = await stack.run(startFollowUps(stack.followUps, stack.simulator));
    const browser = await chromium.launch({ executablePath: options.chromium, args: ['--no-sandbox'] });
    try {
      const context = await browser.newContext({ viewport: { width: 1920, height: 1000 } });
      // The saved view's columns, as a person sets them once (docs/WEB-UI.md).
      await context.addInitScript({ content: columnsInitScript('default') });
      const page = await context.newPage();
      const ui = stack.uiUrl as string;
      await shoot(page, followUpListUrl(ui, 'default'), ids['follow-up-completed'] as string, join(options.out, 'list.png'));
      for (const [name, workflowId] of Object.entries(ids)) {
        await shoot(page, `${ui}/namespaces/default/workflows/${encodeURIComponent(workflowId)}`, workflowId, join(options.out, `${name}.png`));
      }
      // Where a running follow-up says what it is doing: its current details, kept live by the workflow.
      for (const name of ['follow-up-waiting', 'follow-up-queued']) {
        await page.goto(`${ui}/namespaces/default/workflows/${encodeURIComponent(ids[name] as string)}`, { waitUntil: 'load' });
        await page.getByText('User Metadata', { exact: true }).filter({ visible: true }).first().click();
        await capture(page, 'Current Details', join(options.out, `${name}-details.png`));
      }
    } finally {
      await browser.close();
    }
    console.log(`Screenshots written to ${options.out}`);
  } finally {
    await stack.teardown();
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
): Promise<Record<string, string>> {
  const send = (jobId: string, prompt: string, polling: object = POLLING) => followUps.start({ projectId: PROJECT, jobId, prompt, polling });
  simulator.addJob({ projectId: PROJECT, jobId: 'web-101', outcome: 'completed' });
  simulator.addJob({ projectId: PROJECT, jobId: 'web-102', outcome: 'no-changes' });
  simulator.addJob({ projectId: PROJECT, jobId: 'web-103', outcome: 'failed' });
  simulator.addJob({ projectId: PROJECT, jobId: 'web-104', status: 'archived' });
  simulator.addJob({ projectId: PROJECT, jobId: 'web-106', workMs: 3_600_000 });
  simulator.addJob({ projectId: PROJECT, jobId: 'web-107', workMs: 3_600_000 });
  const completed = await send('web-101', 'Add a unit test for the date parser and update the changelog');
  const noChanges = await send('web-102', 'Check that the README still builds');
  const jobFailed = await send('web-103', 'Upgrade the router to v7');
  const archived = await send('web-104', 'Anything left to do here?');
  const rejected = await send('web-999', 'Fix the flaky login test');
  const timedOut = await send('web-106', 'Rewrite the billing module', { ...POLLING, timeout: '8s' });
  const waiting = await send('web-107', 'Translate the settings page');
  await waitUntil(() => simulator.counts(PROJECT, 'web-107').messagesAccepted === 1);
  const queued = await send('web-107', 'Then add the Spanish strings too');
  for (const { workflowId } of [completed, noChanges, jobFailed, archived, rejected, timedOut]) {
    await followUps.outcome(workflowId);
  }
  return {
    'follow-up-completed': completed.workflowId,
    'follow-up-rejected': rejected.workflowId,
    'follow-up-timed-out': timedOut.workflowId,
    'follow-up-waiting': waiting.workflowId,
    'follow-up-queued': queued.workflowId,
  };
}

async function waitUntil(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 100));
}

main().catch((error: unknown) => {
  console.error('screenshots failed:', error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
