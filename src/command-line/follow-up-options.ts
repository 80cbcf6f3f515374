/** The options that make a follow-up's input, shared by `send` and `schedule create`, and the input they build. */
import { closeSync, openSync, readSync } from 'node:fs';
import type { Command } from 'commander';
import type { FollowUpInput } from '../index';
import { DEFAULT_MAX_PROMPT_LENGTH } from '../index';
import { UsageError } from './io';

export interface FollowUpInputOptions {
  project?: string;
  job?: string;
  prompt?: string;
  promptFile?: string;
  initialInterval?: string;
  backoffCoefficient?: string;
  maxInterval?: string;
  timeout?: string;
  settleWindow?: string;
  onAmbiguousSend?: string;
  notifyUrl?: string;
}

const DURATION = '"5s", "2m", "1h"; a bare number is milliseconds';

export function addFollowUpInputOptions(command: Command): Command {
  return command
    .option('--project <id>', 'the agent project id')
    .option('--job <id>', 'the agent job id')
    .option('--prompt <text>', 'the follow-up instruction (at least 1 character)')
    .option('--prompt-file <path>', 'read the instruction from a file instead of --prompt')
    .option('--initial-interval <duration>', `first wait between polls (default 5s; ${DURATION})`)
    .option('--backoff-coefficient <n>', 'growth of the wait after each poll (default 2)')
    .option('--max-interval <duration>', 'longest wait between polls (default 60s)')
    .option('--timeout <duration>', 'give up after this long (default 24h)')
    .option(
      '--settle-window <duration>',
      'how long an unchanged terminal status must stand after the send to count (default 30s)',
    )
    .option('--notify-url <url>', 'POST a signed callback there when the follow-up ends (docs/LIBRARY.md, "Callbacks")')
    .option(
      '--on-ambiguous-send <policy>',
      'reconcile (default) | retry | fail: when a send may or may not have arrived',
    );
}

/**
 * The error for words the command line left over. With the prompt given they are most likely the rest of an unquoted
 * prompt; without it, values typed in place (`send p j "..."`), so the hint names the options they belong to.
 */
export function strayArgumentError(extra: string[], options: FollowUpInputOptions, quoteAlso = ''): UsageError {
  const words = extra.map((word) => `'${word}'`).join(' ');
  if (options.prompt !== undefined || options.promptFile !== undefined) {
    return new UsageError(`unexpected argument ${words} (quote the prompt${quoteAlso}: --prompt "...")`);
  }
  return new UsageError(
    `unexpected argument ${words}: the project, job and prompt are options (--project ID --job ID --prompt "...")`,
  );
}

/** Durations stay as typed ("10s" is sent as "10s", so messages and the Web UI echo it); digits are milliseconds. */
function durationValue(value: string): string | number {
  return /^\d+$/.test(value) ? Number(value) : value;
}

/**
 * The prompt in a file, read no further than the longest prompt allowed could need (4 bytes a character): a file past
 * that is refused without reading it whole, so `--prompt-file /dev/zero` or a mistaken log file costs nothing.
 */
export function readPromptFile(path: string, maxCharacters: number = DEFAULT_MAX_PROMPT_LENGTH): string {
  const maxBytes = maxCharacters * 4;
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    throw new UsageError(
      `cannot read --prompt-file ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
  try {
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (;;) {
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
      if (length > maxBytes) {
        throw new UsageError(
          `--prompt-file ${path} is longer than any prompt may be (${maxCharacters.toLocaleString('en-US')} characters): give a shorter file, or the part of it to send`,
        );
      }
    }
    return buffer.toString('utf8', 0, length);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(
      `cannot read --prompt-file ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  } finally {
    closeSync(fd);
  }
}

/** The follow-up input the options describe; the input's own rules are checked by the caller (checkFollowUpInput of the library). */
export function buildInput(options: FollowUpInputOptions): FollowUpInput {
  if (options.prompt !== undefined && options.promptFile !== undefined)
    throw new UsageError('give --prompt or --prompt-file, not both');
  let prompt = options.prompt;
  if (options.promptFile !== undefined) {
    prompt = readPromptFile(options.promptFile);
  }
  const polling: Record<string, string | number> = {};
  if (options.initialInterval !== undefined) polling.initialInterval = durationValue(options.initialInterval);
  if (options.maxInterval !== undefined) polling.maxInterval = durationValue(options.maxInterval);
  if (options.timeout !== undefined) polling.timeout = durationValue(options.timeout);
  if (options.settleWindow !== undefined) polling.settleWindow = durationValue(options.settleWindow);
  if (options.backoffCoefficient !== undefined) {
    const number = Number(options.backoffCoefficient);
    if (options.backoffCoefficient.trim() === '' || Number.isNaN(number)) {
      throw new UsageError(`--backoff-coefficient must be a number (got '${options.backoffCoefficient}')`);
    }
    polling.backoffCoefficient = number;
  }
  const missing = (['project', 'job'] as const)
    .filter((name) => options[name] === undefined)
    .map((name) => `--${name}`);
  if (prompt === undefined) missing.push('--prompt (or --prompt-file)');
  if (missing.length > 0) throw new UsageError(`missing ${missing.join(', ')} (see --help)`);
  return {
    projectId: options.project as string,
    jobId: options.job as string,
    prompt: prompt as string,
    ...(Object.keys(polling).length > 0 ? { polling: polling as FollowUpInput['polling'] } : {}),
    ...(options.notifyUrl !== undefined ? { notify: { url: options.notifyUrl } } : {}),
    ...(options.onAmbiguousSend !== undefined
      ? { onAmbiguousSend: options.onAmbiguousSend as FollowUpInput['onAmbiguousSend'] }
      : {}),
  };
}

/** Leaves out the fields an option did not set, so a request only holds what was asked for. */
export function definedOnly<T extends Record<string, unknown>>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter((entry) => entry[1] !== undefined)) as Partial<T>;
}
