/**
 * A job watcher's "Current details" in the Web UI, for an operator who opens it from the default list: what it serves,
 * how full it is and what to do when it is full. Pure: workflow code imports it. A watcher that reads by its own timers
 * also says its last turn of reads (they are its own state: setting the details writes no history); a long reader's
 * reads are per follow-up, in `agent-followup status` and its pending activity. Either says the live figures of the
 * follow-ups someone asked about (`watchFigures`, an Update the Web UI sends too) while that ask lasts, first.
 */
import type { SharedWatchFigures } from './watch-figures';

/** The live figures of one wait someone asked about, and until when the ask lasts. */
export interface AskedFigures {
  workflowId: string;
  untilMs: number;
  figures: SharedWatchFigures;
}

export interface WatcherFigures {
  /** The follow-ups' task queue it serves (servedTaskQueue of the queue it runs on). */
  taskQueue: string;
  waits: number;
  bookBytes: number;
  limitBytes: number;
  /** Waits refused this run because the book was full. */
  refused: number;
  /** It reads by its own timers (a small book); false: one long activity reads (absent: not said). */
  readsByTimers?: boolean;
  /** Its last turn of reads by timers, and when the next one is due (null: none planned). */
  lastTurn?: TurnSummary | null;
  nextTurnAtMs?: number | null;
  /** The waits whose live figures are asked for now, the latest ask first. */
  asked?: AskedFigures[];
}

/** Asked-about waits shown: the panel has room for about four lines. */
const ASKED_SHOWN = 2;

/** One turn of reads: when it ended, and what the reads found. */
export interface TurnSummary {
  atMs: number;
  /** Reads by the status found; failed reads under `failed`. */
  found: Record<string, number>;
}

export function renderWatcherDetails(figures: WatcherFigures): string {
  const { taskQueue, waits, bookBytes, limitBytes, refused, readsByTimers } = figures;
  // Room in waits, from the average size of those held.
  const room = waits > 0 ? Math.max(0, Math.floor((limitBytes - bookBytes) / (bookBytes / waits))) : null;
  const watcher = `job watcher for task queue \`${taskQueue}\`: ${plural(waits, 'waiting follow-up')}`;
  // The UI shows this in a short fixed-height panel (about four lines): the health and where to look, nothing more.
  const headline =
    refused > 0
      ? `**Full** ${watcher}; ${plural(refused, 'wait')} refused this run, taken by the next watcher of its shard ` +
        '(this id with `/1` added, then `/2`, ...): nothing to change.'
      : room === null
        ? `**Idle** ${watcher}; it ends after 10 minutes without waits.`
        : `**Healthy** ${watcher}, room for about ${room} more (${percent(bookBytes, limitBytes)} of its book used).`;
  const where = `A follow-up's reads: \`agent-followup status <id>\`, or this watcher's Update \`watchFigures\` with \`"<id>"\`; the reading: ${readsByTimers === false ? 'Pending Activities, its figures in the heartbeat details' : 'turns in History'}`;
  // With a turn to tell, one paragraph of three sentences: the panel's renderer lets no list follow a paragraph
  // directly, and a blank line more would push the last one out of the panel.
  const body =
    readsByTimers !== false && figures.lastTurn
      ? [headline, turnLine(figures.lastTurn, figures.nextTurnAtMs ?? null), `${where}.`].join('\n')
      : [headline, '', `- ${where}`].join('\n');
  const asked = figures.asked ?? [];
  if (asked.length === 0) return body;
  // What the person asked for comes first, in a paragraph of its own: the panel cuts off what does not fit.
  const lines = asked.slice(0, ASKED_SHOWN).map(askedLine);
  if (asked.length > ASKED_SHOWN) lines.push(`(and ${asked.length - ASKED_SHOWN} more asked about)`);
  return [lines.join('\n'), '', body].join('\n');
}

function askedLine({ workflowId, untilMs, figures }: AskedFigures): string {
  const { reads, lastRead, failing, nextReadAt } = figures;
  const count = reads === null ? 'no read reported yet' : plural(reads, 'read');
  const last = lastRead === null ? '' : `, the last ${isoClock(lastRead.at)} UTC (\`${lastRead.status ?? 'failed'}\`)`;
  const failingNow =
    failing === null
      ? ''
      : `; reads failing since ${isoClock(failing.since)} UTC (${plural(failing.failedReads, 'failed read')}: ` +
        `${failing.lastError.slice(0, 80)})`;
  const next = nextReadAt === null ? 'no read planned before its deadline' : `next ${isoClock(nextReadAt)} UTC`;
  return (
    `**Live figures** of \`${workflowId}\` (asked until ${utcClock(untilMs)} UTC): ${count}${last}${failingNow}; ` +
    `${next}.`
  );
}

function isoClock(iso: string): string {
  return iso.slice(11, 19);
}

function turnLine(turn: TurnSummary, nextAtMs: number | null): string {
  const entries = Object.entries(turn.found);
  const reads = entries.reduce((sum, [, count]) => sum + count, 0);
  const found = entries.map(([status, count]) => `${count} ${status}`).join(', ');
  const next = nextAtMs === null ? 'none planned next' : `next ${utcClock(nextAtMs)} UTC`;
  return `Last turn ${utcClock(turn.atMs)} UTC: ${plural(reads, 'job')} read (${found}); ${next}.`;
}

function utcClock(ms: number): string {
  return new Date(ms).toISOString().slice(11, 19);
}

function percent(part: number, whole: number): string {
  return `${Math.min(100, Math.round((part / whole) * 100))}%`;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
