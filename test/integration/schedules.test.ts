import { randomUUID } from 'node:crypto';
import { ScheduleAlreadyRunning, ScheduleNotFoundError } from '@temporalio/client';
import { ExitCode } from '../../src/cli';
import { followUpWorkflowId } from '../../src/client';
import { followUpSummary } from '../../src/client/start-metadata';
import {
  FollowUpSchedules,
  followUpScheduleId,
  InvalidScheduleError,
  type FollowUpScheduleRequest,
  type FollowUpScheduleView,
} from '../../src/schedules';
import {
  ScheduleActionSchema,
  ScheduleCreatedSchema,
  ScheduleListSchema,
  ScheduleViewSchema,
} from '../../src/command-line/json-output';
import { runCliOn } from '../support/cli-runner';
import { createHarness, FAST_POLLING, uniqueJob, waitFor, type Harness } from '../support/harness';

let h: Harness;
/** Every schedule a test made, deleted at the end so nothing fires on the shared dev server afterwards. */
const created = new Set<string>();

beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  for (const scheduleId of created) {
    await h.client.schedule
      .getHandle(scheduleId)
      .delete()
      .catch(() => undefined);
  }
  await h.close();
});

/**
 * Yearly, on 1 January at midnight UTC: the schedule never fires on its own while a test runs, so every run a test
 * sees is one it triggered.
 */
const RARELY = '0 0 1 1 *';

function schedulesOn(taskQueue: string): FollowUpSchedules {
  return new FollowUpSchedules(h.client, { taskQueue });
}

async function createSchedule(schedules: FollowUpSchedules, request: FollowUpScheduleRequest) {
  const result = await schedules.create(request);
  created.add(result.scheduleId);
  return result;
}

/** Describes the schedule until `condition` holds on it, and returns that description. */
async function describeUntil(
  schedules: FollowUpSchedules,
  scheduleId: string,
  condition: (view: FollowUpScheduleView) => boolean,
  what: string,
): Promise<FollowUpScheduleView> {
  let view: FollowUpScheduleView | undefined;
  await waitFor(async () => {
    view = await schedules.describe(scheduleId);
    return condition(view);
  }, what);
  return view as FollowUpScheduleView;
}

