/**
 * The package as a backend service gets it: `npm pack`, the tarball installed into a fresh project, the README's
 * snippets (taken from the README itself) compiled in strict TypeScript as an ES module, as CommonJS and as a jest
 * test, then run against the run's dev server: the two library snippets with a worker of ours serving their follow-ups,
 * the jest test with its own embedded worker and simulator from the package's `worker` and `testing` entries.
 */
import { DEFAULT_COORDINATOR_TASK_QUEUE } from '../../src/kernel/workflow-ids';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { createHarness, TEST_API_KEY, waitFor, type Harness } from '../support/harness';

const execFileAsync = promisify(execFile);

const ROOT = join(__dirname, '..', '..');
const NODE = process.execPath;

/** The fenced code block after `<!-- consumer: NAME -->` in the README. */
function readmeSnippet(name: string, language = 'ts'): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const marker = `<!-- consumer: ${name} -->\n\`\`\`${language}\n`;
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
  writeFileSync(join(project, 'src', 'follow-up-timeout.test.ts'), readmeSnippet('time-skipping'));
  writeFileSync(join(project, 'jest.config.js'), readmeSnippet('jest-config', 'js'));
  // The versions this repository tests with, from the npm cache when it has them.
  const dev = (
    JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }
  ).devDependencies;
  const tools = ['typescript', '@types/node'].map((name) => `${name}@${dev[name]}`);
  // As a service that only starts follow-ups installs it: no worker, no testing entry (their SDK packages are optional
  // peers), no jest; the second half of this file installs those.
  npm(['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', tarball, ...tools], project);
}, 600_000);

afterAll(async () => {
  await h.close();
  rmSync(dir, { recursive: true, force: true });
});

const consumer = () => join(dir, 'consumer');

test("the tarball ships the built library, its declarations, the workflow bundles (plain and encrypting) and the time-skipping server's installer, nothing else", () => {
  const paths = packed.files.map((file) => file.path);
  expect(paths).toEqual(
    expect.arrayContaining([
      'package.json',
      'README.md',
      'LICENSE',
      'CHANGELOG.md',
      'dist/workflow-bundle.js',
      'dist/workflow-bundle-encrypting.js',
      'dist/src/index.js',
      'dist/src/index.d.ts',
      'dist/src/embedded-worker.d.ts',
      'dist/src/testing.d.ts',
      'dist/src/cli.js',
      // What startTestStack's error names when the SDK cannot download the time-skipping server.
      'scripts/install/install-temporal-test-server.sh',
    ]),
  );
  expect(
    paths.filter(
      (path) =>
        !/^(package\.json|README\.md|LICENSE|CHANGELOG\.md|dist\/workflow-bundle(-encrypting)?\.js|dist\/src\/.+\.(js|d\.ts)|scripts\/install\/install-temporal-test-server\.sh)$/.test(
          path,
        ),
    ),
  ).toEqual([]);
  expect(paths.filter((path) => /\/(dev|scripts|test)\/|\.test\./.test(path))).toEqual([]);
  expect(paths.filter((path) => path.startsWith('scripts/'))).toEqual([
    'scripts/install/install-temporal-test-server.sh',
  ]);
});

/** Every file under `root` whose name ends in `.node`: a native module. */
function nativeModules(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((path) => path.endsWith('.node'));
}

const tsc = (...args: string[]) =>
  execFileSync(NODE, [join(consumer(), 'node_modules', 'typescript', 'bin', 'tsc'), ...args], {
    cwd: consumer(),
    encoding: 'utf8',
  });

describe('a client-only install (the package alone, as a service that only starts follow-ups has it)', () => {
  test('brings no native module and neither the worker nor the testing SDK', () => {
    const modules = join(consumer(), 'node_modules');
    expect(nativeModules(modules)).toEqual([]);
    for (const name of ['@temporalio/worker', '@temporalio/testing', '@temporalio/core-bridge', '@swc/core']) {
      expect(existsSync(join(modules, name))).toBe(false);
    }
  });

  test('compiles the library snippets in strict TypeScript (ESM and CommonJS) and runs the CLI', () => {
    // Only these two: the jest snippet needs the testing entry.
    const types = ['--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'ES2022'];
    expect(() => tsc(...types, '--types', 'node', '--noEmit', 'src/follow-up.mts', 'src/follow-up.cts')).not.toThrow();
    const help = execFileSync(join(consumer(), 'node_modules', '.bin', 'agent-followup'), ['--help'], {
      encoding: 'utf8',
      env: { ...process.env, PATH: `${dirname(NODE)}:${process.env.PATH ?? ''}` },
    });
    expect(help).toContain('Usage: agent-followup');
  });

  test('the worker and testing entries, and the worker command, say what to install', async () => {
    const loading = (entry: string) =>
      execFileAsync(NODE, ['--input-type=module', '-e', `await import('${entry}')`], { cwd: consumer() }).then(
        () => '',
        (error: { stderr: string }) => error.stderr,
      );
    expect(await loading('agent-followup/worker')).toContain(
      'agent-followup/worker needs @temporalio/worker, which is not installed. Install it beside agent-followup: ' +
        'npm install @temporalio/worker@1.24.0.',
    );
    expect(await loading('agent-followup/testing')).toContain(
      'npm install @temporalio/testing@1.24.0 @temporalio/worker@1.24.0.',
    );
    const command = await execFileAsync(join(consumer(), 'node_modules', '.bin', 'agent-followup-worker'), [], {
      env: { PATH: `${dirname(NODE)}:${process.env.PATH ?? ''}`, AGENT_API_KEY: TEST_API_KEY },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(command.code).toBe(1);
    // One line, no stack trace.
    expect(command.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        /^agent-followup-worker needs @temporalio\/worker, .* npm install @temporalio\/worker@1\.24\.0\./,
      ),
    ]);
  });
});

describe('with the worker and testing SDK installed beside it', () => {
  beforeAll(() => {
    const dev = (
      JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }
    ).devDependencies;
    const more = ['@temporalio/worker', '@temporalio/testing', 'jest', '@types/jest', 'ts-jest'].map(
      (name) => `${name}@${dev[name]}`,
    );
    npm(['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', ...more], consumer());
  }, 600_000);

  test('the README snippets compile in strict TypeScript against the installed package (ESM, CommonJS, jest)', () => {
    expect(() => tsc('-p', '.')).not.toThrow();
  });
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
        AGENT_API_ALLOW_LOOPBACK: 'true',
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

  test("the jest snippets pass under the README's jest configuration (ts-jest), on the dev server and on the time-skipping server, printing nothing but jest's own lines", async () => {
    const jest = join(consumer(), 'node_modules', 'jest', 'bin', 'jest.js');
    // --roots src: the TypeScript the README shows, not tsc's copies in out/.
    const { stdout, stderr } = await execFileAsync(NODE, [jest, '--ci', '--roots', 'src'], {
      cwd: consumer(),
      env: { ...process.env, TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS },
    });
    expect(stderr).toContain('Tests:       2 passed, 2 total');
    const jestsOwn = [/^(PASS|FAIL) /, /^\s+✓ /, /^(Test Suites|Tests|Snapshots|Time):/, /^Ran all test suites/];
    expect(
      `${stdout}\n${stderr}`
        .split('\n')
        .filter((line) => line.trim() !== '' && !jestsOwn.some((pattern) => pattern.test(line))),
    ).toEqual([]);
  }, 180_000);
});
