/**
 * Our policy on cron text. The syntax itself is Temporal's to check: the server refuses a malformed expression when
 * the schedule is created, and that refusal reaches the caller as an InvalidScheduleError (exit 2 in the CLI).
 * What the server would accept but we do not: a time zone inside the text (it is its own option, so `describe`
 * shows it), `@every` (that is `every`), and a seconds field that fires more than once a minute.
 */

/** Temporal's 7-field form starts with seconds: `second minute hour day-of-month month day-of-week year`. */
const FIELDS_WITH_SECONDS = 7;

/** The problems with a cron expression under our policy; empty when it may be sent to Temporal. */
export function cronPolicyProblems(expression: string): string[] {
  const text = expression.split('#')[0]?.trim() ?? '';
  if (text === '') return ['is empty; use a form such as "0 9 * * MON-FRI" or @daily'];
  if (/^(CRON_)?TZ=/.test(text)) return ['must not carry its own time zone (TZ=/CRON_TZ=); give timezone instead'];
  if (text.startsWith('@every')) return ['@every is not accepted here; give every (and offset) instead'];
  const fields = text.split(/\s+/);
  if (fields.length === FIELDS_WITH_SECONDS && !/^\d+$/.test(fields[0] as string)) {
    return ['the second field must be one value such as 0: follow-ups more often than once a minute are refused'];
  }
  return [];
}
