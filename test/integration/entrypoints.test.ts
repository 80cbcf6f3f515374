/**
 * The real entry points as separate processes, built by `npm test` into dist/: the worker (`npm run worker`) and the
 * `agent-followup` binary.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createHarness, FAST_POLLING, TEST_API_KEY, uniqueJob, type Harness } from '../support/harness';

const DIST = join(__dirname, '..', '..', 'dist', 'src');

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function start(script: string, args: string[], env: Record<string, string>): { child: ChildProcess; exited: Promise<Exit> } {
  const child = spawn(process.execPath, [join(DIST, script), ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<Exit>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, exited };
}

test('the worker refuses a malformed key with exit code 2 and never prints the key', async () => {
  const badKey = 'sk_live_entrypoint_secret_value';
  const { exited } = start('worker.js', [], { AGENT_API_KEY: badKey, TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS ?? '' });
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
    AGENT_API_KEY: TEST_API_KEY,
    AGENT_API_BASE_URL: h.simulator.baseUrl,
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS ?? '',
    TEMPORAL_TASK_QUEUE: taskQueue,
  });
  try {
    const { result } = await h.followUps(taskQueue).startAndWait({ ...ref, prompt: 'From a real worker', polling: FAST_POLLING });
    expect(result.outcome).toBe('completed');
    expect(result.prLink).not.toBeNull();
  } finally {
    worker.child.kill('SIGTERM');
  }
  const exit = await worker.exited;
  expect(exit.code).toBe(0);
  expect(exit.stdout + exit.stderr).not.toContain(TEST_API_KEY);
});

test('the agent-followup binary prints its help', async () => {
  const exit = await start('cli.js', ['--help'], {}).exited;
  expect(exit.code).toBe(0);
  expect(exit.stdout).toContain('Usage:');
});
