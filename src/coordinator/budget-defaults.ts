/**
 * budgetDefaultsWorkflow: the namespace's default send budget per project, set with `budget set --sends-per-hour N`
 * (no `--project`) and kept durably: one workflow, id `agent-followup-project/*`, that holds the number and shows it
 * in its memo, where workers and `budget show` read it (cached briefly) when a follow-up checks in. A project's own budget wins over
 * it; without it, the workers' AGENT_SENDS_PER_PROJECT_PER_HOUR applies. It runs until the default is cleared.
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  setHandler,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import { DEFAULT_BUDGET_MEMO_KEY } from '../kernel/workflow-ids';
import { setBudgetSignal } from './messages';
import { checkBudgetRequest as checkSetBudget, type BudgetRequest } from '../kernel/send-budget-rule';

/** Keeps the default budget; ends when it is set back to null (the workers' setting). */
export async function budgetDefaultsWorkflow(start: BudgetRequest = { sendsPerHour: null }): Promise<void> {
  let budget: BudgetRequest = validOrNull(start);
  let changed = true;
  // The coordinators' own `setBudget`: one message sets a budget, the project's or (here) the default.
  setHandler(setBudgetSignal, (update) => {
    // Only a budget by the CLI's rule or an explicit null changes it: a malformed signal must not clear the default.
    const checked = checkSetBudget(update);
    if (typeof checked === 'string')
      return void log.warn('Ignored a setBudget signal to the budget defaults', { problem: checked });
    budget = checked;
    changed = true;
  });
  for (;;) {
    if (changed) {
      changed = false;
      upsertMemo({ [DEFAULT_BUDGET_MEMO_KEY]: budget.sendsPerHour });
    }
    if (budget.sendsPerHour === null) return;
    if (workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof budgetDefaultsWorkflow>(budget);
    }
    await condition(() => changed);
  }
}

function validOrNull(value: unknown): BudgetRequest {
  const checked = checkSetBudget(value);
  return typeof checked === 'string' ? { sendsPerHour: null } : checked;
}
