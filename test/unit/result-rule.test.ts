import type { JobState } from '../../src/kernel/agent-job';
import { isNews, SEEN_STATES_KEPT, withSeen, type ResultRule } from '../../src/kernel/result-rule';
import { readSucceeded, ReaderBook } from '../../src/watch/reader-book';
import { defaultSchedule, watchRegistration } from '../support/watch-fixtures';

const state = (status: string, prLink: string | null = null): JobState => ({ status, prLink, archivedAt: null });
const before = state('completed', 'pr/1');
const active = state('active');
const SENT = 1_800_000_000_000;
// The follow-up has seen the job turn active after its send: the old result read again proves nothing by itself.
const rule: ResultRule = {
  baseline: before,
  sentAtMs: SENT,
  settleWindowMs: 30_000,
  sawActive: true,
  seen: [before, active],
};
const fresh = { previous: null, sawActive: false };

describe('isNews: what a reader tells a follow-up whose wait carries the result rule', () => {
  test('a state the follow-up has not seen since the send is news', () => {
    expect(isNews(rule, state('completed', 'pr/2'), SENT + 5_000, fresh)).toBe(true);
    expect(isNews(rule, state('queued'), SENT + 5_000, fresh)).toBe(true);
  });

  test('back in a state seen: not news, unless it is the result by the follow-up’s own judgement', () => {
    expect(isNews(rule, active, SENT + 5_000, fresh)).toBe(false);
    // The old result once, after `active`: possibly a lagging replica.
    expect(isNews(rule, before, SENT + 5_000, { previous: active, sawActive: false })).toBe(false);
    // The old result twice in a row by this reader: the agent ended without changing anything.
    expect(isNews(rule, before, SENT + 6_000, { previous: before, sawActive: false })).toBe(true);
    // A reader that lost its memory knows no read before: never takes one read for two.
    expect(isNews(rule, before, SENT + 6_000, fresh)).toBe(false);
  });

  test('before the settle window, only a read the reader saw `active` lets the old result count', () => {
    const settling: ResultRule = { ...rule, sawActive: false, seen: [before] };
    expect(isNews(settling, before, SENT + 5_000, { previous: before, sawActive: false })).toBe(false);
    expect(isNews(settling, before, SENT + 5_000, { previous: before, sawActive: true })).toBe(true);
    expect(isNews(settling, before, SENT + 31_000, { previous: before, sawActive: false })).toBe(true);
  });
});

test('withSeen keeps the baseline first, each state once, and at most SEEN_STATES_KEPT', () => {
  expect(withSeen([before], active)).toEqual([before, active]);
  expect(withSeen([before, active], { ...active })).toEqual([before, active]);
  let seen = [before];
  for (let n = 0; n < 20; n += 1) seen = withSeen(seen, state(`s${n}`));
  expect(seen).toHaveLength(SEEN_STATES_KEPT);
  expect(seen[0]).toEqual(before);
  expect(seen.at(-1)).toEqual(state('s19'));
});

test('a watcher’s reader tells a job flapping between seen states nothing, and tells its end', () => {
  const book = new ReaderBook();
  const schedule = defaultSchedule(SENT);
  const registration = watchRegistration(schedule, { known: active, acceptUnchangedFromMs: null, result: rule });
  book.apply({ version: 1, full: true, upserts: [registration], removed: [], refused: [] }, SENT);
  const wait = book.get(registration.workflowId)!;
  const job = (s: JobState) => ({ id: 'j', ...s });
  let at = SENT + 1_000;
  const told: boolean[] = [];
  for (let read = 0; read < 100; read += 1) {
    told.push(readSucceeded(wait, job(read % 2 === 0 ? before : active), at, at).answer);
    at += 1_000;
  }
  expect(told.filter(Boolean)).toHaveLength(0);
  const end = readSucceeded(wait, job(state('completed', 'pr/2')), at, at);
  expect(end).toEqual({ answer: true, recovered: false, previous: active });
});

test('a watcher’s reader tells the old result read twice in a row, with the read before it', () => {
  const book = new ReaderBook();
  const registration = watchRegistration(defaultSchedule(SENT), {
    known: active,
    acceptUnchangedFromMs: null,
    result: rule,
  });
  book.apply({ version: 1, full: true, upserts: [registration], removed: [], refused: [] }, SENT);
  const wait = book.get(registration.workflowId)!;
  expect(readSucceeded(wait, { id: 'j', ...before }, SENT + 1_000, SENT + 1_000).answer).toBe(false);
  expect(readSucceeded(wait, { id: 'j', ...before }, SENT + 2_000, SENT + 2_000)).toEqual({
    answer: true,
    recovered: false,
    previous: before,
  });
});

test('without the rule (the first wait after a send) every change is told, as before', () => {
  const book = new ReaderBook();
  const registration = watchRegistration(defaultSchedule(SENT), { known: active, acceptUnchangedFromMs: null });
  book.apply({ version: 1, full: true, upserts: [registration], removed: [], refused: [] }, SENT);
  expect(
    readSucceeded(book.get(registration.workflowId)!, { id: 'j', ...before }, SENT + 1_000, SENT + 1_000).answer,
  ).toBe(true);
});
