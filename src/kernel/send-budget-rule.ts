/**
 * What a send budget may be, wherever one is set (the CLI, the library, the workers' environment): a whole number in
 * plain decimal, at least 1, and at most the vendor's documented limit unless the caller says its plan allows more.
 * Pure: the client, the CLI, the config and the workflows share it.
 */
import { isObject } from './message-checks';

/** The vendor's documented limit: 100 uses (creating a job and sending a message) per project per hour. */
export const VENDOR_SENDS_PER_PROJECT_PER_HOUR = 100;

/**
 * The vendor allows 100 uses per project per hour, and creating a job counts too: 80 sends leaves a fifth of the
 * budget to whatever else uses the project (the dashboard, other tools), so our follow-ups never make those fail.
 */
export const DEFAULT_SENDS_PER_PROJECT_PER_HOUR = 80;

/** `raw` as a whole number when it is one in plain decimal digits (no sign, exponent, hex, spaces or fraction). */
export function plainWholeNumber(raw: string): number | undefined {
  return /^[0-9]+$/.test(raw) ? Number(raw) : undefined;
}

/**
 * Why `sendsPerHour` cannot be a budget (undefined: it can). `aboveVendorLimit`: the caller's plan allows more than the
 * vendor's documented 100, so a budget above it is meant, not a slip that turns sends into 429s.
 */
export function sendBudgetProblem(sendsPerHour: number, aboveVendorLimit: boolean, flag: string): string | undefined {
  if (!Number.isSafeInteger(sendsPerHour) || sendsPerHour < 1) return 'must be a whole number of at least 1';
  if (sendsPerHour > VENDOR_SENDS_PER_PROJECT_PER_HOUR && !aboveVendorLimit) {
    return (
      `is above the vendor's documented limit of ${VENDOR_SENDS_PER_PROJECT_PER_HOUR} uses per project per hour (creating ` +
      `jobs counts too): past it the API answers 429 and sends wait. If your plan allows more, say so with ${flag}`
    );
  }
  return undefined;
}

/** A budget as `budget set` sends it: sends per hour, or null for the workers' default, and its allow flag. */
export interface BudgetRequest {
  sendsPerHour: number | null;
  /** The caller's plan allows more than the vendor's 100 per hour (the CLI's `--above-vendor-limit`). */
  aboveVendorLimit?: true;
}

/**
 * A `setBudget` as a workflow takes it (a coordinator's, or the budget defaults'), or what is wrong with it: the CLI's
 * rule, checked again here because anyone can send the signal by name: a whole number of at least 1, at most the
 * vendor's 100 per hour unless the signal itself carries `aboveVendorLimit: true`. A test's short window takes its
 * figure from the workers' settings, never from a signal.
 */
export function checkBudgetRequest(value: unknown): BudgetRequest | string {
  if (!isObject(value)) return 'a budget must be an object { sendsPerHour, aboveVendorLimit? }';
  const { sendsPerHour, aboveVendorLimit } = value;
  if (aboveVendorLimit !== undefined && aboveVendorLimit !== true) return 'aboveVendorLimit must be true or absent';
  if (sendsPerHour === null) return { sendsPerHour };
  if (typeof sendsPerHour !== 'number') return 'sendsPerHour must be a number or null';
  const problem = sendBudgetProblem(sendsPerHour, aboveVendorLimit === true, 'aboveVendorLimit: true');
  if (problem) return `sendsPerHour ${sendsPerHour} ${problem}`;
  return { sendsPerHour, ...(aboveVendorLimit ? { aboveVendorLimit } : {}) };
}
