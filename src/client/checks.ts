/** The client's checks of what a caller passes, made before anything starts: input, workflow id, budget. */
import { sendBudgetProblem } from '../kernel/send-budget-rule';
import { reservedWorkflowIdProblem } from '../workflows/follow-up/workflow-id-owner';
import { invalidField, InvalidFollowUpInputError, ReservedWorkflowIdError } from './errors';
import {
  createFollowUpInputSchema,
  DEFAULT_MAX_PROMPT_LENGTH,
  formatInputProblems,
  inputProblems,
  type FollowUpRequest,
} from './input';

/** Throws ReservedWorkflowIdError when no follow-up may run under `workflowId`; checks nothing else. */
export function checkFollowUpWorkflowId(workflowId: string): void {
  if (reservedWorkflowIdProblem(workflowId) !== undefined) throw new ReservedWorkflowIdError(workflowId);
}

/** Checks input without starting anything; throws InvalidFollowUpInputError naming every bad field. */
export function checkFollowUpInput(
  input: unknown,
  maxPromptLength: number = DEFAULT_MAX_PROMPT_LENGTH,
): FollowUpRequest {
  if (!Number.isInteger(maxPromptLength) || maxPromptLength < 1) {
    throw invalidField(
      'maxPromptLength',
      `maxPromptLength must be a whole number of at least 1 (got ${maxPromptLength})`,
    );
  }
  const result = createFollowUpInputSchema(Math.min(maxPromptLength, DEFAULT_MAX_PROMPT_LENGTH)).safeParse(input);
  if (!result.success) {
    throw new InvalidFollowUpInputError(
      `Invalid follow-up input: ${formatInputProblems(result.error)}`,
      inputProblems(result.error, Math.min(maxPromptLength, DEFAULT_MAX_PROMPT_LENGTH)),
    );
  }
  return result.data;
}

/** AGENT_FOLLOWUP_MAX_PROMPT_LENGTH when set (a positive whole number, else an error), the default otherwise. */
export function maxPromptLengthFromEnv(env: Record<string, string | undefined>): number {
  const raw = env.AGENT_FOLLOWUP_MAX_PROMPT_LENGTH;
  if (raw === undefined || raw === '') return DEFAULT_MAX_PROMPT_LENGTH;
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || value < 1) {
    throw invalidField(
      'AGENT_FOLLOWUP_MAX_PROMPT_LENGTH',
      `AGENT_FOLLOWUP_MAX_PROMPT_LENGTH must be a whole number of at least 1 (got '${raw}')`,
    );
  }
  return value;
}

/** How a budget is set: `aboveVendorLimit` says a budget above the vendor's documented 100 per hour is meant. */
export interface BudgetOptions {
  aboveVendorLimit?: boolean;
}

export function checkBudget(sendsPerHour: number | null, { aboveVendorLimit = false }: BudgetOptions): void {
  if (sendsPerHour === null) return;
  const problem = sendBudgetProblem(sendsPerHour, aboveVendorLimit, '{ aboveVendorLimit: true }');
  if (problem) throw invalidField('sendsPerHour', `sendsPerHour ${sendsPerHour} ${problem}`);
}
