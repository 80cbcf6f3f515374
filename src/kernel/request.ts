/**
 * The rules for a follow-up's input, and the workflow's own check of it. Pure and free of zod: the workflow must
 * refuse bad input from any starter (another SDK, `temporal workflow start`, the Web UI) without carrying a schema
 * library in every cached workflow. The client validates the same rules with zod before anything starts (input.ts);
 * a unit test runs both over one table so they never drift apart.
 */
import { literalHostProblem } from './address-class';
import { formatMs, parseDuration } from './duration';

/** Defaults suit a real agent run, which takes minutes. */
export const DEFAULT_POLLING = {
  initialIntervalMs: 5_000,
  backoffCoefficient: 2,
  maxIntervalMs: 60_000,
  timeoutMs: 24 * 60 * 60 * 1000,
  settleWindowMs: 30_000,
} as const;

/** The vendor gives no maximum (docs/VENDOR-CONTRACT.md, "Errors and limits"); this keeps a prompt far below Temporal's 2 MiB payload limit. */
export const DEFAULT_MAX_PROMPT_LENGTH = 100_000;

export const LIMITS = {
  intervalMs: [100, 24 * 60 * 60 * 1000],
  timeoutMs: [1_000, 30 * 24 * 60 * 60 * 1000],
  settleWindowMs: [0, 60 * 60 * 1000],
  backoffCoefficient: [1, 10],
  idLength: 200,
} as const;

export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;
export const ID_RULE =
  "may contain only letters, digits, '.', '_', ':' and '-', and must start with a letter or digit " +
  '(no slashes, spaces, unicode or control characters)';

/**
 * What to do when a send failed in a way that leaves open whether the API took the message (README, "Never sending
 * twice"): read the job and decide (`reconcile`), send again and rely on the Idempotency-Key (`retry`), or stop with
 * `FollowUpDeliveryUnknown` (`fail`).
 */
export const AMBIGUOUS_SEND_POLICIES = ['reconcile', 'retry', 'fail'] as const;
export type AmbiguousSendPolicy = (typeof AMBIGUOUS_SEND_POLICIES)[number];

export const INPUT_FIELDS = ['projectId', 'jobId', 'prompt', 'polling', 'onAmbiguousSend', 'notify'] as const;
export const POLLING_FIELDS = [
  'initialInterval',
  'backoffCoefficient',
  'maxInterval',
  'timeout',
  'settleWindow',
] as const;

/** Polling options with every default applied, in milliseconds. */
export interface ResolvedPolling {
  initialIntervalMs: number;
  backoffCoefficient: number;
  maxIntervalMs: number;
  timeoutMs: number;
  /** How long after the send an unchanged terminal status counts, when the job was never seen `active`. */
  settleWindowMs: number;
}

/** A checked follow-up: what the workflow works from. */
export interface FollowUpRequest {
  projectId: string;
  jobId: string;
  prompt: string;
  polling: ResolvedPolling;
  onAmbiguousSend: AmbiguousSendPolicy;
  /** Where a signed callback goes when the follow-up ends (null: none). */
  notify: { url: string } | null;
}

/** The longest callback URL taken. */
export const MAX_NOTIFY_URL_LENGTH = 2_048;

/**
 * The problem with a callback target, or undefined. The form, and a host that names a place no callback may go (an
 * internal address literal, a cloud metadata name: kernel/address-class.ts), so such a start is refused before anything
 * runs. The worker that posts checks the rest at every connection: names by the addresses they resolve to, loopback
 * and plain http:// by its settings.
 */
