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
import { DEFAULT_BUDGET_MEMO_KEY } from '../../kernel/workflow-ids';
import { setDefaultBudgetSignal } from './messages';

/** Keeps the default budget; ends when it is set back to null (the workers' setting). */
export async function budgetDefaultsWorkflow(
  start: { sendsPerHour: number | null } = { sendsPerHour: null },
): Promise<void> {
  let sendsPerHour = validOrNull(start?.sendsPerHour);
  let changed = true;
  setHandler(setDefaultBudgetSignal, (update) => {
    // Only a budget or an explicit null changes it: a malformed signal must not clear the namespace's default.
    const value = (update as { sendsPerHour?: unknown } | null)?.sendsPerHour;
    if (value !== null && validOrNull(value) === null)
      return void log.warn('Ignored a malformed setDefaultBudget signal');
    sendsPerHour = validOrNull(value);
    changed = true;
  });
  for (;;) {
    if (changed) {
      changed = false;
      upsertMemo({ [DEFAULT_BUDGET_MEMO_KEY]: sendsPerHour });
    }
    if (sendsPerHour === null) return;
    if (workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof budgetDefaultsWorkflow>({ sendsPerHour });
    }
    await condition(() => changed);
  }
}

function validOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 ? value : null;
}
