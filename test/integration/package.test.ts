/**
 * The package as a backend service gets it: `npm pack`, the tarball installed into a fresh project, the README's
 * snippets (taken from the README itself) compiled in strict TypeScript as an ES module, as CommonJS and as a jest
 * test, then run against the run's dev server: the two library snippets with a worker of ours serving their follow-ups,
 * the jest test with its own embedded worker and simulator from the package's `worker` and `testing` entries.
 */
import { DEFAULT_COORDINATOR_TASK_QUEUE } from '../../src/follow-up/coordinator-id';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { createHarness, TEST_API_KEY, waitFor, type Harness } from '../support/harness';

const execFileAsync = promisify(execFile);

const ROOT = join(__dirname, '..', '..');
const NODE = process.execPath;

/** The fenced code block after `<!-- consumer: NAME -->` in the README. */
function readmeSnippet(name: string): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const marker = `<!-- consumer: ${name} -->\n\`\`\`ts\n`;
  const start = readme.indexOf(marker);
  if (start < 0) throw new Error(`README.md has no snippet marked ${name}`);
  const body = readme.slice(start + marker.length);
  return body.slice(0, body.indexOf('\n```'));
}

function npm(args: string[], cwd: string): string {
  return execFileSync('npm', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
}

let h: Harness;
let dir: string;
let packed: { files: Array<{ path: string }> };
beforeAll(async () => {
  h = await createHarness();
  dir = mkdtempSync(join(tmpdir(), 'agent-followup-consumer-'));
  // --ignore-scripts: `npm test` has built dist/ already; `prepare` would build it again.
  const [pack] = JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--pack-destination', dir], ROOT)) as [
    { filename: string; files: Array<{ path: string }> },
  ];
  packed = pack;
  const tarball = join(dir, pack.filename);
  const project = join(dir, 'consumer');
  mkdirSync(join(project, 'src'), { recursive: true });
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, version: '1.0.0' }));
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      // No skipLibCheck: the declarations of the package and of everything it brings must compile in a strict consumer.
      compilerOptions: {
        strict: true,
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'ES2022',
        outDir: 'out',
        rootDir: 'src',
        types: ['node', 'jest'],
      },
      include: ['src'],
    }),
  );
  writeFileSync(join(project, 'src', 'follow-up.mts'), readmeSnippet('esm'));
  writeFileSync(join(project, 'src', 'follow-up.cts'), readmeSnippet('cjs'));
  writeFileSync(join(project, 'src', 'follow-up.test.ts'), readmeSnippet('jest'));
  // The versions this repository tests with, from the npm cache when it has them.
  const dev = (
    JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }
  ).devDependencies;
  const tools = ['typescript', '@types/node', 'jest', '@types/jest'].map((name) => `${name}@${dev[name]}`);
  npm(['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', tarball, ...tools], project);
}, 600_000);

afterAll(async () => {
  await h.close();
  rmSync(dir, { recursive: true, force: true });
});

const consumer = () => join(dir, 'consumer');

test('the tarball ships the built library, its declarations and the workflow bundle, nothing else', () => {
  const paths = packed.files.map((file) => file.path);
  expect(paths).toEqual(
    expect.arrayContaining([
      'package.json',
      'README.md',
      'LICENSE',
      'CHANGELOG.md',
      'dist/workflow-bundle.js',
      'dist/src/index.js',
      'dist/src/index.d.ts',
      'dist/src/embedded-worker.d.ts',
      'dist/src/testing.d.ts',
      'dist/src/cli.js',
    ]),
  );
  expect(
    paths.filter(
      (path) =>
        !/^(package\.json|README\.md|LICENSE|CHANGELOG\.md|dist\/workflow-bundle\.js|dist\/src\/.+\.(js|d\.ts))$/.test(
          path,
        ),
    ),
  ).toEqual([]);
  expect(paths.filter((path) => /\/(dev|scripts|test)\/|\.test\./.test(path))).toEqual([]);
});

test('the README snippets compile in strict TypeScript against the installed package (ESM, CommonJS, jest)', () => {
  const tsc = join(consumer(), 'node_modules', 'typescript', 'bin', 'tsc');
  expect(() => execFileSync(NODE, [tsc, '-p', '.'], { cwd: consumer(), encoding: 'utf8' })).not.toThrow();
});