describe('the library', () => {
  test('create, trigger, see the run complete with its pull request, pause, unpause and delete', async () => {
    const ref = uniqueJob();
    h.simulator.addJob(ref);
    const taskQueue = h.taskQueue();
    const worker = await h.worker(taskQueue);
    const schedules = schedulesOn(taskQueue);
    const input = { ...ref, prompt: 'Weekly: bump the dependencies', polling: FAST_POLLING };

    await worker.runUntil(async () => {
      const { scheduleId, workflowIdPrefix } = await createSchedule(schedules, {
        input,
        cron: RARELY,
        note: 'made by the test',
      });
      expect(scheduleId).toBe(followUpScheduleId(input));
      expect(workflowIdPrefix).toBe(followUpWorkflowId(input));

      const fresh = await schedules.describe(scheduleId);
      expect(fresh).toMatchObject({
        scheduleId,
        input,
        taskQueue,
        paused: false,
        note: 'made by the test',
        pausedBecause: null,
        spec: { cron: RARELY, timezone: 'UTC' },
        policies: { overlap: 'skip', catchupWindow: '10m', pauseOnFailure: true },
        recentRuns: [],
        runningWorkflowIds: [],
      });
      expect(fresh.nextRunTimes[0]).toMatch(/^\d{4}-01-01T00:00:00\.000Z$/);

      await schedules.trigger(scheduleId);
      const done = await describeUntil(
        schedules,
        scheduleId,
        (view) => view.recentRuns[0]?.status === 'COMPLETED',
        'the triggered run to complete',
      );
      const run = done.recentRuns[0];
      expect(run?.outcome).toBe('completed');
      expect(run?.prLink).toMatch(/^https:\/\/github\.com\/acme\/.+\/pull\/\d+$/);
      expect(run?.workflowId.startsWith(`${workflowIdPrefix}-`)).toBe(true);
      expect(done.counts.runsStarted).toBe(1);
      expect(h.simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ posts: 1, prompts: [input.prompt] });

      // The run carries the same UI metadata and search attributes as a follow-up started by hand.
      const execution = await h.client.workflow.getHandle(run?.workflowId as string).describe();
      expect(await execution.staticSummary()).toBe(followUpSummary(input));
      expect(execution.searchAttributes).toMatchObject({
        AgentProjectId: [ref.projectId],
        AgentJobId: [ref.jobId],
        TemporalScheduledById: [scheduleId],
      });

      // The creator's note survives pausing and unpausing; the pause's own note says why it is paused.
      await schedules.pause(scheduleId, 'holiday freeze');
      expect(await schedules.describe(scheduleId)).toMatchObject({
        paused: true,
        note: 'made by the test',
        pausedBecause: 'holiday freeze',
      });
      await schedules.unpause(scheduleId);
      expect(await schedules.describe(scheduleId)).toMatchObject({
        paused: false,
        note: 'made by the test',
        pausedBecause: null,
      });

      expect(await schedules.delete(scheduleId)).toEqual({ runningWorkflowIds: [] });
      await expect(schedules.describe(scheduleId)).rejects.toBeInstanceOf(ScheduleNotFoundError);
    });
  });

  test('a run to an archived job shows the archived outcome, and the schedule stays active', async () => {
    const ref = uniqueJob();
    h.simulator.addJob({ ...ref, status: 'archived' });
    const taskQueue = h.taskQueue();
    const worker = await h.worker(taskQueue);
    const schedules = schedulesOn(taskQueue);
    await worker.runUntil(async () => {
      const { scheduleId } = await createSchedule(schedules, {
        input: { ...ref, prompt: 'Anything new?', polling: FAST_POLLING },
        cron: RARELY,
      });
      await schedules.trigger(scheduleId);
      const view = await describeUntil(
        schedules,
        scheduleId,
        (v) => v.recentRuns[0]?.status === 'COMPLETED',
        'the run to end',
      );
      expect(view.recentRuns[0]).toMatchObject({ status: 'COMPLETED', outcome: 'archived', prLink: null });
      // An archived job is a result, not a failure: nothing pauses it, and an operator can see why to pause it.
      expect(view.paused).toBe(false);
    });
  });

  test('a follow-up that fails pauses its schedule, and describe shows the failure and why it paused', async () => {
    const ref = uniqueJob(); // never added to the simulator: the API answers 404
    const taskQueue = h.taskQueue();
    const worker = await h.worker(taskQueue);
    const schedules = schedulesOn(taskQueue);
    await worker.runUntil(async () => {
      const { scheduleId } = await createSchedule(schedules, {
        input: { ...ref, prompt: 'Hello?', polling: FAST_POLLING },
        cron: RARELY,
      });
      await schedules.trigger(scheduleId);
      const view = await describeUntil(
        schedules,
        scheduleId,
        (v) => v.recentRuns[0]?.status === 'FAILED' && v.paused,
        'the run to fail and the schedule to pause',
      );
      const run = view.recentRuns[0];
      expect(run?.failure?.type).toBe('AgentJobNotFound');
      expect(run?.failure?.message).toContain(ref.jobId);
      // The reason is the run's own failure, not the message Temporal copied into its note.
      expect(view.pausedBecause).toBe(
        `run ${run?.workflowId} failed and pause-on-failure paused the schedule: AgentJobNotFound: ${run?.failure?.message}`,
      );
      expect(view.note).toBeNull();
      const [listed] = await schedules.list({ jobId: ref.jobId });
      expect(listed?.pausedBecause).toBe(view.pausedBecause);
    });
  });

  test('overlap skip: a trigger while a run is still going starts no second follow-up', async () => {
    const ref = uniqueJob();
    h.simulator.addJob({ ...ref, workMs: 10 * 60_000 });
    const taskQueue = h.taskQueue();
    const worker = await h.worker(taskQueue);
    const schedules = schedulesOn(taskQueue);
    await worker.runUntil(async () => {
      const { scheduleId } = await createSchedule(schedules, {
        input: { ...ref, prompt: 'Long task', polling: FAST_POLLING },
        cron: RARELY,
      });
      await schedules.trigger(scheduleId);
      await describeUntil(schedules, scheduleId, (v) => v.runningWorkflowIds.length === 1, 'the first run to start');
      await waitFor(() => h.simulator.counts(ref.projectId, ref.jobId).messagesAccepted === 1, 'the first run to send');

      expect(await schedules.trigger(scheduleId)).toEqual({ overlap: 'skip' });
      const skipped = await describeUntil(
        schedules,
        scheduleId,
        (v) => v.counts.skippedOverlap === 1,
        'the second trigger to be skipped',
      );
      expect(skipped.runningWorkflowIds).toHaveLength(1);
      expect(skipped.recentRuns).toHaveLength(1);
      expect(skipped.counts.runsStarted).toBe(1);

      h.simulator.finishJob(ref.projectId, ref.jobId);
      const done = await describeUntil(
        schedules,
        scheduleId,
        (v) => v.recentRuns[0]?.status === 'COMPLETED',
        'the run to end',
      );
      expect(done.recentRuns).toHaveLength(1);
      expect(h.simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });
    });
  });

  test('invalid input creates nothing and names every bad field', async () => {
    const schedules = schedulesOn(h.taskQueue());
    const scheduleId = `test-invalid-${randomUUID()}`;
    const error = await schedules
      .create({ scheduleId, input: { ...uniqueJob(), prompt: '' }, cron: '@every 1h', timezone: 'Mars/Olympus' })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(InvalidScheduleError);
    expect((error as Error).message).toContain('input.prompt must not be empty');
    expect((error as Error).message).toContain('cron @every is not accepted here');
    expect((error as Error).message).toContain('timezone is not a known IANA time zone');
    await expect(schedules.describe(scheduleId)).rejects.toBeInstanceOf(ScheduleNotFoundError);
  });

  test("a cron expression Temporal's own parser refuses is an InvalidScheduleError with the server's reason, and creates nothing", async () => {
    const schedules = schedulesOn(h.taskQueue());
    const scheduleId = `test-bad-cron-${randomUUID()}`;
    const error = await schedules
      .create({ scheduleId, input: { ...uniqueJob(), prompt: 'Hi' }, cron: '0 25 * * *' })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(InvalidScheduleError);
    expect((error as Error).message).toContain("Temporal refused the cron expression '0 25 * * *'");
    expect((error as Error).message).toContain('Hour is not in range [0-23]');
    await expect(schedules.describe(scheduleId)).rejects.toBeInstanceOf(ScheduleNotFoundError);
  });

  test('a cron expression that never fires (the 31st of February) is an InvalidScheduleError that says so, and leaves no schedule', async () => {
    const schedules = schedulesOn(h.taskQueue());
    const scheduleId = `test-never-cron-${randomUUID()}`;
    const error = await schedules
      .create({ scheduleId, input: { ...uniqueJob(), prompt: 'Hi' }, cron: '0 9 31 2 *' })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(InvalidScheduleError);
    expect((error as Error).message).toContain("the cron expression '0 9 31 2 *' matches no time");
    await expect(schedules.describe(scheduleId)).rejects.toBeInstanceOf(ScheduleNotFoundError);
    // The same id is free again: a corrected expression creates it.
    await schedules.create({ scheduleId, input: { ...uniqueJob(), prompt: 'Hi' }, cron: '0 9 28 2 *' });
    expect((await schedules.describe(scheduleId)).nextRunTimes.length).toBeGreaterThan(0);
    await schedules.delete(scheduleId);
  });

  test('creating the same schedule twice is refused with ScheduleAlreadyRunning naming the id', async () => {
    const schedules = schedulesOn(h.taskQueue());
    const request = { input: { ...uniqueJob(), prompt: 'Once' }, cron: RARELY };
    const { scheduleId } = await createSchedule(schedules, request);
    const error = await schedules.create(request).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ScheduleAlreadyRunning);
    expect((error as ScheduleAlreadyRunning).scheduleId).toBe(scheduleId);
    expect((error as Error).message).toContain(`a schedule with id '${scheduleId}' already exists`);
  });

  test('an interval schedule shows its spec and next times, and list finds it by project with its last run', async () => {
    const ref = uniqueJob();
    h.simulator.addJob(ref);
    const taskQueue = h.taskQueue();
    const worker = await h.worker(taskQueue);
    const schedules = schedulesOn(taskQueue);
    await worker.runUntil(async () => {
      const { scheduleId } = await createSchedule(schedules, {
        input: { ...ref, prompt: 'Daily check', polling: FAST_POLLING },
        every: '1d',
        offset: '9h',
        paused: true,
        overlap: 'buffer-one',
        catchupWindow: '1h',
        pauseOnFailure: false,
      });
      const view = await schedules.describe(scheduleId);
      expect(view).toMatchObject({
        paused: true,
        spec: { every: '1d', offset: '9h', timezone: 'UTC' },
        policies: { overlap: 'buffer-one', catchupWindow: '1h', pauseOnFailure: false },
      });

      // A trigger runs even a paused schedule.
      await schedules.trigger(scheduleId);
      await describeUntil(schedules, scheduleId, (v) => v.recentRuns[0]?.status === 'COMPLETED', 'the run to complete');

      // Temporal's schedule list is eventually consistent.
      let entries: Awaited<ReturnType<FollowUpSchedules['list']>> = [];
      await waitFor(async () => {
        entries = await schedules.list({ projectId: ref.projectId });
        return entries[0]?.lastRun?.status === 'COMPLETED';
      }, 'the schedule to be listed with its run');
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({
        scheduleId,
        projectId: ref.projectId,
        jobId: ref.jobId,
        paused: true,
        spec: { every: '1d', offset: '9h' },
        lastRun: { status: 'COMPLETED', outcome: 'completed' },
      });
    });
  });

  test('list refuses a filter that is not an id', async () => {
    await expect(schedulesOn(h.taskQueue()).list({ projectId: 'x" OR 1=1' })).rejects.toBeInstanceOf(
      InvalidScheduleError,
    );
  });
});