export function notifyProblem(value: unknown): string | undefined {
  if (!isPlainObject(value)) return 'notify must be an object { url }';
  const extra = unknownFields(value, ['url']);
  if (extra.length > 0)
    return `notify: unknown field(s) ${extra.map((key) => JSON.stringify(key)).join(', ')}; allowed: url`;
  const url = value.url;
  if (typeof url !== 'string') return 'notify.url must be a string';
  if (url.length > MAX_NOTIFY_URL_LENGTH) return `notify.url must be at most ${MAX_NOTIFY_URL_LENGTH} characters`;
  const match = /^(https?):\/\/([^/?#\s]+)([/?#]\S*)?$/i.exec(url);
  if (!match) return 'notify.url must be an absolute http:// or https:// URL without spaces';
  const authority = match[2] as string;
  if (authority.includes('@')) return 'notify.url must not contain credentials (the body is signed instead)';
  const host = authority.startsWith('[') ? authority.slice(0, authority.indexOf(']') + 1) : authority.split(':')[0];
  if (!host) return 'notify.url must name a host';
  return literalHostProblem(host, 'notify.url');
}

/** One thing wrong with an input: the field (dotted path, or `input` for the whole) and a message that names it. */
export interface InputProblem {
  field: string;
  message: string;
}

export type InputCheck = { ok: true; request: FollowUpRequest } | { ok: false; problems: InputProblem[] };

/** The problem with an id, or undefined. */
export function identifierProblem(name: string, value: unknown): string | undefined {
  if (value === undefined) return `${name} is required`;
  if (typeof value !== 'string') return `${name} must be a string`;
  if (value === '') return `${name} must not be empty`;
  if (value.length > LIMITS.idLength) return `${name} must be at most ${LIMITS.idLength} characters`;
  if (!ID_PATTERN.test(value)) return `${name} ${ID_RULE}`;
  return undefined;
}

/** The problem with a prompt, or undefined. */
export function promptProblem(value: unknown, maxLength: number = DEFAULT_MAX_PROMPT_LENGTH): string | undefined {
  if (value === undefined) return 'prompt is required';
  if (typeof value !== 'string') return 'prompt must be a string';
  if (value.length === 0) return 'prompt must not be empty (the API needs at least 1 character)';
  if (value.length > maxLength) return `prompt must be at most ${maxLength} characters`;
  if (value.trim().length === 0) return 'prompt must contain more than white space';
  return undefined;
}

/** A duration within [min, max], or the problem with it. */
export function durationCheck(
  name: string,
  value: unknown,
  [min, max]: readonly [number, number],
): { ms: number } | { problem: string } {
  const millis = parseDuration(value);
  if (millis === undefined) {
    return {
      problem: `${name} is not a duration: ${JSON.stringify(value)}; use a form such as "5s", "10m", "2h" or a number of milliseconds`,
    };
  }
  if (millis < min || millis > max) {
    // A bare number is milliseconds: when it would fit as seconds, "5" was most likely meant as seconds, so say so.
    const meantSeconds = typeof value === 'number' && value * 1000 >= min && value * 1000 <= max;
    const got = meantSeconds
      ? `${value}, a number of milliseconds: write "${value}s" for seconds`
      : JSON.stringify(value);
    return { problem: `${name} must be between ${formatMs(min)} and ${formatMs(max)} (got ${got})` };
  }
  return { ms: Math.round(millis) };
}

/** The problem with a backoff coefficient, or undefined. */
export function coefficientProblem(value: unknown): string | undefined {
  const [min, max] = LIMITS.backoffCoefficient;
  if (typeof value !== 'number' || !Number.isFinite(value)) return 'polling.backoffCoefficient must be a number';
  if (value < min) return `polling.backoffCoefficient must be at least ${min} (1 means a fixed interval)`;
  if (value > max) return `polling.backoffCoefficient must be at most ${max}`;
  return undefined;
}

function unknownFields(value: Record<string, unknown>, allowed: readonly string[]): string[] {
  return Object.keys(value).filter((key) => !allowed.includes(key));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Checks a follow-up's input and applies the defaults; every problem is listed, each naming its field. Never throws (the
 * workflow and the CLI decide what a problem means); the library's `checkFollowUpInput` throws InvalidFollowUpInputError.
 */
/** The polling options resolved over the defaults; each problem noted with its field. */
function inspectPolling(given: unknown, note: (field: string, message: string | undefined) => void): ResolvedPolling {
  const polling: ResolvedPolling = { ...DEFAULT_POLLING };
  if (given === undefined) return polling;
  if (!isPlainObject(given)) {
    note('polling', 'polling must be an object');
    return polling;
  }
  const extraPolling = unknownFields(given, POLLING_FIELDS);
  if (extraPolling.length > 0) {
    note(
      'polling',
      `polling: unknown field(s) ${extraPolling.map((key) => JSON.stringify(key)).join(', ')}; allowed: ${POLLING_FIELDS.join(', ')}`,
    );
  }
  const durations = [
    ['initialInterval', 'initialIntervalMs', LIMITS.intervalMs],
    ['maxInterval', 'maxIntervalMs', LIMITS.intervalMs],
    ['timeout', 'timeoutMs', LIMITS.timeoutMs],
    ['settleWindow', 'settleWindowMs', LIMITS.settleWindowMs],
  ] as const;
  for (const [field, key, range] of durations) {
    if (given[field] === undefined) continue;
    const checked = durationCheck(`polling.${field}`, given[field], range);
    if ('problem' in checked) note(`polling.${field}`, checked.problem);
    else polling[key] = checked.ms;
  }
  if (given.backoffCoefficient !== undefined) {
    const problem = coefficientProblem(given.backoffCoefficient);
    if (problem) note('polling.backoffCoefficient', problem);
    else polling.backoffCoefficient = given.backoffCoefficient as number;
  }
  if (polling.maxIntervalMs < polling.initialIntervalMs) {
    note('polling.maxInterval', maxBelowInitialProblem(polling.maxIntervalMs, polling.initialIntervalMs));
  }
  return polling;
}

export function inspectFollowUpInput(raw: unknown, maxPromptLength: number = DEFAULT_MAX_PROMPT_LENGTH): InputCheck {
  if (!isPlainObject(raw)) {
    return {
      ok: false,
      problems: [{ field: 'input', message: 'input must be a JSON object with projectId, jobId and prompt' }],
    };
  }
  const problems: InputProblem[] = [];
  const note = (field: string, message: string | undefined) => {
    if (message !== undefined) problems.push({ field, message });
  };
  const extra = unknownFields(raw, INPUT_FIELDS);
  if (extra.length > 0)
    note(
      'input',
      `input: unknown field(s) ${extra.map((key) => JSON.stringify(key)).join(', ')}; allowed: ${INPUT_FIELDS.join(', ')}`,
    );
  note('projectId', identifierProblem('projectId', raw.projectId));
  note('jobId', identifierProblem('jobId', raw.jobId));
  note('prompt', promptProblem(raw.prompt, maxPromptLength));
  if (raw.notify !== undefined)
    note(isPlainObject(raw.notify) && 'url' in raw.notify ? 'notify.url' : 'notify', notifyProblem(raw.notify));
  if (
    raw.onAmbiguousSend !== undefined &&
    !AMBIGUOUS_SEND_POLICIES.includes(raw.onAmbiguousSend as AmbiguousSendPolicy)
  ) {
    note('onAmbiguousSend', `onAmbiguousSend must be one of ${AMBIGUOUS_SEND_POLICIES.join(', ')}`);
  }
  const polling = inspectPolling(raw.polling, note);
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    request: {
      projectId: raw.projectId as string,
      jobId: raw.jobId as string,
      prompt: raw.prompt as string,
      polling,
      onAmbiguousSend: (raw.onAmbiguousSend as AmbiguousSendPolicy | undefined) ?? 'reconcile',
      notify: raw.notify === undefined ? null : { url: (raw.notify as { url: string }).url },
    },
  };
}

/** Every problem in one line: "projectId is required; polling.timeout must be ...". */
export function describeProblems(problems: readonly InputProblem[]): string {
  return problems.map((problem) => problem.message).join('; ');
}

export function maxBelowInitialProblem(maxMs: number, initialMs: number): string {
  return `polling.maxInterval (${formatMs(maxMs)}) must not be below polling.initialInterval (${formatMs(initialMs)})`;
}

/** A duration as Temporal spells it ("5s", "10m", "1.5h") or a number of milliseconds. */
export type DurationInput = string | number;

/** How often and how long to poll the job (all optional; docs/LIBRARY.md, "The input"). */
export interface PollingOptions {
  initialInterval?: DurationInput;
  backoffCoefficient?: number;
  maxInterval?: DurationInput;
  timeout?: DurationInput;
  settleWindow?: DurationInput;
}

/** What a caller passes to start a follow-up. */
export interface FollowUpInput {
  projectId: string;
  jobId: string;
  prompt: string;
  polling?: PollingOptions;
  onAmbiguousSend?: AmbiguousSendPolicy;
  /** A signed callback when the follow-up ends, whatever the outcome (docs/LIBRARY.md, "Callbacks"). */
  notify?: { url: string };
}
