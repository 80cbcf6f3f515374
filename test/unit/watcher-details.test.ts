import { renderWatcherDetails } from '../../src/watch/watcher-details';
import { servedTaskQueue, watcherTaskQueue } from '../../src/kernel/workflow-ids';

const base = { taskQueue: 'agent-followup', waits: 10, bookBytes: 5_000, limitBytes: 1_000_000, refused: 0 };

test('a healthy watcher says what it serves and its room in waits, not in bytes', () => {
  const lines = renderWatcherDetails(base).split('\n');
  expect(lines[0]).toBe(
    '**Healthy** job watcher for task queue `agent-followup`: 10 waiting follow-ups, room for about 1990 more (1% of ' +
      'its book used).',
  );
  expect(lines[2]).toContain('the reading: turns in History');
  expect(lines).toHaveLength(3);
  expect(renderWatcherDetails({ ...base, readsByTimers: false })).toContain(
    'the reading: Pending Activities, its figures in the heartbeat details',
  );
  expect(servedTaskQueue(watcherTaskQueue('team-a/follow-ups'))).toBe('team-a/follow-ups');
  // 500 bytes a wait, 995,000 bytes left: 1,990 waits.
  expect(lines.join('\n')).not.toMatch(/KiB|book \d/);
});

test('a full watcher says so in bold, and where the refused waits went', () => {
  const text = renderWatcherDetails({ ...base, refused: 3, bookBytes: 1_000_000 });
  expect(text).toContain(
    '**Full** job watcher for task queue `agent-followup`: 10 waiting follow-ups; 3 waits refused this run, taken by ' +
      'the next watcher of its shard (this id with `/1` added, then `/2`, ...): nothing to change.',
  );
  expect(text).not.toContain('Healthy');
});

test('an idle watcher says it will end by itself', () => {
  expect(renderWatcherDetails({ ...base, waits: 0, bookBytes: 0 }).split('\n')[0]).toBe(
    '**Idle** job watcher for task queue `agent-followup`: 0 waiting follow-ups; it ends after 10 minutes without waits.',
  );
  expect(renderWatcherDetails({ ...base, waits: 1, bookBytes: 500 }).split('\n')[0]).toContain(
    ': 1 waiting follow-up,',
  );
});

test('a watcher reading by its timers says its last turn: when, what the reads found, and when the next is due', () => {
  const at = Date.UTC(2026, 10, 29, 16, 50, 12);
  const lines = renderWatcherDetails({
    ...base,
    readsByTimers: true,
    lastTurn: { atMs: at, found: { active: 18, failed: 2 } },
    nextTurnAtMs: at + 60_000,
  }).split('\n');
  // One paragraph, in place of the blank line and the list: the panel shows about four lines.
  expect(lines[1]).toBe('Last turn 16:50:12 UTC: 20 jobs read (18 active, 2 failed); next 16:51:12 UTC.');
  expect(lines[2]).toContain('the reading: turns in History');
  expect(lines).toHaveLength(3);
  // The long reader's reads are per follow-up: no turn line, whatever it was given.
  const long = renderWatcherDetails({ ...base, readsByTimers: false, lastTurn: { atMs: at, found: { active: 1 } } });
  expect(long).not.toContain('Last turn');
  expect(
    renderWatcherDetails({ ...base, lastTurn: { atMs: at, found: { completed: 1 } }, nextTurnAtMs: null }),
  ).toContain('1 job read (1 completed); none planned next.');
});

test('the follow-ups someone asked about come first, with their reads, the last read and the next, while asked', () => {
  const at = Date.UTC(2026, 11, 3, 10, 52, 1);
  const figures = {
    watchedSince: new Date(at - 60_000).toISOString(),
    lastRead: { at: new Date(at).toISOString(), status: 'active' },
    reads: 7,
    failing: null,
    nextReadAt: new Date(at + 30_000).toISOString(),
  };
  const text = renderWatcherDetails({
    ...base,
    readsByTimers: false,
    asked: [{ workflowId: 'agent-followup/p/j/1', untilMs: at + 29_000, figures }],
  });
  const [first, blank, headline] = text.split('\n');
  expect(first).toBe(
    '**Live figures** of `agent-followup/p/j/1` (asked until 10:52:30 UTC): 7 reads, the last 10:52:01 UTC (`active`); ' +
      'next 10:52:31 UTC.',
  );
  expect(blank).toBe('');
  expect(headline).toMatch(/^\*\*Healthy\*\*/);
  // Without an ask, nothing of it.
  expect(renderWatcherDetails({ ...base, readsByTimers: false, asked: [] })).not.toContain('Live figures');

  const failing = {
    ...figures,
    reads: null,
    lastRead: null,
    failing: { since: new Date(at - 5_000).toISOString(), failedReads: 3, lastError: 'HTTP 500: boom' },
    nextReadAt: null,
  };
  const many = renderWatcherDetails({
    ...base,
    asked: [1, 2, 3].map((n) => ({ workflowId: `f/${n}`, untilMs: at, figures: n === 1 ? failing : figures })),
  }).split('\n');
  expect(many[0]).toBe(
    '**Live figures** of `f/1` (asked until 10:52:01 UTC): no read reported yet; reads failing since 10:51:56 UTC ' +
      '(3 failed reads: HTTP 500: boom); no read planned before its deadline.',
  );
  expect(many[1]).toContain('`f/2`');
  // The panel has room for about four lines: two asks, then how many more.
  expect(many[2]).toBe('(and 1 more asked about)');
});