describe('the CLI', () => {
  const cli = runCliOn;

  const fast = ['--initial-interval', '100', '--max-interval', '300', '--settle-window', '2s'];

  test('schedule create, trigger, describe, pause, unpause, list and delete', async () => {
    const ref = uniqueJob();
    h.simulator.addJob(ref);
    const taskQueue = h.taskQueue();
    const worker = await h.worker(taskQueue);
    const base = ['--project', ref.projectId, '--job', ref.jobId, '--prompt', 'Nightly: fix lint'];

    await worker.runUntil(async () => {
      const made = await cli(
        [
          'schedule',
          'create',
          ...base,
          '--cron',
          RARELY,
          '--timezone',
          'Europe/Berlin',
          '--note',
          'from the CLI',
          '--json',
          ...fast,
        ],
        taskQueue,
      );
      expect(made.code).toBe(ExitCode.Ok);
      // The job exists: a worker read it once, and nothing is said about it.
      expect(made.err).not.toContain('job');
      const { scheduleId, workflowIdPrefix, nextRunTimes } = ScheduleCreatedSchema.parse(JSON.parse(made.out));
      created.add(scheduleId);
      expect(scheduleId).toBe(followUpScheduleId({ ...ref, prompt: 'Nightly: fix lint' }));
      expect(nextRunTimes.length).toBeGreaterThan(0);

      const again = await cli(['schedule', 'create', ...base, '--cron', RARELY], taskQueue);
      expect(again.code).toBe(ExitCode.BadInput);
      expect(again.err).toContain(`a schedule with id '${scheduleId}' already exists`);

      const triggered = await cli(['schedule', 'trigger', scheduleId], taskQueue);
      expect(triggered.code).toBe(ExitCode.Ok);
      expect(triggered.out).toContain('overlap skip');

      let view: FollowUpScheduleView | undefined;
      await waitFor(async () => {
        view = ScheduleViewSchema.parse(
          JSON.parse((await cli(['schedule', 'describe', scheduleId, '--json'], taskQueue)).out),
        ) as FollowUpScheduleView;
        return view.recentRuns[0]?.status === 'COMPLETED';
      }, 'the triggered run to complete');
      expect(view?.spec).toEqual({ cron: RARELY, timezone: 'Europe/Berlin' });
      expect(view?.recentRuns[0]?.workflowId.startsWith(`${workflowIdPrefix}-`)).toBe(true);
      expect(view?.recentRuns[0]?.outcome).toBe('completed');

      const text = await cli(['schedule', 'describe', scheduleId], taskQueue);
      expect(text.out).toContain(`cron "${RARELY}" in Europe/Berlin`);
      expect(text.out).toContain('Note: from the CLI');
      expect(text.out).toMatch(/COMPLETED {2}job completed {2}https:\/\/github\.com\/acme\/.+\/pull\/\d+/);

      expect((await cli(['schedule', 'pause', scheduleId, '--note', 'release freeze'], taskQueue)).code).toBe(
        ExitCode.Ok,
      );
      const paused = await cli(['schedule', 'describe', scheduleId], taskQueue);
      expect(paused.out).toContain(`Schedule ${scheduleId}: PAUSED`);
      expect(paused.out).toContain('Paused because: release freeze');
      expect(paused.out).toContain('Note: from the CLI');
      expect((await cli(['schedule', 'unpause', scheduleId], taskQueue)).code).toBe(ExitCode.Ok);
      expect((await cli(['schedule', 'describe', scheduleId], taskQueue)).out).toContain(
        `Schedule ${scheduleId}: active`,
      );
      // --reason, the word people reach for, is taken as --note (it used to suggest --version).
      const pausedJson = await cli(['schedule', 'pause', scheduleId, '--reason', 'team offsite', '--json'], taskQueue);
      expect(ScheduleActionSchema.parse(JSON.parse(pausedJson.out))).toEqual({ scheduleId, action: 'paused' });
      expect((await cli(['schedule', 'describe', scheduleId], taskQueue)).out).toContain(
        'Paused because: team offsite',
      );
      expect((await cli(['schedule', 'unpause', scheduleId], taskQueue)).code).toBe(ExitCode.Ok);

      // The list comes from visibility, which learns of the unpause a moment after `describe` does.
      const listedAs = async () =>
        ScheduleListSchema.parse(
          JSON.parse((await cli(['schedule', 'list', '--project', ref.projectId, '--json'], taskQueue)).out),
        ).find((entry) => entry.scheduleId === scheduleId);
      await waitFor(async () => (await listedAs())?.paused === false, 'the schedule to be listed, active');
      // A header, and every column starting where its title does. Each list is a new read of visibility, which may
      // still answer from before the unpause once more: the table is read until it says active too.
      let listed: string[] = [];
      const rowOf = (lines: string[]) => lines.find((line) => line.startsWith(scheduleId)) ?? '';
      await waitFor(async () => {
        listed = (await cli(['schedule', 'list', '--project', ref.projectId], taskQueue)).out.trimEnd().split('\n');
        return rowOf(listed).includes('  active');
      }, 'the table to list the schedule active');
      expect(listed[0]).toMatch(/^SCHEDULE +STATE +PROJECT\/JOB +WHEN +NEXT RUN +LAST RUN$/);
      const row = rowOf(listed);
      for (const [title, cell] of [
        ['STATE', 'active'],
        ['PROJECT/JOB', `${ref.projectId}/${ref.jobId}`],
        ['WHEN', 'cron'],
      ] as const) {
        expect({ title, at: row.indexOf(`  ${cell}`) + 2 }).toEqual({ title, at: listed[0]!.indexOf(title) });
      }

      const deleted = await cli(['schedule', 'delete', scheduleId, '--json'], taskQueue);
      expect(deleted.code).toBe(ExitCode.Ok);
      expect(ScheduleActionSchema.parse(JSON.parse(deleted.out))).toEqual({
        scheduleId,
        action: 'deleted',
        runningWorkflowIds: [],
      });
      const gone = await cli(['schedule', 'describe', scheduleId], taskQueue);
      expect(gone.code).toBe(ExitCode.BadInput);
      expect(gone.err).toContain(`no schedule with id '${scheduleId}'`);
    });
  });

  test('schedule create warns when the job does not exist (a worker reads it once: the CLI has no key) and creates the schedule', async () => {
    const ref = uniqueJob();
    const taskQueue = h.taskQueue();
    const worker = await h.worker(taskQueue);
    const { made, unchecked } = await worker.runUntil(async () => ({
      made: await cli(
        ['schedule', 'create', '--project', ref.projectId, '--job', ref.jobId, '--prompt', 'Weekly', '--cron', RARELY],
        taskQueue,
      ),
      unchecked: await cli(
        [
          'schedule',
          'create',
          '--project',
          ref.projectId,
          '--job',
          ref.jobId,
          '--prompt',
          'Other',
          '--cron',
          RARELY,
          '--no-job-check',
        ],
        taskQueue,
      ),
    }));
    expect(made.code).toBe(ExitCode.Ok);
    expect(made.err).toMatch(
      /^warning: the job does not exist \(AgentJobNotFound: .*\)\. The schedule is created anyway; each run will fail the same way until the job exists/,
    );
    const scheduleId = /Created schedule (\S+)/.exec(made.out)?.[1] as string;
    created.add(scheduleId);
    created.add(/Created schedule (\S+)/.exec(unchecked.out)?.[1] as string);
    expect(unchecked.err).toBe('');
  });

  test("a cron expression the server refuses exits 2 with the server's reason and the accepted forms", async () => {
    const run = await cli(
      ['schedule', 'create', '--project', 'p', '--job', uniqueJob().jobId, '--prompt', 'x', '--cron', '0 9 * *'],
      h.taskQueue(),
    );
    expect(run.code).toBe(ExitCode.BadInput);
    expect(run.err).toContain("Temporal refused the cron expression '0 9 * *': CronString does not have 5-7 fields");
    expect(run.err).toContain('Use 5 fields');
  });

  test.each([
    [['schedule'], /Usage: agent-followup schedule/],
    [['schedule', 'launch'], /unknown command 'launch'/],
    [['schedule', 'create', '--project', 'p', '--job', 'j', '--prompt', 'x'], /give either cron .* or every/],
    [
      ['schedule', 'create', '--project', 'p', '--job', 'j', '--prompt', 'x', '--cron', '* * * * * * *'],
      /more often than once a minute are refused/,
    ],
    [
      ['schedule', 'create', '--project', 'p', '--job', 'j', '--prompt', 'x', '--every', '5s'],
      /every must be between 1m and 366d/,
    ],
    [
      [
        'schedule',
        'create',
        '--project',
        'p',
        '--job',
        'j',
        '--prompt',
        'x',
        '--cron',
        '@daily',
        '--timezone',
        'Nowhere/Land',
      ],
      /timezone is not a known IANA time zone/,
    ],
    [
      [
        'schedule',
        'create',
        '--project',
        'p',
        '--job',
        'j',
        '--prompt',
        'x',
        '--cron',
        '@daily',
        '--overlap',
        'allow-all',
      ],
      /overlap must be one of skip, buffer-one/,
    ],
    [
      ['schedule', 'create', '--project', 'p', '--job', 'a/b', '--prompt', 'x', '--cron', '@daily'],
      /input\.jobId may contain only/,
    ],
    [['schedule', 'create', '--job', 'j', '--prompt', 'x', '--cron', '@daily'], /missing --project/],
    [['schedule', 'describe'], /missing required argument 'scheduleId'/],
    [['schedule', 'trigger', 'a', 'b'], /too many arguments for 'trigger'/],
  ])('bad input %j exits 2 with a clear message and never connects', async (args, message) => {
    const run = await cli(args, 'unused');
    expect(run.code).toBe(ExitCode.BadInput);
    expect(run.err).toMatch(message);
    expect(run.connected).toBe(false);
  });

  test.each(['describe', 'pause', 'unpause', 'trigger', 'delete'])(
    'schedule %s of an unknown id exits 2 and says so',
    async (command) => {
      const run = await cli(['schedule', command, 'followup-schedule-no-such-thing'], 'unused');
      expect(run.code).toBe(ExitCode.BadInput);
      expect(run.err).toContain("no schedule with id 'followup-schedule-no-such-thing'");
    },
  );

  test('--help shows the schedule commands', async () => {
    const run = await cli(['schedule', '--help'], 'unused');
    expect(run.code).toBe(ExitCode.Ok);
    for (const command of ['create', 'list', 'describe', 'pause', 'unpause', 'trigger', 'delete'])
      expect(run.out).toMatch(new RegExp(`\\n  ${command} `));
  });
});
