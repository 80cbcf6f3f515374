/**
 * budgetDefaultsWorkflow: the namespace's default send budget per project, set with `budget set --sends-per-hour N`
 * (no `--project`) and kept durably: one workflow, id `agent-followup-project/*`, that holds the number and shows it
 * in its memo, where workers read it (cached briefly) when a follow-up checks in. A project's own budget wins over
 * it; without it, the workers' AGENT_SENDS_PER_PROJECT_PER_HOUR applies. It runs until the default is cleared.
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  setHandler,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import { DEFAULT_BUDGET_MEMO_KEY } from '../../kernel/workflow-ids';
import { defaultBudgetQuery, setDefaultBudgetSignal } from './messages';

/** Keeps the default budget; ends when it is set back to null (the workers' setting). */
export async function budgetDefaultsWorkflow(
  start: { sendsPerHour: number | null } = { sendsPerHour: null },
): Promise<void> {
  let sendsPerHour = validOrNull(start?.sendsPerHour);
  let changed = true;
  setHandler(setDefaultBudgetSignal, (update) => {
    sendsPerHour = validOrNull(update?.sendsPerHour);
    changed = true;
  });
  setHandler(defaultBudgetQuery, () => ({ sendsPerHour }));
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
