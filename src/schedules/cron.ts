/**
 * Cron expressions checked against the syntax Temporal's scheduler accepts, so a typo is reported field by field
 * before a schedule is created (Temporal itself only answers "Invalid schedule spec").
 */

interface CronFieldRule {
  name: string;
  min: number;
  max: number;
  /** Names accepted by prefix, with the value of the first one and the shortest prefix Temporal accepts. */
  names?: { list: readonly string[]; first: number; minPrefix: number };
}

const MONTH_NAMES = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const DAY_NAMES = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

const SECOND: CronFieldRule = { name: 'second', min: 0, max: 59 };
const MINUTE: CronFieldRule = { name: 'minute', min: 0, max: 59 };
const HOUR: CronFieldRule = { name: 'hour', min: 0, max: 23 };
const DAY_OF_MONTH: CronFieldRule = { name: 'day-of-month', min: 1, max: 31 };
const MONTH: CronFieldRule = { name: 'month', min: 1, max: 12, names: { list: MONTH_NAMES, first: 1, minPrefix: 3 } };
// 7 is Sunday as well as 0, as in most crons.
const DAY_OF_WEEK: CronFieldRule = { name: 'day-of-week', min: 0, max: 7, names: { list: DAY_NAMES, first: 0, minPrefix: 2 } };
// Temporal's calendar only knows these years.
const YEAR: CronFieldRule = { name: 'year', min: 2000, max: 2100 };

const CRON_LAYOUTS: Record<number, CronFieldRule[]> = {
  5: [MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK],
  6: [MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK, YEAR],
  7: [SECOND, MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK, YEAR],
};

const CRON_SHORTHANDS = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'];

/**
 * Checks a cron expression against the syntax Temporal's scheduler accepts (`*`, values, names, `a-b`, `/step`,
 * lists), so a typo is reported field by field before anything is created. Returns the problems; empty when valid.
 */
export function cronExpressionProblems(expression: string): string[] {
  const text = expression.split('#')[0]?.trim() ?? '';
  if (text === '') return ['is empty; use a form such as "0 9 * * MON-FRI" or @daily'];
  if (/^(CRON_)?TZ=/.test(text)) return ['must not carry its own time zone (TZ=/CRON_TZ=); give timezone instead'];
  if (text.startsWith('@every')) return ['@every is not accepted here; give every (and offset) instead'];
  if (text.startsWith('@')) {
    return CRON_SHORTHANDS.includes(text) ? [] : [`unknown shorthand '${text}'; use one of ${CRON_SHORTHANDS.join(', ')}`];
  }
  const fields = text.split(/\s+/);
  const layout = CRON_LAYOUTS[fields.length];
  if (!layout) {
    return [
      `has ${fields.length} field(s); use 5 (minute hour day-of-month month day-of-week), 6 (… year) or 7 (second … year)`,
    ];
  }
  const problems = layout.flatMap((rule, index) => cronFieldProblems(fields[index] as string, rule));
  if (layout[0] === SECOND && !/^\d+$/.test(fields[0] as string)) {
    problems.push('the second field must be one value such as 0: follow-ups more often than once a minute are refused');
  }
  return problems;
}

function cronFieldProblems(field: string, rule: CronFieldRule): string[] {
  const problems: string[] = [];
  for (const part of field.split(',')) {
    const problem = cronPartProblem(part, rule);
    if (problem) problems.push(`the ${rule.name} field '${field}' ${problem}`);
  }
  return problems;
}

function cronPartProblem(part: string, rule: CronFieldRule): string | undefined {
  if (part === '') return 'has an empty list item';
  // Quartz-style extensions: '?', last day (L, 5L), nearest weekday (15W, LW).
  if (part.includes('?') || /^(\d*L|\d+W|LW)$/i.test(part)) {
    return `uses '${part}' (L, W and ? are Quartz extensions Temporal does not support); use '*', values, ranges and steps`;
  }
  const pieces = part.split('/');
  if (pieces.length > 2) return `has more than one '/' in '${part}'`;
  const [range, step] = pieces as [string, string | undefined];
  if (step !== undefined && !(/^\d+$/.test(step) && Number(step) >= 1)) return `has a step '${step}' that is not a whole number of at least 1`;
  if (range === '*') return undefined;
  const bounds = range.split('-');
  if (bounds.length > 2) return `has a malformed range '${range}'`;
  const values: number[] = [];
  for (const bound of bounds) {
    const value = cronValue(bound, rule);
    if (value === undefined) {
      const names = rule.names ? ` or a ${rule.name === 'month' ? 'month' : 'day'} name such as ${rule.names.list[1]?.slice(0, 3).toUpperCase()}` : '';
      return `has '${bound}', which is not a number${names}`;
    }
    if (value < rule.min || value > rule.max) return `has ${bound}, outside ${rule.min}–${rule.max}`;
    values.push(value);
  }
  if (values.length === 2 && (values[1] as number) < (values[0] as number)) return `has a range '${range}' that ends before it starts`;
  return undefined;
}

function cronValue(text: string, rule: CronFieldRule): number | undefined {
  if (/^\d+$/.test(text)) return Number(text);
  const names = rule.names;
  if (!names || text.length < names.minPrefix || !/^[A-Za-z]+$/.test(text)) return undefined;
  const index = names.list.findIndex((name) => name.startsWith(text.toLowerCase()));
  return index < 0 ? undefined : index + names.first;
}
