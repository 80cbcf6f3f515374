import { WriteStream } from 'node:tty';
import { colourFor, paint } from '../../src/command-line/terminal';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readPromptFile } from '../../src/command-line/follow-up-options';
import { UsageError } from '../../src/command-line/io';
import { DEFAULT_POLLING, inspectFollowUpInput, type FollowUpRequest } from '../../src/kernel/request';
import { optionDifferences } from '../../src/client/option-differences';
import { packageVersion, runCli } from '../../src/command-line/program';
import { ExitCode } from '../../src/command-line/io';
import { CliErrorSchema } from '../../src/command-line/json-output';
import { alignedTable, describeProgress, failingLine, progressState, timeIn } from '../../src/command-line/render';
import type { FollowUpProgress, PollActivityProgress } from '../../src/kernel/types';

function request(input: Record<string, unknown>): FollowUpRequest {
  const checked = inspectFollowUpInput({ projectId: 'p', jobId: 'j', prompt: 'x', ...input });
  if (!checked.ok) throw new Error(JSON.stringify(checked.problems));
  return checked.request;
}

describe('optionDifferences', () => {
  test('the same options, given differently (10m and 600000 ms, defaults left out), do not differ', () => {
    expect(
      optionDifferences(request({ polling: { timeout: '10m' } }), request({ polling: { timeout: 600_000 } })),
    ).toEqual([]);
    expect(optionDifferences(request({}), request({ polling: { initialInterval: '5s' } }))).toEqual([]);
  });

  test('names each option that differs, with both values as durations', () => {
    expect(
      optionDifferences(
        request({ polling: { timeout: '1h', backoffCoefficient: 3 }, onAmbiguousSend: 'fail' }),
        request({ polling: { timeout: '24h' } }),
      ),
    ).toEqual([
      'timeout 1h here, 1d in the running follow-up',
      `backoff coefficient 3 here, ${DEFAULT_POLLING.backoffCoefficient} in the running follow-up`,
      'on-ambiguous-send fail here, reconcile in the running follow-up',
    ]);
  });
});

describe('timeIn', () => {
  test("a schedule's next time in its own zone, with UTC beside it", () => {
    expect(timeIn('2027-01-04T08:00:00.000Z', 'Europe/Berlin')).toBe('2027-01-04 09:00 Europe/Berlin (08:00Z)');
    expect(timeIn('2027-07-05T07:30:00.000Z', 'Europe/Berlin')).toBe('2027-07-05 09:30 Europe/Berlin (07:30Z)');
  });

  test('UTC stays ISO', () => {
    expect(timeIn('2027-01-04T08:00:00.000Z', 'UTC')).toBe('2027-01-04T08:00:00.000Z');
  });
});

test('the version comes from package.json', () => {
  expect(packageVersion()).toMatch(/^\d+\.\d+\.\d+/);
});

