/**
 * The real entry points as separate processes, built by `npm test` into dist/: the worker (`npm run worker`) and the
 * `agent-followup` binary.
 */
import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { startBuiltScript as start } from '../support/processes';
import { createHarness, FAST_POLLING, TEST_API_KEY, uniqueJob, type Harness } from '../support/harness';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

test('the worker refuses a malformed key with exit code 2 and never prints the key', async () => {
  const badKey = 'sk_live_entrypoint_secret_value';
  const { exited } = start('worker.js', [], {
    AGENT_API_KEY: badKey,
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS ?? '',
  });
  const exit = await exited;
  expect(exit.code).toBe(2);
  expect(exit.stderr).toContain('AGENT_API_KEY does not start with "mint_"');
  expect(exit.stdout + exit.stderr).not.toContain('entrypoint_secret_value');
});

test('the worker process runs a follow-up end to end and drains on SIGTERM', async () => {
  const ref = uniqueJob();
  h.simulator.addJob(ref);
  const taskQueue = h.taskQueue();
  const worker = start('worker.js', [], {
    ...h.workerEnv(),
    AGENT_API_KEY: TEST_API_KEY,
    AGENT_API_BASE_URL: h.simulator.baseUrl,
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS ?? '',
    TEMPORAL_TASK_QUEUE: taskQueue,
  });
  try {
    const { result } = await h
      .followUps(taskQueue)
      .startAndWait({ ...ref, prompt: 'From a real worker', polling: FAST_POLLING });
    expect(result.outcome).toBe('completed');
    expect(result.prLink).not.toBeNull();
  } finally {
    worker.child.kill('SIGTERM');
  }
  const exit = await worker.exited;
  expect(exit.code).toBe(0);
  expect(exit.stdout + exit.stderr).not.toContain(TEST_API_KEY);
  // Text logs by default: one line per message, time and level first, like the SDK's own logger.
  expect(exit.stderr).toMatch(
    /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \[INFO\] agent-followup worker polling task queue/m,
  );
  expect(exit.stderr).toMatch(/\[INFO\] agent-followup worker stopped after draining/);
});

test('the agent-followup binary prints its help', async () => {
  const exit = await start('cli.js', ['--help'], {}).exited;
  expect(exit.code).toBe(0);
  expect(exit.stdout).toContain('Usage:');
});

test('the binary stops quietly when its reader closes the pipe (agent-followup --help | head)', async () => {
  const child = spawn(process.execPath, [join(__dirname, '..', '..', 'dist', 'src', 'cli.js'), '--help'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // The reader is gone before the first line is written: every write meets EPIPE.
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  expect(stderr).toBe('');
  expect(code).toBe(0);
});

test('the library entry loads no worker code: a service that only starts follow-ups never loads the worker SDK or its native bridge', () => {
  const entry = join(__dirname, '..', '..', 'dist', 'src', 'index.js');
  const script = `require(${JSON.stringify(entry)}); console.log(JSON.stringify(Object.keys(require.cache)));`;
  const loaded = JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })) as string[];
  // The check itself works: the entry was loaded, through the client SDK.
  expect(loaded.some((path) => path.includes('@temporalio/client'))).toBe(true);
  expect(loaded.filter((path) => /@temporalio[\\/](worker|core-bridge|workflow)[\\/]/.test(path))).toEqual([]);
});