describe('and run as a service would run them', () => {
  /** The package's own worker command, as a service installs it: `node_modules/.bin/agent-followup-worker`. */
  async function installedWorker<T>(taskQueue: string, work: () => Promise<T>): Promise<T> {
    const bin = join(consumer(), 'node_modules', '.bin', 'agent-followup-worker');
    const child = spawn(bin, [], {
      cwd: consumer(),
      // Only what a deployment sets; `node` on PATH is the one running these tests (the bin's #! finds it there).
      env: {
        PATH: `${dirname(NODE)}:${process.env.PATH ?? ''}`,
        HOME: process.env.HOME ?? '',
        TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS ?? '',
        TEMPORAL_TASK_QUEUE: taskQueue,
        AGENT_API_KEY: TEST_API_KEY,
        AGENT_API_BASE_URL: h.simulator.baseUrl,
        WORKER_SHUTDOWN_GRACE_TIME: '5s',
        AGENT_API_REQUEST_TIMEOUT: '5s',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    let ended = false;
    const exited = new Promise<number | null>((resolve) =>
      child.on('close', (code) => {
        ended = true;
        resolve(code);
      }),
    );
    try {
      await waitFor(
        () => ended || output.includes('agent-followup worker polling task queue'),
        `the worker to start:\n${output}`,
      );
      return await work();
    } finally {
      child.kill('SIGTERM');
      // Drains and stops on SIGTERM, exit 0, saying so.
      const code = await exited;
      if (code !== 0) throw new Error(`the worker exited ${code}:\n${output}`);
      expect(output).toContain('agent-followup worker stopped after draining');
      expect(output).not.toContain(TEST_API_KEY);
    }
  }

  test.each([
    ['follow-up.mjs', 'the installed agent-followup-worker', 'job-123', 'Also update the changelog'],
    ['follow-up.cjs', 'a worker in the test process', 'job-456', 'Rename the config flag'],
  ])(
    '%s, served by %s, starts a follow-up and reports its pull request',
    async (file, servedBy, jobId, prompt) => {
      h.simulator.addJob({ projectId: 'my-project', jobId, workMs: 300 });
      const taskQueue = h.taskQueue();
      // Its own process, as a service would be.
      const runSnippet = () =>
        execFileAsync(NODE, [join('out', file)], {
          cwd: consumer(),
          env: { ...process.env, TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS, TEMPORAL_TASK_QUEUE: taskQueue },
        });
      const { stdout } = servedBy.startsWith('the installed')
        ? await installedWorker(taskQueue, runSnippet)
        : // The namespace's coordinator queue, as the installed worker and the jest snippet's worker poll it: one
          // project's coordinator lives on the queue it was started on, and the snippets all send to 'my-project'.
          await (
            await h.worker(taskQueue, undefined, { coordination: { taskQueue: DEFAULT_COORDINATOR_TASK_QUEUE } })
          ).runUntil(runSnippet);
      expect(stdout).toMatch(/completed: https:\/\/github\.com\/.+\/pull\/\d+/);
      expect(h.simulator.counts('my-project', jobId)).toMatchObject({ posts: 1, prompts: [prompt] });
    },
    120_000,
  );

  test('the jest snippet passes with startTestStack from the package (its own dev server, simulator and worker), and the SDK says nothing', async () => {
    const jest = join(consumer(), 'node_modules', 'jest', 'bin', 'jest.js');
    const { stdout, stderr } = await execFileAsync(NODE, [jest, '--rootDir', 'out', '--ci'], {
      cwd: consumer(),
      env: { ...process.env, TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS },
    });
    expect(stderr).toContain('1 passed');
    // Quiet by default (connectWorker): no SDK line at INFO or WARN in a passing run, only jest's own report.
    expect(
      `${stdout}\n${stderr}`
        .split('\n')
        .filter((line) => /\[(INFO|WARN)\]|No workflows registered|Worker state changed/.test(line)),
    ).toEqual([]);
  }, 120_000);
});
