/**
 * The API key never leaks: a real worker process talks to a simulator that echoes the Authorization header in every
 * error body, like a careless API, and nothing it records (histories, failures, queries, its own logs at TRACE, the
 * CLI's output) holds the key in any form. The key holds `"` and `\`, so the echo in a JSON body is escaped.
 */
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { ApplicationFailure } from '@temporalio/common';
import { FollowUpClient, type FollowUpInput } from '../../src/client';
import { secretDetector, secretForms } from '../../src/secrets';
import { runCliOn } from '../support/cli-runner';
import { withPayloadsDecoded } from '../support/payload-text';
import { startBuiltScript } from '../support/processes';
import { createHarness, FAST_POLLING, uniqueJob, type Harness } from '../support/harness';

const KEY = 'mint_test_"secret\\must_not_leak_42';
const SECRET = KEY.slice('mint_'.length);

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ apiKey: KEY, echoAuthorizationInErrors: true, defaultWorkMs: 300 });
});
afterAll(async () => {
  await h.close();
});

function startWorker(taskQueue: string, logFormat: 'text' | 'json', budget: Record<string, string>) {
  return startBuiltScript('worker.js', [], {
    ...budget,
    AGENT_API_KEY: KEY,
    AGENT_API_BASE_URL: h.simulator.baseUrl,
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS ?? '',
    TEMPORAL_TASK_QUEUE: taskQueue,
    WORKER_SHUTDOWN_GRACE_TIME: '2s',
    AGENT_API_REQUEST_TIMEOUT: '2s',
    LOG_FORMAT: logFormat,
    // Everything the worker can say, so a key hiding in a debug line would show up too.
    LOG_LEVEL: 'TRACE',
  });
}

/** Every byte of a text percent-encoded, in lowercase hex. */
function percentAll(text: string, lower: boolean): string {
  return [...Buffer.from(text, 'utf8')]
    .map((byte) => `%${byte.toString(16).padStart(2, '0')}`)
    .map((escape) => (lower ? escape : escape.toUpperCase()))
    .join('');
}