describe('describeProgress', () => {
  const progress: FollowUpProgress = {
    phase: 'waiting',
    projectId: 'p',
    jobId: 'j',
    lastStatus: 'active',
    lastStatusUnknown: false,
    waitingFor: 'settle',
    queue: null,
    polls: 1,
    lastError: null,
    errorsSince: null,
    sentAt: '2026-11-25T00:00:00.000Z',
    deadline: null,
    runs: 1,
    sendAttempts: 1,
    delivery: 'response',
    prLink: null,
    outcome: null,
  };

  test('a follow-up queued for the send budget past its deadline says, on a line of its own, that it will time out first', () => {
    const queue = {
      reason: 'budget',
      sentInWindow: 80,
      limit: 80,
      windowMs: 3_600_000,
      nextSlotAt: '2026-11-25T00:30:00.000Z',
      ahead: 0,
    } as const;
    const queued = { ...progress, phase: 'queued', queue, sentAt: null } as const;
    const now = Date.parse('2026-11-25T00:00:00.000Z');
    expect(describeProgress({ ...queued, deadline: '2026-11-25T00:20:00.000Z' }, now).split('\n')).toEqual([
      "  … Waiting for the project's send budget: 80 of 80 sent in the last hour, next slot 00:30:00 UTC (in 30m)",
      expect.stringMatching(/^  ! The project's next send slot comes after this follow-up's deadline .*--timeout`\.$/),
    ]);
    expect(describeProgress({ ...queued, deadline: '2026-11-25T00:40:00.000Z' }, now)).not.toContain('!');
  });

  test('piped, a line per change of state: the same follow-up read later is the same state; a read, an error or a next poll is not', () => {
    const poll: PollActivityProgress = {
      polls: 3,
      lastStatus: 'active',
      nextPollAt: '2026-11-25T00:05:00.000Z',
      lastError: null,
      failingSince: null,
      failedReads: 0,
    };
    const waiting: FollowUpProgress = { ...progress, deadline: '2026-11-26T00:00:00.000Z', poll };
    const atTimes = [0, 2_000, 4_000].map((ms) => Date.parse('2026-11-25T00:03:12.000Z') + ms);
    // The line as a terminal shows it moves with the clock; its state does not.
    expect(new Set(atTimes.map((now) => describeProgress(waiting, now))).size).toBe(3);
    expect(progressState(waiting)).toBe(progressState({ ...waiting }));
    for (const changed of [
      { ...waiting, poll: { ...poll, polls: 4 } },
      { ...waiting, poll: { ...poll, nextPollAt: '2026-11-25T00:06:00.000Z' } },
      { ...waiting, lastError: 'HttpError: HTTP 500', errorsSince: '2026-11-25T00:02:00.000Z' },
      { ...waiting, phase: 'reconciling' as const },
    ])
      expect(progressState(changed)).not.toBe(progressState(waiting));
  });

  test('tells times as people read them: how long ago it was sent, when the next poll comes, how much time is left', () => {
    const now = Date.parse('2026-11-25T00:03:12.000Z');
    const line = describeProgress(
      {
        ...progress,
        deadline: '2026-11-25T02:00:00.000Z',
        poll: {
          polls: 4,
          nextPollAt: '2026-11-25T00:03:52.000Z',
          lastStatus: 'active',
          lastError: null,
          failingSince: null,
          failedReads: 0,
        },
      },
      now,
    );
    expect(line).toBe(
      '  … waiting, status active, 5 poll(s), sent 3m12s ago, next poll in 40s, 1h56m left before the deadline',
    );
    // A next poll already past is a heartbeat not yet refreshed: the poll is under way, and nothing is said of it.
    expect(
      describeProgress(
        {
          ...progress,
          poll: {
            polls: 0,
            nextPollAt: '2026-11-25T00:03:00.000Z',
            lastStatus: null,
            lastError: null,
            failingSince: null,
            failedReads: 0,
          },
        },
        now,
      ),
    ).not.toContain('next poll');
  });

  test('errors as errors: what fails, for how long, since when and how many reads in a row, on a line of its own', () => {
    const now = Date.parse('2026-11-25T00:05:00.000Z');
    const failing = {
      polls: 14,
      nextPollAt: null,
      lastStatus: 'active',
      lastError: 'AgentApiServerError: HTTP 500',
      failingSince: '2026-11-25T00:01:48.000Z',
      failedReads: 14,
    };
    expect(
      describeProgress(
        {
          ...progress,
          errorsSince: '2026-11-25T00:01:48.000Z',
          lastError: 'AgentApiServerError: HTTP 500',
          poll: failing,
        },
        now,
      ).split('\n')[1],
    ).toBe('  ! reads failing for 3m12s (since 00:01:48 UTC, at least 14 in a row): AgentApiServerError: HTTP 500');
    // A refused send, known to the workflow only.
    expect(
      failingLine({ ...progress, errorsSince: '2026-11-25T00:04:00.000Z', lastError: 'AgentApiRateLimited: 429' }, now),
    ).toBe('calls to the API failing for 1m (since 00:04:00 UTC): AgentApiRateLimited: 429');
    expect(failingLine(progress, now)).toBeNull();
  });

  test('says it is confirming a result only once the job has ended', () => {
    expect(describeProgress(progress)).not.toContain('confirm');
    expect(
      describeProgress({
        ...progress,
        poll: {
          polls: 2,
          nextPollAt: null,
          lastStatus: 'completed',
          lastError: null,
          failingSince: null,
          failedReads: 0,
        },
      }),
    ).toContain("waiting to confirm the result is this follow-up's");
  });
});

describe('--prompt-file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'prompt-file-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('reads a prompt file whole, in UTF-8', () => {
    const path = join(dir, 'prompt.txt');
    writeFileSync(path, 'Ajoute des tests ✓\n');
    expect(readPromptFile(path)).toBe('Ajoute des tests ✓\n');
  });

  test('refuses a file longer than any prompt may be without reading it whole: /dev/zero ends at once', () => {
    expect(() => readPromptFile('/dev/zero')).toThrow(
      '--prompt-file /dev/zero is longer than any prompt may be (100,000 characters)',
    );
    const path = join(dir, 'long.txt');
    writeFileSync(path, 'x'.repeat(13));
    expect(() => readPromptFile(path, 3)).toThrow(UsageError);
  });

  test('a file that cannot be read names the file and the reason', () => {
    expect(() => readPromptFile(join(dir, 'missing.txt'))).toThrow(
      `cannot read --prompt-file ${join(dir, 'missing.txt')}: ENOENT`,
    );
  });
});

describe('alignedTable', () => {
  test('pads every column but the last to its widest cell, under a header', () => {
    expect(
      alignedTable(
        ['A', 'LONGER', 'LAST'],
        [
          ['x', 'y', 'free text'],
          ['wide cell', 'z', ''],
        ],
      ),
    ).toBe(['A          LONGER  LAST', 'x          y       free text', 'wide cell  z'].join('\n') + '\n');
  });
});

describe('colour', () => {
  const terminal = (hasColors: boolean) => ({ isTTY: true, hasColors: () => hasColors });
  test('only on a terminal that has colours, as Node decides (it reads NO_COLOR, FORCE_COLOR and TERM)', () => {
    expect(colourFor(terminal(true), {})).toBe(true);
    expect(colourFor(terminal(false), {})).toBe(false);
    expect(colourFor({ isTTY: false, hasColors: () => true }, {})).toBe(false);
    expect(colourFor({}, {})).toBe(false);
  });

  test("NO_COLOR reaches Node's own check: a colour terminal asked for none gets none", () => {
    // tty.WriteStream's hasColors, on a stream that is not a real terminal: only its env decides.
    const stream = Object.create(WriteStream.prototype) as WriteStream;
    expect(colourFor(Object.assign(stream, { isTTY: true }), { TERM: 'xterm-256color' })).toBe(true);
    expect(colourFor(Object.assign(stream, { isTTY: true }), { TERM: 'xterm-256color', NO_COLOR: '1' })).toBe(false);
  });

  test('paint is a no-op without colour', () => {
    expect(paint({ colour: false }, 'red', 'x')).toBe('x');
    expect(paint({ colour: true }, 'red', 'x')).toBe('\x1b[31mx\x1b[39m');
  });
});

describe('the conventions of gh and temporal: help <command>, examples, --address/--namespace/--profile', () => {
  /** Runs the CLI with no server: `connect` notes the environment it was given and fails. */
  async function run(argv: string[]) {
    const seen = { out: '', err: '', env: undefined as Record<string, string | undefined> | undefined };
    const code = await runCli(argv, {
      env: { TEMPORAL_ADDRESS: 'from-env:7233', TEMPORAL_NAMESPACE: 'env-namespace' },
      out: (text) => (seen.out += text),
      err: (text) => (seen.err += text),
      connect: (env) => {
        seen.env = env;
        return Promise.reject(new Error('no server in unit tests'));
      },
    });
    return { code, ...seen };
  }

  test('help <command> is <command> --help, down to a subcommand; an unknown one is exit 2 with the list', async () => {
    const help = await run(['help', 'schedule', 'create']);
    expect(help.code).toBe(ExitCode.Ok);
    expect(help.out).toContain('Usage: agent-followup schedule create');
    const unknown = await run(['help', 'lsit']);
    expect(unknown.code).toBe(ExitCode.BadInput);
    expect(unknown.err).toContain("there is no command 'lsit'; the commands: send, status, watch, list,");
    expect(unknown.env).toBeUndefined();
  });

  test.each([
    ['send'],
    ['status'],
    ['watch'],
    ['list'],
    ['cancel'],
    ['poll-now'],
    ['setup'],
    ['codec-server'],
    ['schedule', 'create'],
    ['schedule', 'list'],
    ['schedule', 'describe'],
    ['schedule', 'pause'],
    ['schedule', 'unpause'],
    ['schedule', 'trigger'],
    ['schedule', 'delete'],
    ['budget', 'show'],
    ['budget', 'set'],
  ])('%s %s: its help ends with examples of itself, after the connection flags', async (...command) => {
    const { code, out } = await run(['help', ...command.filter(Boolean)]);
    expect(code).toBe(ExitCode.Ok);
    const examples = out.slice(out.indexOf('\nExamples:\n'));
    expect(out.indexOf('--address <host:port>')).toBeLessThan(out.indexOf('\nExamples:\n'));
    expect(examples).toContain(
      `$ ${command[0] === 'codec-server' ? 'AGENT_PAYLOAD_KEYS=... ' : ''}agent-followup ${command.filter(Boolean).join(' ')}`,
    );
  });

  test('the flags beat the environment, before the command or after it; without them the environment stands', async () => {
    const before = await run(['--address', 'flag:7233', '--namespace', 'prod', '--profile', 'cloud', 'status', 'wf-1']);
    expect(before.code).toBe(ExitCode.Error);
    expect(before.env).toMatchObject({
      TEMPORAL_ADDRESS: 'flag:7233',
      TEMPORAL_NAMESPACE: 'prod',
      TEMPORAL_PROFILE: 'cloud',
    });
    const after = await run(['list', '--state', 'running', '--namespace', 'staging']);
    expect(after.env).toMatchObject({ TEMPORAL_ADDRESS: 'from-env:7233', TEMPORAL_NAMESPACE: 'staging' });
    expect((await run(['status', 'wf-1'])).env).toBeUndefined();
  });

  test('bad flags and filters are exit 2 before any connection, under --json as the error object', async () => {
    const empty = await run(['--address', ' ', 'status', 'wf-1']);
    expect(empty).toMatchObject({ code: ExitCode.BadInput, env: undefined });
    expect(empty.err).toContain('--address must not be empty');
    const state = await run(['list', '--state', 'done', '--json']);
    expect(state).toMatchObject({ code: ExitCode.BadInput, env: undefined });
    expect(CliErrorSchema.parse(JSON.parse(state.out)).error.message).toContain('use one of running, ended, completed');
    for (const limit of ['0', '1001', '2.5', 'ten'])
      expect(await run(['list', '--limit', limit])).toMatchObject({ code: ExitCode.BadInput, env: undefined });
    expect(await run(['watch', ' '])).toMatchObject({ code: ExitCode.BadInput, env: undefined });
    const id = await run(['list', '--project', "p' OR '1'='1"]);
    expect(id).toMatchObject({ code: ExitCode.BadInput, env: undefined });
    expect(id.err).toContain('projectId may contain only');
  });
});