/** The key as careless APIs and proxies echo it, beyond the usual forms. */
const ENCODED_FORMS = [
  [...KEY].map((char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''),
  percentAll(KEY, true),
  encodeURIComponent(encodeURIComponent(KEY)),
  new URLSearchParams({ authorization: `Bearer ${KEY}` }).toString(),
  Buffer.from(`Authorization: Bearer ${KEY}`).toString('base64'),
  Buffer.from(`Bearer ${KEY}`).toString('hex'),
  [...KEY].map((char) => `&#${char.charCodeAt(0)};`).join(''),
];

/** Which forms of the key a text holds: the whole key or its secret part, raw, JSON-escaped, URL-encoded or base64. */
function leaks(text: string): string[] {
  return secretForms([KEY, SECRET]).filter((form) => text.includes(form));
}

/** A history as JSON, with every payload's base64 `data` decoded too, so a key inside a payload cannot hide. */
function historyText(history: Parameters<typeof historyToJSON>[0]): string {
  return withPayloadsDecoded(historyToJSON(history));
}

/** An error and its whole cause chain: names, messages, stacks and every enumerable field (details included). */
function errorText(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  while (current instanceof Error) {
    parts.push(
      `${current.name}: ${current.message}`,
      current.stack ?? '',
      JSON.stringify(current, (_key, value: unknown) =>
        value instanceof Uint8Array ? Buffer.from(value).toString('utf8') : value,
      ),
    );
    current = (current as Error & { cause?: unknown }).cause;
  }
  return parts.join('\n');
}

/** The innermost ApplicationFailure's type: the activity's reason rather than "Activity task failed". */
function failureType(error: unknown): string | undefined {
  let type: string | undefined;
  let current: unknown = error;
  while (current instanceof Error) {
    if (current instanceof ApplicationFailure) type = current.type ?? undefined;
    current = (current as Error & { cause?: unknown }).cause;
  }
  return type;
}

interface Scenario {
  name: string;
  input: FollowUpInput;
  /** 'completed', or the failure type the follow-up must end with. */
  ending: string;
  /** Whether the simulator answered at least one request with an error body that echoes the key. */
  echoed: boolean;
}

test.each(['text', 'json'] as const)(
  'the API key never appears in histories, failures, queries or worker logs (%s), even when the API echoes it',
  async (logFormat) => {
    // Positive control: the simulator really does put the key in its error bodies, and leaks() finds it there.
    const probe = uniqueJob('probe');
    const echoedResponse = await fetch(`${h.simulator.baseUrl}/v2/agent/${probe.projectId}/job/${probe.jobId}`, {
      headers: { Authorization: `Bearer ${KEY}` },
    });
    const echoedBody = await echoedResponse.text();
    expect(echoedResponse.status).toBe(404);
    // The body is JSON, so the key in it is escaped: found in that form, not as written.
    expect(echoedBody).not.toContain(KEY);
    expect(leaks(echoedBody)).toEqual(
      expect.arrayContaining([JSON.stringify(KEY).slice(1, -1), JSON.stringify(SECRET).slice(1, -1)]),
    );

    const scenario = (
      name: string,
      ending: string,
      echoed: boolean,
      polling: FollowUpInput['polling'] = FAST_POLLING,
    ) => {
      const ref = uniqueJob(name);
      return {
        ref,
        scenario: {
          name,
          ending,
          echoed,
          input: { ...ref, prompt: `Secrets test: ${name}`, polling },
        } satisfies Scenario,
      };
    };
    const completed = scenario('completed', 'completed', false);
    h.simulator.addJob(completed.ref);
    // Never added: the read before the send gets a 404 whose body echoes the key.
    const notFound = scenario('not-found', 'AgentJobNotFound', true);
    const unauthorized = scenario('unauthorized', 'AgentApiUnauthorized', true);
    h.simulator.addJob({ ...unauthorized.ref, faults: [{ operation: 'get', kind: 'status', status: 401 }] });
    const badRequest = scenario('bad-request', 'AgentApiBadRequest', true);
    h.simulator.addJob({ ...badRequest.ref, faults: [{ operation: 'send', kind: 'status', status: 400 }] });
    // Echoing 503s while waiting: the poll activity rides them out and tells its follow-up once that reads fail, so the
    // history carries the redacted echo in that one signal.
    const recovered = scenario('recovered-from-503s', 'completed', true);
    h.simulator.addJob({ ...recovered.ref, faults: [{ operation: 'get', kind: 'status', status: 503, times: 4 }] });
    // Long enough for a failed read to reach the history: the deadline counts from the start, and the first read, made
    // with the check-in, drops its failure.
    const timedOut = scenario('timed-out-on-503s', 'FollowUpTimedOut', true, { ...FAST_POLLING, timeout: '6s' });
    h.simulator.addJob({ ...timedOut.ref, faults: [{ operation: 'get', kind: 'status', status: 503 }] });
    // The key in forms no list of encodings names (issue 21): 503 bodies that echo it, then a job whose model, branch
    // and pull-request link carry it. Each form must be gone from everything below, as the exact text injected.
    const encoded = scenario('encoded-echoes', 'completed', true);
    h.simulator.addJob({
      ...encoded.ref,
      ref: `feature/${percentAll(KEY, true)}`,
      prLink: `https://github.com/acme/site/pull/7?token=${encodeURIComponent(encodeURIComponent(KEY))}`,
      extraFields: { model: `agent-${Buffer.from(`x${KEY}`).toString('base64')}` },
    });
    h.simulator.injectFaults(
      encoded.ref.projectId,
      encoded.ref.jobId,
      ENCODED_FORMS.map((form) => ({ operation: 'get' as const, status: 503, body: `upstream said: ${form}` })),
    );
    const scenarios = [completed, notFound, unauthorized, badRequest, recovered, timedOut, encoded].map(
      (entry) => entry.scenario,
    );

    const taskQueue = h.taskQueue();
    const followUps = new FollowUpClient(h.client, { taskQueue });
    const worker = startWorker(taskQueue, logFormat, h.workerEnv());
    // If the worker dies, fail with its output instead of waiting for results that will never come.
    const workerDied = worker.exited.then((exit) => {
      throw new Error(`the worker exited early (code ${exit.code}):\n${exit.output}`);
    });
    workerDied.catch(() => undefined);

    let ended: Array<{ scenario: Scenario; workflowId: string; ending: string; texts: string[]; history: string }>;
    try {
      const settled = await Promise.race([
        Promise.all(
          scenarios.map(async (each) => {
            const { workflowId } = await followUps.start(each.input);
            const outcome = await followUps.result(workflowId).then(
              (result) => ({ ending: result.outcome as string, text: JSON.stringify(result) }),
              (error: unknown) => ({ ending: failureType(error) ?? 'unknown failure', text: errorText(error) }),
            );
            return { scenario: each, workflowId, ...outcome };
          }),
        ),
        workerDied,
      ]);
      ended = await Promise.all(
        settled.map(async (each) => {
          const history = historyText(await h.client.workflow.getHandle(each.workflowId).fetchHistory());
          // Queries replay the closed workflow on the worker: progress.lastError is built from failure messages.
          const progress = JSON.stringify(await followUps.progress(each.workflowId));
          const cli = await runCliOn(['status', each.workflowId, '--json'], taskQueue);
          return {
            scenario: each.scenario,
            workflowId: each.workflowId,
            ending: each.ending,
            history,
            texts: [each.text, progress, cli.out, cli.err],
          };
        }),
      );
    } finally {
      worker.child.kill('SIGTERM');
    }
    const exit = await worker.exited;

    expect(ended.map((each) => [each.scenario.name, each.ending])).toEqual(
      scenarios.map((each) => [each.name, each.ending]),
    );
    const holdsKey = secretDetector([KEY, SECRET]);
    const injected = [
      ...ENCODED_FORMS,
      percentAll(KEY, true),
      encodeURIComponent(encodeURIComponent(KEY)),
      Buffer.from(`x${KEY}`).toString('base64'),
    ];
    for (const each of ended) {
      expect({ name: each.scenario.name, history: leaks(each.history), failure: leaks(each.texts.join('\n')) }).toEqual(
        {
          name: each.scenario.name,
          history: [],
          failure: [],
        },
      );
      const everything = [each.history, ...each.texts].join('\n');
      expect({
        name: each.scenario.name,
        injected: injected.filter((form) => everything.includes(form)),
        detected: holdsKey(everything),
      }).toEqual({
        name: each.scenario.name,
        injected: [],
        detected: false,
      });
      // Where the API echoed the key, the history shows the redaction: the echo was there and was cut out.
      expect({ name: each.scenario.name, redacted: each.history.includes('[REDACTED]') }).toEqual({
        name: each.scenario.name,
        redacted: each.scenario.echoed,
      });
    }
    expect(exit.code).toBe(0);
    expect(exit.output).toContain('agent-followup worker polling task queue');
    expect(leaks(exit.output)).toEqual([]);
    expect(injected.filter((form) => exit.output.includes(form))).toEqual([]);
    expect(holdsKey(exit.output)).toBe(false);
    // The failures the API echoed the key into were logged (by the SDK's "Activity failed" lines), redacted.
    expect(exit.output).toContain('Bearer [REDACTED]');
    if (logFormat === 'json') {
      const unparsable = exit.output.split('\n').filter((line) => {
        if (line === '') return false;
        try {
          JSON.parse(line);
          return false;
        } catch {
          return true;
        }
      });
      expect(unparsable).toEqual([]);
    }
  },
  240_000,
);
